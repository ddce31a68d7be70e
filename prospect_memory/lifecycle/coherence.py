"""What an import's records must say of each other, once all are read (a file can be edited
and given a new checksum): each refusal names the line and the field of the record."""

from __future__ import annotations

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Entry
from prospect_memory.lifecycle.lines import ImportRefused


def aliases_answer_for_live_entries(
    aliases: list[tuple[str, str, str, int]], layers: dict[str, str], statuses: dict[str, str]
) -> None:
    """An alias (its id, the entry it names, its layer, its line) answers for another, live
    entry of its own layer: never for itself or another alias (a circle)."""
    for alias, target, layer, number in aliases:
        if target == alias:
            problem = "alias_of names the entry itself; an alias answers for another entry."
        elif layers.get(target) != layer:
            problem = (
                f"alias_of names an entry of another layer than its own ({layer}); an alias "
                "answers for an entry of its layer."
            )
        elif statuses[target] != Entry.Status.LIVE:
            problem = (
                f"alias_of names an entry that is {statuses[target]}, not live; an alias "
                "answers for a live entry (never for another alias)."
            )
        else:
            continue
        raise ImportRefused(f"entry record: {problem}", line=number, field="alias_of")


def kept_versions_fit(kept: dict[str, dict[int, int]], versions_of: dict[str, int]) -> None:
    """An entry keeps at most HISTORY_VERSIONS versions (by number, with their lines), each
    older than the entry itself."""
    most = business_settings.HISTORY_VERSIONS
    for entry, numbers in kept.items():
        current = versions_of.get(entry)
        newest = max(numbers)
        if current is not None and newest >= current:
            raise ImportRefused(
                f"entry_version record: version {newest} of entry {entry} is not older than "
                f"the entry's own version {current}.",
                line=numbers[newest],
                field="version",
            )
        if len(numbers) > most:
            raise ImportRefused(
                f"entry_version record: entry {entry} has {len(numbers)} kept versions; Kit "
                f"keeps the {most} newest of an entry.",
                line=sorted(numbers.values())[most],
                field="version",
            )


def notes_keep_to_their_company(
    named: list[tuple[int, str, str, list[str]]], companies: dict[str, str]
) -> None:
    """A note replaced by a note, and the notes a compaction names (each: the record's line,
    its company, the field, the notes), are of the record's own company: a restore would
    otherwise move notes between dossiers, past their cap."""
    for line, domain, field, notes in named:
        for note in notes:
            other = companies.get(note)
            if other is not None and other != domain:
                raise ImportRefused(
                    f"{field} names note {note} of {other}; a record of {domain} names notes "
                    f"of {domain} only.",
                    line=line,
                    field=field,
                )
