"""Note bodies as safe HTML: markdown rendered, then cleaned with an allow-list.

Bodies come from agents, which read the web: a body may carry script tags, event handlers
or ``javascript:`` links copied from a page. Python-Markdown renders (raw HTML passes
through it), then nh3 (ammonia) keeps only the tags, attributes and URL schemes below.

A page shows what an agent reads: no markdown that renders to nothing (abbreviation
definitions, attribute lists: the extensions that read them are left out), no text seen
only on hover (no ``title`` on any element), and an image, which is never loaded, as its
description in words.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

import markdown as markdown_lib
import nh3
from django.utils.safestring import SafeString, mark_safe

from prospect_memory.core.integrity import readable

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "h3", "h4", "h5", "h6", "a",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
#: ``"*"`` set empty: nh3 keeps ``title`` and ``lang`` on every element unless told not to.
ALLOWED_ATTRIBUTES = {"*": set(), "a": {"href"}, "th": {"align"}, "td": {"align"}}
#: Python-Markdown's "extra" but abbreviations, attribute lists and markdown in HTML, whose
#: text a page never shows.
EXTENSIONS = ["tables", "fenced_code", "footnotes", "def_list", "sane_lists"]


def render_markdown(text: str) -> SafeString:
    # As every reader receives stored text: a character the write path refuses, kept from
    # before the check, is shown as U+FFFD, even where a character reference spells it
    # (nh3 would write the character itself out).
    html = markdown_lib.markdown(readable(text), extensions=EXTENSIONS, output_format="html")
    html = _IMAGE.sub(_described, html)
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


_IMAGE = re.compile(r"<img\b[^>]*>", re.I)


class _Alt(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.alt = ""

    def handle_starttag(self, tag, attrs):
        self.alt = dict(attrs).get("alt") or ""


def _described(match: re.Match) -> str:
    """An image as its description, shown (nh3 drops images, which would hide it)."""
    parser = _Alt()
    parser.feed(match.group(0))
    alt = " ".join(parser.alt.split())
    return f"<em>[image: {escape(alt)}]</em>" if alt else "<em>[image]</em>"
