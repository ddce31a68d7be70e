"""Note bodies render as markdown that cannot run anything."""

import pytest

from prospect_memory.notes.markdown import render_markdown


@pytest.mark.parametrize(
    ("body", "forbidden"),
    [
        ("<script>alert('x')</script>", ["<script", "alert("]),
        ("[click](javascript:alert(1))", ["javascript:"]),
        ("[click](JaVaScRiPt:alert(1))", ["javascript", "JaVaScRiPt"]),
        ("<img src=x onerror=alert(1)>", ["onerror", "<img"]),
        ('<a href="https://a.dev" onclick="steal()">x</a>', ["onclick"]),
        ('<iframe src="https://evil.example"></iframe>', ["<iframe"]),
        ('<div style="background:url(javascript:x)">x</div>', ["style=", "javascript"]),
        ("<svg><script>alert(1)</script></svg>", ["<svg", "<script"]),
        ('<form action="https://evil.example"><input name=x></form>', ["<form", "<input"]),
        ("[x](data:text/html;base64,PHNjcmlwdD4=)", ["data:"]),
        ("<object data=x></object><embed src=x>", ["<object", "<embed"]),
    ],
)
def test_dangerous_markup_is_removed(body, forbidden):
    html = render_markdown(body)
    for piece in forbidden:
        assert piece not in html


def test_markdown_still_renders():
    html = render_markdown(
        "## Funding\n\n**40M** led by [Example](https://example.com/fund)\n\n- one\n- two"
    )
    assert "<h4>Funding</h4>" in html
    assert "<strong>40M</strong>" in html
    assert (
        '<a href="https://example.com/fund" rel="noopener noreferrer nofollow">Example</a>' in html
    )
    assert "<li>one</li>" in html
