"""Reading one entry by key (counting the access), and an entry's kept versions."""

from __future__ import annotations

from outreach.access import Actor
from outreach.validation import FieldProblems
from pgstatements import run_one
from prospect_memory.business.access import entry_for_actor, read_layer
from prospect_memory.business.models import (
    EntryVersion,
    Layer,
)
from prospect_memory.business.records import (
    EntryView,
    Recall,
    VersionView,
    source_of,
)
from prospect_memory.business.rules import (
    clean_choice,
    clean_key,
)
from prospect_memory.business.selectors.statements import (
    AFTER_VIEW,
    read_statements,
    readable,
    view_from_row,
)


def entry_recall(
    *, actor: Actor, key: object, layer: object = "merged", include_history: bool = False
) -> Recall:
    """One entry by key (``merged``: the member's wins), counting the access."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    layer = read_layer(layer, problems)
    problems.raise_if_any()
    rows = run_one(read_statements()["recall"], {**readable(actor, layer), "key": key})
    if not rows:
        return Recall(found=False, history=[] if include_history else None)
    alias = rows[0][AFTER_VIEW]
    view = view_from_row(rows[0])
    if alias is not None:  # answered under the key asked, saying which entry it stands for
        view.alias_of, view.key = view.key, alias
    history = entry_history_views(actor, view.id) if include_history else None
    return Recall(found=True, entry=view, history=history)


def entry_history_views(
    actor: Actor, entry_id: str, *, only: tuple[int, ...] | None = None
) -> list[VersionView]:
    """An entry's kept versions, newest first (``only``: just those)."""
    versions = (
        EntryVersion.objects.filter(account=actor.account, entry_id=entry_id)
        .select_related("oauth_application")
        .order_by("-version")
    )
    if only is not None:
        versions = versions.filter(version__in=only)
    return [
        VersionView(
            version=v.version,
            value_json=v.value_json,
            category=v.category,
            confidence=v.confidence,
            source=source_of(v),
            strategy=v.strategy,
            written_by=v.written_by_label,
            oauth_client=v.oauth_application.name if v.oauth_application else None,
            written_at=v.written_at,
            flags=v.flags,
        )
        for v in versions
    ]


def entry_history(
    *, actor: Actor, key: object, layer: object = Layer.ACCOUNT
) -> tuple[EntryView, list[VersionView]]:
    """An entry and its kept versions, newest first (no access is counted)."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    layer = clean_choice(layer, (Layer.ACCOUNT, Layer.MEMBER), "layer", problems)
    problems.raise_if_any()
    entry = entry_for_actor(actor, layer=layer, key=key)
    return EntryView.of(entry), entry_history_views(actor, str(entry.pk))
