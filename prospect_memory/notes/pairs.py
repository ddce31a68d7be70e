"""The overlap pairs a recall reports, and what each process keeps of them.

The pairs are the notes among a company's newest (``OVERLAP_PAIR_WINDOW``) whose vectors
of the current model lie within its overlap distance. Computing them compares every two
notes of the window (190 distances for 20 notes): half of what a recall asked of the
database. So a process keeps, for each company it recalled, the pairs it computed and the
version of each note they were computed from: its id, row version (``xmin`` and
``ctid``, which any update of the row changes, within one transaction too: a vector made,
remade or cleared, a status, a flag) and the table's file (which ``VACUUM FULL`` and
``CLUSTER``, which keep ``xmin`` but renumber ``ctid``, change), given only to a note
with a vector of the model.
The statement is sent those versions. When the window's are the same, it compares
nothing; when they differ (a change made in any process), it compares only the pairs
with a note whose version it was not sent (one note's 19 after a save, every pair for a
process that kept nothing) and answers with the window's versions, from which the kept
pairs still true are taken: both notes still in the window, unchanged.

What a process keeps is keyed by account, company, model, threshold and window (a hit
needs the same account's same rows: versions name note ids; the model and threshold are
checked again on use), bounded (``OVERLAP_PAIRS_KEPT``, the least recently used dropped
first, one account holding at most half), and only where there was something to compare
(two notes with vectors or more). It holds ids, versions and distances, never a note's
text; what an erasure removed stays here, unreachable, until it is dropped. A kept pair
is served until one of its two notes changes: after a history that forked (a failover to
a standby that lost commits, a point-in-time restore), restart the web processes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import NamedTuple

from prospect_memory.core.embeddings import get_provider
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.kept import Places
from prospect_memory.notes.models import Dossier, Note
from prospect_memory.notes.rules import ACTIVE_IN_DOSSIER, IN_ITS_DOSSIER, NEWEST_FIRST


class Key(NamedTuple):
    """What one company's pairs are kept under in a process."""

    account: int
    domain: str
    model: str
    threshold: float
    window: int


Pair = tuple[float, str, str, dict]


@dataclass(frozen=True, slots=True)
class Kept:
    """The pairs of one company's window as this process last computed them: as a recall
    gives them, made once (read, never changed), and each one's distance unrounded."""

    model: str
    threshold: float
    versions: str  # the window's, as the statement joins them (``%(known)s``)
    answer: list[dict]  # nearest first
    # The same pairs as (unrounded distance, first id, second id, answer's dict): in the
    # statement's order, as a merge sorts them.
    ordered: list[Pair]


@cache
def pairs_statement() -> str:
    """Whether the window's versions are ``%(known)s``, and, unless they are, the pairs
    not yet known (those with a note whose version is not in it; every pair when it is
    NULL) and the window's versions, on the first row. Every row says whether they were
    known; without pairs there is one row with none.

    Only one model's vectors are compared: a note whose vector is not ready, or of another
    model, is in the window but has no version here. Vectors are read only when the window
    changed (a one-time filter), from where the window found their rows (``ctid``: no
    index to descend, the same row versions in the statement's snapshot), each distance
    computed once, between each note whose version was not sent and every other note (19
    after a save, where going through every two notes would look at 190; the subquery is
    kept whole by its OFFSET), compared with the threshold, and ordered by distance, then
    by the ids as UUIDs (named through the subquery, not the output's text columns); each
    is given rounded to the answer's 4 decimals too, where that costs least.
    """
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    return f"""
    WITH recent AS MATERIALIZED (
        SELECT n.id, n.ctid,
               CASE WHEN n.embedding_status = %(ready)s AND n.embedding_model = %(model)s
                    THEN n.id::text || ':' || n.xmin::text || n.ctid::text || '@'
                         || (SELECT pg_relation_filenode('{note}'::regclass))::text
                    END AS version
          FROM {note} n
          JOIN {dossier} d ON {IN_ITS_DOSSIER}
         WHERE {ACTIVE_IN_DOSSIER}
         ORDER BY {NEWEST_FIRST}
         LIMIT %(window)s
    ), window_versions AS MATERIALIZED (
        SELECT string_agg(version, ' ' ORDER BY version) AS versions,
               (string_agg(version, ' ' ORDER BY version) = %(known)s::text) IS TRUE AS same
          FROM recent
    ), vectors AS MATERIALIZED (
        SELECT n.id, n.embedding,
               COALESCE(strpos(' ' || %(known)s::text || ' ', ' ' || r.version || ' ') > 0,
                        false) AS known
          FROM recent r
          JOIN {note} n ON n.ctid = r.ctid
         WHERE n.account_id = %(account)s AND r.version IS NOT NULL
           AND NOT (SELECT same FROM window_versions)
    )
    SELECT CASE WHEN NOT w.same
                 AND row_number() OVER (ORDER BY pair.distance, pair.a, pair.b) = 1
                THEN w.versions END,
           w.same, pair.a::text, pair.b::text, pair.distance,
           round(pair.distance * 10000) / 10000
      FROM window_versions w
      LEFT JOIN (
          SELECT compared.a, compared.b, compared.distance
            FROM (SELECT least(a.id, b.id) AS a, greatest(a.id, b.id) AS b,
                         a.embedding <=> b.embedding AS distance
                    FROM vectors a JOIN vectors b
                      ON b.id <> a.id AND (b.known OR a.id < b.id)
                   WHERE NOT a.known
                  OFFSET 0) compared
           WHERE compared.distance <= %(threshold)s
      ) pair ON true
     ORDER BY pair.distance, pair.a, pair.b
    """  # noqa: S608  (names from the models, values are parameters)


def company_key(account_id: int, domain: str) -> Key:
    """The key of a company's pairs under the provider's model and threshold and the
    window of the settings, as recall keeps them."""
    provider = get_provider()
    return Key(
        account_id,
        domain,
        provider.model,
        provider.overlap_distance,
        notes_settings.OVERLAP_PAIR_WINDOW,
    )


# As the statement orders them: UUIDs in their text form sort as they do in PostgreSQL.
_NEAREST_FIRST = itemgetter(0, 1, 2)
_kept: Places[Key, Kept] = Places()  # one place each, the least recently used first
_lock = threading.Lock()


def kept_for(key: Key) -> Kept | None:
    """What this process last computed for ``key``'s window, if anything."""
    return _kept.get(key)


def known_versions(key: Key, kept: Kept | None) -> str | None:
    """The versions to send with :func:`pairs_statement` (``%(known)s``): those whose
    pairs ``kept`` holds, if it was computed under the key's model and threshold."""
    if kept is None or (kept.model, kept.threshold) != (key.model, key.threshold):
        return None
    return kept.versions


def answer_and_keep(key: Key, kept: Kept | None, rows: list[tuple]) -> list[dict]:
    """The answer's pairs from the rows of :func:`pairs_statement` sent with
    :func:`known_versions` of ``kept``: those kept when the window is the same; else the
    kept pairs still true (both notes in the window, unchanged) with those just computed,
    which are kept in their place."""
    if known_versions(key, kept) is None:
        kept = None
    if rows[0][1] and kept is not None:
        with _lock:
            _kept.to_the_end(key)
        return list(kept.answer)
    versions = next((row[0] for row in rows if row[0] is not None), "")
    ids: dict[str, str] = {}  # each id kept once, however many pairs name it
    # (distance, first id, second id, the pair as answered): the statement's order.
    ordered: list[Pair] = []
    for _, _, a, b, distance, shown in rows:
        if a is not None:
            a, b = ids.setdefault(a, a), ids.setdefault(b, b)
            ordered.append((distance, a, b, {"note_ids": [a, b], "distance": shown}))
    if kept is not None:
        # The kept pairs still true are taken as they are, not made again: two runs in
        # order, which one sort merges.
        same_versions = set(versions.split()).intersection(kept.versions.split())
        unchanged = {version.partition(":")[0] for version in same_versions}
        ordered += [pair for pair in kept.ordered if pair[1] in unchanged and pair[2] in unchanged]
        ordered.sort(key=_NEAREST_FIRST)
    computed = Kept(key.model, key.threshold, versions, [pair[3] for pair in ordered], ordered)
    limit = notes_settings.OVERLAP_PAIRS_KEPT
    with _lock:
        # Fewer than two vectors: nothing a kept answer would save.
        if versions.count(" ") >= 1 and limit > 0:
            _kept.put(key, computed, 1, limit)  # in place of what the key kept
        else:
            _kept.drop(key)
    return list(computed.answer)


def forget_note(key: Key, note_id: str) -> None:
    """Keep nothing of one note of ``key``'s window: the next recall computes its pairs
    against the others, as after a change to it (tests, benchmarks)."""
    with _lock:
        kept = _kept.get(key)
        if kept is not None:
            # Its version becomes one no row has: the window is never the kept one again,
            # and no kept pair with the note is taken, whether it stays in the window or not.
            versions = [
                f"{note_id}:forgotten" if version.partition(":")[0] == note_id else version
                for version in kept.versions.split()
            ]
            _kept.replace(
                key, Kept(kept.model, kept.threshold, " ".join(versions), kept.answer, kept.ordered)
            )


def forget(key: Key | None = None) -> None:
    """Keep nothing of ``key`` (of any company without one): its next recall computes its
    pairs (tests, benchmarks)."""
    with _lock:
        if key is None:
            _kept.clear()
        else:
            _kept.drop(key)
