"""How business memory values read on a page: indented JSON (or, for a large value, as
stored), and what changed between two versions."""

import json

from django import template
from django.utils.html import format_html, format_html_join

from prospect_memory.business.conf import business_settings

register = template.Library()


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


@register.filter
def formatted_value(item) -> str:
    """An entry's or a version's value as a page shows it: indented JSON, or for a value of
    over PAGE_PRETTY_MAX_BYTES its compact JSON as stored (indenting 16 KB of nested arrays
    takes longer than a page may, and makes half a megabyte of text)."""
    if len(item.value_json) <= business_settings.PAGE_PRETTY_MAX_BYTES:
        return pretty_json(item.value)
    return item.value_json


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
