"""How business memory values read on a page: a short one-line view, and pretty JSON."""

import json

from django import template

register = template.Library()

SHORT_CHARS = 80


@register.filter
def short_json(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 1] + "…"


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
