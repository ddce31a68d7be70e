"""How business memory values read on a page: a short one-line view, and pretty JSON."""

import json

from django import template
from django.utils.html import format_html, format_html_join

register = template.Library()

SHORT_CHARS = 80


@register.filter
def short_json(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 1] + "…"


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


_MARKS = {"add": "+ ", "remove": "- ", "fold": "⋯ ", "same": "  "}


@register.filter
def changes_html(changes) -> str:
    """What changed between two versions, one escaped line per change (a comparison may
    show hundreds of lines: built in one pass, not by the template engine line by line)."""
    lines = format_html_join(
        "\n",
        '<span class="{}">{}{}</span>',
        ((change.kind, _MARKS[change.kind], change.text) for change in changes),
    )
    return format_html('<pre class="diff">{}</pre>', lines)
