"""Markup that renders invisibly (SPEC 15.2): comments that say something, elements never
shown, styles that hide. Read on the text as stored: markup spelled with character
references shows as text, not as markup."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

from prospect_memory.core.integrity.flags import Flag

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# A link reference definition that is never used renders as nothing: "[any]: <> (text)",
# "[//]: # (text)"; and a link with no text but a title shows only on hover.
_MARKDOWN_COMMENT = re.compile(
    r"^\s{0,3}\[[^\]\n]{1,100}\]:\s*(?:#|<>|<\s*>)\s*[(\"'].*$"
    r"|\[\s*\]\(\s*(?:[^\s()]|\([^\s()]*\))+\s+[\"'(][^\"')\n]{3,}[\"')]\s*\)",
    re.M,
)
_TAG = re.compile(r"<\s*([a-zA-Z][\w-]*)\b([^<>]*)>")
_NEVER_SHOWN = {
    "script", "style", "template", "noscript", "iframe", "object", "embed", "meta", "svg",
    "title", "head",
}  # fmt: skip
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|font-size\s*:\s*0(?![.\d]*[1-9])"
    r"|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$|!)|(?:^|[;\s])(?:height|width|max-height|max-width)"
    r"\s*:\s*0(?:px)?\s*(?:;|$|!)|(?:left|top|text-indent|margin-left)\s*:\s*-\d{3,}"
    r"|clip(?:-path)?\s*:\s*(?:rect\(\s*0|inset\(\s*50%)|(?<![-\w])color\s*:\s*(?:transparent|"
    r"white|#fff(?:fff)?\b|rgba\([^)]*,\s*0\s*\))",
    re.IGNORECASE,
)


class _Attributes(HTMLParser):
    """The attributes of one start tag, parsed as a browser would read them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attrs: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        self.attrs = {name.lower(): (value or "") for name, value in attrs}


def _attributes(tag: str) -> dict[str, str]:
    parser = _Attributes()
    parser.feed(tag)
    parser.close()
    return parser.attrs


def _element_end(text: str, name: str, after: int) -> int:
    closing = re.compile(rf"<\s*/\s*{re.escape(name)}\s*>", re.IGNORECASE).search(text, after)
    return closing.end() if closing else after


#: Comments that page builders write around blocks (WordPress's "wp:paragraph", IE's
#: conditionals, "end of header"): markup of a copied page, not hidden prose.
_MARKUP_COMMENT = re.compile(
    r"^\s*(?:/?\s*wp:|\[if\b|<!\[endif|/?\s*(?:end|begin|start|stop)\b|#|google\s+tag\s+manager|"
    r"(?:start|end)\s+of\b)",
    re.IGNORECASE,
)
_COMMENT_WORDS = re.compile(r"[^\W\d_]{2,}")


def _hidden_prose(comment: str) -> bool:
    """A comment that says something: four words or more, three that are not a page
    builder's marker, or one long run of letters (``TheAgentShould…``)."""
    inner = comment[4:].removesuffix("-->")
    words = _COMMENT_WORDS.findall(inner)
    if len(words) >= 4 or any(len(word) >= 20 for word in words):
        return True
    return len(words) == 3 and not _MARKUP_COMMENT.match(inner)


#: A reference definition with a title ("[a]: https://... "text""): it renders as nothing,
#: and its title shows only on hover where the reference is used.
_TITLED_DEFINITION = re.compile(
    r"^\s{0,3}\[[^\]\n]{1,100}\]:\s*<?\S+>?\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\))\s*$", re.M
)
#: Markup a browser reads as a comment or drops (CDATA, a processing instruction, an end
#: tag with something after its name): what is in it is never shown.
_NEVER_RENDERED = re.compile(
    r"<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)|<\s*/\s*[a-zA-Z][\w-]*\s[^<>]*>", re.S
)
#: Attributes whose text a page never shows (Kit's pages drop them all).
_UNSHOWN_ATTRIBUTES = ("title", "aria-label", "aria-description", "placeholder")


def _says_something(text: str) -> bool:
    return len(_COMMENT_WORDS.findall(text)) >= 3


def hidden_markup(text: str, field: str) -> Iterator[Flag]:
    if "<!--" in text:
        for match in _HTML_COMMENT.finditer(text):
            if _hidden_prose(match.group(0)):
                yield Flag("html_comment", field, *match.span())
    if "]" in text:
        for match in _MARKDOWN_COMMENT.finditer(text):
            yield Flag("markdown_comment", field, *match.span())
        for match in _TITLED_DEFINITION.finditer(text):
            if _says_something(match.group(0).split("]:", 1)[1].split(None, 1)[-1]):
                yield Flag("markdown_comment", field, *match.span())
    if "<" not in text:
        return
    if "<!" in text or "<?" in text or "</" in text:
        for match in _NEVER_RENDERED.finditer(text):
            if _says_something(match.group(0)):
                yield Flag("hidden_element", field, *match.span())
    for match in _TAG.finditer(text):
        name = match.group(1).lower()
        if name in _NEVER_SHOWN:
            yield Flag(
                "hidden_element", field, match.start(), _element_end(text, name, match.end())
            )
            continue
        attributes_text = match.group(2)
        if not attributes_text.strip():
            continue
        attributes = _attributes(match.group(0))
        hidden = "hidden" in attributes or attributes.get("type", "").lower() == "hidden"
        styled = bool(_HIDING_STYLE.search(attributes.get("style", "")))
        if hidden or styled:
            kind = "hidden_style" if styled else "hidden_element"
            yield Flag(kind, field, match.start(), _element_end(text, name, match.end()))
        elif any(
            _says_something(value)
            for attribute, value in attributes.items()
            if attribute in _UNSHOWN_ATTRIBUTES or attribute.startswith("data-")
        ):
            yield Flag("hidden_attribute", field, *match.span())
