"""Reads of prospect memory. Every query filters by the acting account.

Tenant objects are only fetched through the ``*_for_actor`` helpers, which answer "not
found" for anything outside the actor's account, whether it exists elsewhere or not.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Case, FloatField, When
from django.utils.functional import cached_property
from pgvector.django import CosineDistance

from outreach.access import Actor, require_outreach
from outreach.renderers import dumps
from outreach.selectors import Relationship, relationship_from_row, relationship_query
from outreach.sql import run
from prospect_memory.conf import app_settings
from prospect_memory.crypto import keyring
from prospect_memory.domains import resolve_domain
from prospect_memory.errors import NotFound
from prospect_memory.models import Compaction, Note, note_plaintext
from prospect_memory.rules import utc_today

# Recall is the hot path of every agent run: its notes are read with one hand-written
# statement (no model instances), filtered by account first, served by note_dossier_active.
# NoteView.from_row unpacks its columns in this order.
_RECALL_NOTES_SQL = """
SELECT n.id::text, n.account_id, n.title_ciphertext, n.body_ciphertext, n.source_urls,
       n.observed_at, n.created_at, u.username, a.name
  FROM prospect_memory_note n
  JOIN prospect_memory_dossier d ON d.id = n.dossier_id AND d.account_id = n.account_id
  LEFT JOIN outreach_member m ON m.id = n.member_id
  LEFT JOIN auth_user u ON u.id = m.user_id
  LEFT JOIN oauth2_provider_application a ON a.id = n.oauth_application_id
 WHERE n.account_id = %(account)s AND d.domain = %(domain)s AND n.status = 'active'
 ORDER BY n.observed_at DESC, n.created_at DESC, n.id
"""
# Pairs among the window of newest notes, compared only within one model's vectors.
_RECALL_PAIRS_SQL = """
WITH recent AS (
    SELECT n.id, n.embedding, n.embedding_model, n.embedding_status
      FROM prospect_memory_note n
      JOIN prospect_memory_dossier d ON d.id = n.dossier_id AND d.account_id = n.account_id
     WHERE n.account_id = %(account)s AND d.domain = %(domain)s AND n.status = 'active'
     ORDER BY n.observed_at DESC, n.created_at DESC, n.id
     LIMIT %(window)s
)
SELECT a.id::text, b.id::text, a.embedding <=> b.embedding AS distance
  FROM recent a JOIN recent b ON a.id < b.id
 WHERE a.embedding_status = 'ready' AND b.embedding_status = 'ready'
   AND a.embedding_model = %(model)s AND b.embedding_model = %(model)s
   AND a.embedding <=> b.embedding <= %(threshold)s
 ORDER BY distance, a.id, b.id
"""

# --- access helpers ---------------------------------------------------------------------


def _uuid_or_none(value: object) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        return None


def note_for_actor(actor: Actor, note_id: object, *, lock: bool = False) -> Note:
    """An active note of the actor's account, or NotFound."""
    pk = _uuid_or_none(note_id)
    rows = Note.objects.filter(account=actor.account, status=Note.Status.ACTIVE)
    if lock:
        rows = rows.select_for_update(of=("self",))
    note = rows.select_related("dossier").filter(pk=pk).first() if pk else None
    if note is None:
        raise NotFound(
            f"No note {str(note_id)[:64]!r} in this account. Recall the domain to see the "
            "ids of its notes.",
            details={"note_id": str(note_id)[:64]},
        )
    return note


def compaction_for_actor(actor: Actor, compaction_id: object) -> Compaction:
    pk = _uuid_or_none(compaction_id)
    compaction = (
        Compaction.objects.filter(account=actor.account, pk=pk).select_related("dossier").first()
        if pk
        else None
    )
    if compaction is None:
        raise NotFound(
            f"No compaction {str(compaction_id)[:64]!r} in this account.",
            details={"compaction_id": str(compaction_id)[:64]},
        )
    return compaction


def notes_list(*, actor: Actor, domain: str | None = None, stale: bool | None = None):
    """Active notes of the account, newest observed first, optionally for one domain."""
    require_outreach(actor)
    rows = Note.objects.filter(account=actor.account, status=Note.Status.ACTIVE)
    if domain is not None:
        rows = rows.filter(dossier__domain=resolve_domain(domain).domain)
    if stale is not None:
        cutoff = stale_cutoff()
        rows = (
            rows.filter(observed_at__lt=cutoff) if stale else rows.filter(observed_at__gte=cutoff)
        )
    return rows.select_related("dossier", "member__user", "oauth_application").order_by(
        "-observed_at", "-created_at", "id"
    )


# --- freshness ----------------------------------------------------------------------------


def stale_cutoff(today: date | None = None) -> date:
    """Notes observed before this date are stale (observed more than STALE_AFTER_DAYS ago)."""
    return (today or utc_today()) - timedelta(days=app_settings.STALE_AFTER_DAYS)


def is_stale(observed_at: date, today: date | None = None) -> bool:
    return observed_at < stale_cutoff(today)


# --- views of notes -----------------------------------------------------------------------


@dataclass(frozen=True)
class NoteView:
    """A note as every interface shows it: decrypted, with freshness and attribution."""

    #: The note's UUID as text (recall reads it as text; it is only ever shown or sent).
    id: str
    domain: str
    title: str
    body: str
    source_urls: list[str]
    observed_at: date
    created_at: datetime
    stale: bool
    age_days: int
    member: str | None
    oauth_client: str | None

    @classmethod
    def of(cls, note: Note, *, domain: str, today: date | None = None) -> NoteView:
        today = today or utc_today()
        member = note.member.user.get_username() if note.member_id and note.member else None
        client = (
            note.oauth_application.name
            if note.oauth_application_id and note.oauth_application
            else None
        )
        return cls(
            id=str(note.id),
            domain=domain,
            title=note.title,
            body=note.body,
            source_urls=list(note.source_urls),
            observed_at=note.observed_at,
            created_at=note.created_at,
            stale=is_stale(note.observed_at, today),
            age_days=(today - note.observed_at).days,
            member=member,
            oauth_client=client,
        )

    @classmethod
    def from_row(cls, row: tuple, *, domain: str, today: date, ring, cutoff: date) -> NoteView:
        """From a row of the recall statement (its columns in order), without model instances.

        ``ring`` and ``cutoff`` are looked up once by the caller building many views.
        """
        (note_id, account_id, title_token, body_token, source_urls, observed_at, created_at,
         member, client) = row  # fmt: skip
        return cls(
            id=note_id,
            domain=domain,
            title=note_plaintext(
                account_id=account_id, note_id=note_id, field="title", token=title_token, ring=ring
            ),
            body=note_plaintext(
                account_id=account_id, note_id=note_id, field="body", token=body_token, ring=ring
            ),
            source_urls=source_urls,
            observed_at=observed_at,
            created_at=created_at,
            stale=observed_at < cutoff,
            age_days=(today - observed_at).days,
            member=member,
            oauth_client=client,
        )

    def as_data(self) -> dict:
        return dict(self._data)

    @cached_property
    def _data(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "body": self.body,
            "source_urls": self.source_urls,
            "observed_at": self.observed_at.isoformat(),
            "stale": self.stale,
            "age_days": self.age_days,
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "attribution": {"member": self.member, "oauth_client": self.oauth_client},
        }


# --- overlap --------------------------------------------------------------------------------


@dataclass(frozen=True)
class OverlapPair:
    note_ids: tuple[str, str]
    distance: float


def distance_annotation(vector: list[float] | None, model: str):
    """Cosine distance to ``vector`` for notes embedded by ``model``; NULL for the rest."""
    if vector is None:
        return None
    return Case(
        When(
            embedding_model=model, embedding__isnull=False, then=CosineDistance("embedding", vector)
        ),
        default=None,
        output_field=FloatField(),
    )


# --- recall ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StopReason:
    code: str
    message: str


@dataclass
class Recall:
    domain: str
    address: str | None
    notes: list[NoteView]
    note_count: int
    overlap_pairs: list[OverlapPair]
    relationship: Relationship
    newest_observed_at: date | None = None
    truncated: bool = False
    omitted_note_ids: list[str] = field(default_factory=list)
    ranking: str = "recency"
    stop_reasons: list[StopReason] = field(default_factory=list)

    @property
    def known(self) -> bool:
        return self.note_count > 0

    @property
    def stale(self) -> bool:
        return self.newest_observed_at is None or is_stale(self.newest_observed_at)

    @property
    def compaction_suggested(self) -> bool:
        return self.note_count > app_settings.COMPACTION_SUGGESTED_ABOVE

    @property
    def should_stop(self) -> bool:
        return bool(self.stop_reasons)


def stop_reasons(relationship: Relationship, domain: str) -> list[StopReason]:
    reasons = []
    if relationship.suppressed:
        entries = ", ".join(f"{m.kind} {m.value}" for m in relationship.suppression_matches)
        reasons.append(
            StopReason(
                "suppressed",
                f"{domain} is on this account's suppression list ({entries}); do not contact it.",
            )
        )
    last = relationship.last_reply
    if last and last.sentiment in ("negative", "bounce"):
        reasons.append(
            StopReason(
                f"last_reply_{last.sentiment}",
                f"The last reply from {domain} ({last.received_at.date().isoformat()}, campaign "
                f"'{last.campaign.name}') was {last.sentiment}; do not write to it again.",
            )
        )
    return reasons


def _json_size(value) -> int:
    return len(dumps(value))


def dossier_recall(*, actor: Actor, domain: object, query: str | None = None) -> Recall:
    """What the account knows about a company and whether to contact it at all."""
    require_outreach(actor)
    resolved = resolve_domain(domain)
    account = actor.account
    from prospect_memory.embeddings import get_provider

    provider = get_provider()
    relationship_sql, params = relationship_query(
        account=account, domain=resolved.domain, address=resolved.address
    )
    params.update(
        window=app_settings.OVERLAP_PAIR_WINDOW,
        model=provider.model,
        threshold=provider.overlap_distance,
    )
    # One round trip for the three reads of a recall: relationship, notes, overlap pairs.
    relationship_rows, note_rows, pair_rows = run(
        (relationship_sql, params), (_RECALL_NOTES_SQL, params), (_RECALL_PAIRS_SQL, params)
    )
    relationship = relationship_from_row(relationship_rows[0])
    pairs = [OverlapPair((a, b), float(d)) for a, b, d in pair_rows]
    today = utc_today()
    ring, cutoff = keyring(), stale_cutoff(today)
    views = [
        NoteView.from_row(row, domain=resolved.domain, today=today, ring=ring, cutoff=cutoff)
        for row in note_rows
    ]

    recall = Recall(
        domain=resolved.domain,
        address=resolved.address,
        notes=views,
        note_count=len(views),
        overlap_pairs=pairs,
        relationship=relationship,
        newest_observed_at=views[0].observed_at if views else None,
        stop_reasons=stop_reasons(relationship, resolved.domain),
    )
    _apply_payload_cap(recall, account, query)
    return recall


def _apply_payload_cap(recall: Recall, account, query: str | None) -> None:
    """Above RECALL_PAYLOAD_MAX_BYTES keep the best-ranked notes that fit, newest first."""
    cap = app_settings.RECALL_PAYLOAD_MAX_BYTES
    if _json_size([v._data for v in recall.notes]) <= cap:
        return
    sizes = {v.id: _json_size(v._data) for v in recall.notes}
    ranked = [v.id for v in recall.notes]  # recency
    if query and query.strip():
        from prospect_memory.embedding_budget import embed_within_budget

        embedded = embed_within_budget(query.strip(), query=True)
        if embedded.vector is not None:
            distances = {
                str(note_id): distance
                for note_id, distance in Note.objects.filter(id__in=ranked, account=account)
                .annotate(distance=distance_annotation(embedded.vector, embedded.model))
                .values_list("id", "distance")
            }
            order = {note_id: i for i, note_id in enumerate(ranked)}
            ranked.sort(key=lambda i: (distances.get(i) is None, distances.get(i) or 0.0, order[i]))
            recall.ranking = "query"
    kept: set[uuid.UUID] = set()
    budget = cap
    for note_id in ranked:
        if sizes[note_id] <= budget:
            kept.add(note_id)
            budget -= sizes[note_id]
    recall.omitted_note_ids = [v.id for v in recall.notes if v.id not in kept]
    recall.notes = [v for v in recall.notes if v.id in kept]
    recall.truncated = True


def recall_data(recall: Recall) -> dict:
    rel = recall.relationship
    last = rel.last_reply

    def campaign(c):
        return {"id": c.id, "name": c.name, "locale": c.locale, "status": c.status}

    return {
        "domain": recall.domain,
        "known": recall.known,
        "stale": recall.stale,
        "note_count": recall.note_count,
        "notes": [v.as_data() for v in recall.notes],
        "overlap_pairs": [
            {"note_ids": [str(a), str(b)], "distance": round(p.distance, 4)}
            for p in recall.overlap_pairs
            for a, b in [p.note_ids]
        ],
        "compaction_suggested": recall.compaction_suggested,
        "truncated": recall.truncated,
        "omitted_note_ids": list(recall.omitted_note_ids),
        "ranking": recall.ranking,
        "should_stop": recall.should_stop,
        "stop_reasons": [{"code": r.code, "message": r.message} for r in recall.stop_reasons],
        "relationship": {
            "campaigns": [campaign(c) for c in rel.campaigns],
            "messages_sent": rel.messages_sent,
            "last_reply": (
                {
                    "sentiment": last.sentiment,
                    "received_at": last.received_at.isoformat().replace("+00:00", "Z"),
                    "campaign": campaign(last.campaign),
                }
                if last
                else None
            ),
            "suppressed": rel.suppressed,
            "suppression_matches": [
                {"kind": m.kind, "value": m.value} for m in rel.suppression_matches
            ],
        },
    }
