"""User text in Markdown metadata is shown as written: rendered by a CommonMark parser with tables
(markdown-it, as the UI's renderer parses GFM) and stripped of tags, a cell or line gives back the
text that went in, HTML and Markdown syntax included."""

from __future__ import annotations

import html
import re

import polars as pl
import pytest
from markdown_it import MarkdownIt

from corpus_assets.common import markdown_preview, md_code, md_text

TEXTS = [
    "no </record> before the next record",
    "<script>alert(1)</script> & <b>bold</b>",
    "a*b*c _under_ __strong__ `code` ~~gone~~",
    "[a link](http://example.com) ![img](x.png)",
    "# not a heading | not a cell \\ backslash",
    "1. not a list; - nor this; + nor this",
    "&amp; stays &amp; and &lt; too",
]


def rendered_text(markdown: str) -> list[str]:
    """The text of each table cell (or paragraph) the renderer makes of ``markdown``."""
    out = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)
    cells = re.findall(r"<t[dh]>(.*?)</t[dh]>", out, flags=re.S) or re.findall(
        r"<p>(.*?)</p>", out, flags=re.S
    )
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]


@pytest.mark.parametrize("text", TEXTS)
def test_md_text_shows_the_text_as_written(text):
    assert rendered_text(md_text(text)) == [text]
    # the renderer keeps no tag of the user's and no emphasis, link or image of its making
    out = MarkdownIt("commonmark").enable("strikethrough").render(md_text(text))
    assert re.sub(r"</?p>", "", out).count("<") == 0


def test_md_text_cuts_before_escaping_and_stays_on_one_line():
    assert md_text("x" * 100, width=10) == "x" * 9 + "…"
    assert md_text("a\nb\r\nc") == "a b  c"
    assert md_text(None) == ""


@pytest.mark.parametrize("text", ["plain", "has `ticks` in", "`starts", "<b>html</b>"])
def test_md_code_is_verbatim(text):
    out = MarkdownIt("commonmark").render(md_code(text))
    assert html.unescape(re.search(r"<code>(.*?)</code>", out).group(1)) == text


def test_preview_cells_are_the_values():
    frame = pl.DataFrame({"id": ["p1", "p|2"], "reason": [TEXTS[0], TEXTS[2]]})
    cells = rendered_text(markdown_preview(frame, ["id", "reason"]).value)
    assert cells == ["id", "reason", "p1", TEXTS[0], "p|2", TEXTS[2]]
