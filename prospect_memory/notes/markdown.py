"""Note bodies as safe HTML: markdown rendered, then cleaned with an allow-list.

Bodies come from agents, which read the web: a body may carry script tags, event handlers
or ``javascript:`` links copied from a page. Python-Markdown renders (raw HTML passes
through it), then nh3 (ammonia) keeps only the tags, attributes and URL schemes below.
"""

from __future__ import annotations

import markdown as markdown_lib
import nh3
from django.utils.safestring import SafeString, mark_safe

from prospect_memory.core.integrity import readable

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "h3", "h4", "h5", "h6", "a",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}


def render_markdown(text: str) -> SafeString:
    # As every reader receives stored text: a character the write path refuses, kept from
    # before the check, is shown as U+FFFD, even where a character reference spells it
    # (nh3 would write the character itself out).
    html = markdown_lib.markdown(
        readable(text), extensions=["extra", "sane_lists"], output_format="html"
    )
    # Headings inside a note start below the page's own.
    html = html.replace("<h1>", "<h3>").replace("</h1>", "</h3>")
    html = html.replace("<h2>", "<h4>").replace("</h2>", "</h4>")
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return mark_safe(cleaned)  # noqa: S308  (sanitised by nh3 just above)
