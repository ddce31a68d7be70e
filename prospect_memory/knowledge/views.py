"""The search page: a person asks what the account knows, as an agent does.

It runs the agents' operation (``outreach_search_knowledge``) through ``perform``, so the
same checks, limits and tenancy hold, and shows company notes grouped by company (with
their staleness and whether the company must not be contacted) beside the business memory
entries that answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.shortcuts import render
from django.views.decorators.http import require_GET

from outreach.errors import KitError, ValidationFailed
from outreach.pages import member_required, perform
from prospect_memory.knowledge.conf import knowledge_settings
from prospect_memory.knowledge.operations import SEARCH
from prospect_memory.knowledge.selectors import BUSINESS_MEMORY, PROSPECT_NOTES
from prospect_memory.notes.schemas import DOMAIN_INPUT

#: The kind filter of the page -> the operation's ``kinds``.
KINDS = {
    "all": None,
    "notes": [PROSPECT_NOTES],
    "business": [BUSINESS_MEMORY],
}


@dataclass
class Company:
    domain: str
    should_stop: bool
    stop_reasons: list[dict]
    notes: list[dict] = field(default_factory=list)


_MARKS = re.compile(r"(\*\*|__|`|^#+\s*)", re.MULTILINE)


def grouped(hits: list[dict]) -> tuple[list[Company], list[dict]]:
    """Note hits grouped by company, in the order of each company's nearest note, and the
    business memory hits, nearest first; excerpts read as text (markdown marks dropped)."""
    companies: dict[str, Company] = {}
    entries = []
    for hit in hits:
        hit = {**hit, "excerpt": _MARKS.sub("", hit["excerpt"])}
        if hit["kind"] == BUSINESS_MEMORY:
            entries.append(hit)
            continue
        about = hit["about"]
        company = companies.setdefault(
            about["domain"],
            Company(about["domain"], about["should_stop"], about["stop_reasons"]),
        )
        company.notes.append(hit)
    return list(companies.values()), entries


#: The page's names for the operation's arguments.
FIELD_LABELS = {"query": "Question", "domain": "Company", "kinds": "Search in"}


def _in_page_words(error: ValidationFailed) -> str:
    """The operation's problems named as the page names its fields, one per field."""
    said = []
    for name, problems in error.details.get("fields", {}).items():
        label = FIELD_LABELS.get(name, name)
        for problem in problems:
            said.append(f"{label}: {problem.removeprefix(f'{name}: ').removeprefix(name + ' ')}")
    return " ".join(said) or error.message


@require_GET
@member_required
def search_page(request):
    query = request.GET.get("q", "").strip()
    kind = request.GET.get("kind", "all")
    if kind not in KINDS:
        kind = "all"
    company = request.GET.get("company", "").strip()
    context = {
        "query": query,
        "kind": kind,
        "company": company,
        "searched": bool(query),
        "query_max_chars": knowledge_settings.QUERY_MAX_CHARS,
        "company_max_chars": DOMAIN_INPUT["maxLength"],
    }
    if query:
        arguments: dict = {"query": query, "limit": knowledge_settings.LIMIT_MAX}
        if KINDS[kind]:
            arguments["kinds"] = KINDS[kind]
        if company:
            arguments["domain"] = company
        try:
            data = perform(request, SEARCH, **arguments)
        except ValidationFailed as error:
            context["error"] = _in_page_words(error)
        except KitError as error:
            context["error"] = error.message
        else:
            companies, entries = grouped(data["hits"])
            context.update(
                companies=companies,
                entries=entries,
                not_compared=data["not_compared"],
                note=data.get("note", ""),
                truncated=data["truncated"],
            )
    return render(request, "knowledge/search.html", context)
