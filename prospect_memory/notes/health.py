"""The notes' section of the memory health page: is research being reused, and is it kept clean?

Read from the usage events that agent recalls and saves write (MCP and REST), and from the
dossiers themselves. Everything is filtered by the one account.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db.models import Count, Max, Q
from django.db.models.functions import TruncDate

from outreach.characters import readable
from prospect_memory.core.health import FLAGGED_SHOWN, HealthSection
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.models import Dossier, Note, UsageEvent
from prospect_memory.notes.records import NoteView
from prospect_memory.notes.rules import (
    compaction_suggested_dossiers,
    stale_dossiers,
    utc_today,
)
from prospect_memory.notes.selectors import note_view

WEB_CLIENT = "Kit web / API session"


@dataclass
class ClientUsage:
    client: str
    recalls: int
    from_memory: int
    saves: int
    near_duplicates: int
    shared_sources: int

    @property
    def reuse_rate(self) -> float | None:
        return self.from_memory / self.recalls if self.recalls else None


@dataclass
class Day:
    day: date
    recalls: int = 0
    from_memory: int = 0
    saves: int = 0


@dataclass
class MemoryHealth:
    days: int
    recalls: int
    from_memory: int
    saves: int
    near_duplicates: int
    shared_sources: int
    dossiers: int
    stale_dossiers: int
    compaction_suggested: list[tuple[str, int]]
    clients: list[ClientUsage]
    compaction_suggested_above: int
    series: list[Day] = field(default_factory=list)
    #: Active notes whose text Kit flagged (SPEC 15), newest first, and how many in all.
    flagged: list[NoteView] = field(default_factory=list)
    flagged_count: int = 0

    @staticmethod
    def _rate(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    @property
    def reuse_rate(self):
        return self._rate(self.from_memory, self.recalls)

    @property
    def near_duplicate_rate(self):
        return self._rate(self.near_duplicates, self.saves)

    @property
    def shared_source_rate(self):
        return self._rate(self.shared_sources, self.saves)

    @property
    def stale_share(self):
        return self._rate(self.stale_dossiers, self.dossiers)


def memory_health(*, account, days: int = 30) -> MemoryHealth:
    today = utc_today()
    since = today - timedelta(days=days - 1)
    events = UsageEvent.objects.filter(
        account=account, memory=UsageEvent.Memory.PROSPECT, created_at__date__gte=since
    )
    recall, save = UsageEvent.Kind.RECALL, UsageEvent.Kind.SAVE
    totals = events.aggregate(
        recalls=Count("id", filter=Q(kind=recall)),
        from_memory=Count("id", filter=Q(kind=recall, from_memory=True)),
        saves=Count("id", filter=Q(kind=save)),
        near=Count("id", filter=Q(kind=save, near_duplicate=True)),
        shared=Count("id", filter=Q(kind=save, shared_source=True)),
    )
    clients = [
        ClientUsage(
            client=readable(row["oauth_application__name"] or WEB_CLIENT),
            recalls=row["recalls"],
            from_memory=row["from_memory"],
            saves=row["saves"],
            near_duplicates=row["near"],
            shared_sources=row["shared"],
        )
        for row in events.values("oauth_application__name")
        .annotate(
            recalls=Count("id", filter=Q(kind=recall)),
            from_memory=Count("id", filter=Q(kind=recall, from_memory=True)),
            saves=Count("id", filter=Q(kind=save)),
            near=Count("id", filter=Q(kind=save, near_duplicate=True)),
            shared=Count("id", filter=Q(kind=save, shared_source=True)),
        )
        .order_by("-recalls", "oauth_application__name")
    ]
    by_day = {since + timedelta(days=i): Day(since + timedelta(days=i)) for i in range(days)}
    for row in (
        events.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(
            recalls=Count("id", filter=Q(kind=recall)),
            from_memory=Count("id", filter=Q(kind=recall, from_memory=True)),
            saves=Count("id", filter=Q(kind=save)),
        )
    ):
        if row["day"] in by_day:
            entry = by_day[row["day"]]
            entry.recalls, entry.from_memory, entry.saves = (
                row["recalls"],
                row["from_memory"],
                row["saves"],
            )
    dossiers = Dossier.objects.filter(account=account).annotate(
        newest=Max("notes__observed_at", filter=Q(notes__status=Note.Status.ACTIVE))
    )
    stale = dossiers.filter(stale_dossiers("newest", today)).count()
    suggested = list(
        Dossier.objects.filter(compaction_suggested_dossiers(), account=account)
        .order_by("-active_note_count", "domain")
        .values_list("domain", "active_note_count")
    )
    flagged = (
        Note.objects.filter(account=account, status=Note.Status.ACTIVE, flagged_at__isnull=False)
        .select_related("dossier", "member__user", "oauth_application")
        .order_by("-flagged_at", "id")
    )
    return MemoryHealth(
        flagged=[note_view(n, domain=n.dossier.domain) for n in flagged[:FLAGGED_SHOWN]],
        flagged_count=flagged.count(),
        days=days,
        recalls=totals["recalls"],
        from_memory=totals["from_memory"],
        saves=totals["saves"],
        near_duplicates=totals["near"],
        shared_sources=totals["shared"],
        dossiers=dossiers.count(),
        stale_dossiers=stale,
        compaction_suggested=suggested,
        clients=clients,
        compaction_suggested_above=notes_settings.COMPACTION_SUGGESTED_ABOVE,
        series=list(by_day.values()),
    )


def chart(series: list[Day], *, width: int = 640, height: int = 160) -> dict:
    """Bar geometry for a small server-rendered SVG: recalls per day, reused part shaded."""
    peak = max((d.recalls for d in series), default=0) or 1
    slot = width / max(len(series), 1)
    bars = []
    for index, day in enumerate(series):
        total = round(day.recalls / peak * (height - 20))
        reused = round(day.from_memory / peak * (height - 20))
        x = round(index * slot + 1, 1)
        bars.append(
            {
                "x": x,
                "w": round(max(slot - 2, 1), 1),
                "total_y": height - total,
                "total_h": total,
                "reused_y": height - reused,
                "reused_h": reused,
                "day": day.day,
                "recalls": day.recalls,
                "from_memory": day.from_memory,
            }
        )
    return {"width": width, "height": height, "bars": bars, "peak": peak}


def section(account) -> HealthSection:
    """The notes' part of the memory health page."""
    health = memory_health(account=account)
    return HealthSection(
        "prospect_memory/_health.html", {"health": health, "chart": chart(health.series)}
    )
