"""The memory health page: one page for the account's memories, each a registered section
(:mod:`prospect_memory.core.health`), so the page imports none of them."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from outreach.access import require_module_admin
from outreach.pages import member_required
from prospect_memory.core.health import health_sections


@require_GET
@member_required
def health_page(request):
    require_module_admin(request.actor)
    sections = health_sections(request.actor.account)
    return render(request, "prospect_memory/health.html", {"sections": sections})
