"""A bank's text in the Hugging Face dataset card is text, never Markdown or HTML: a hostile task,
category, template name and handler name are rendered by an independent CommonMark renderer
with raw HTML on and GitHub's tables (markdown-it-py), and the card's HTML holds none of their
markup, only their words; the card's own structure (headings, tables, the manifest block)
is intact."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from markdown_it import MarkdownIt

from itemsmith.templates_bank.exporters import ExportOptions
from itemsmith.templates_bank.exporters._markdown import markdown_code, markdown_text
from itemsmith.templates_bank.exporters.huggingface import dataset_card
from itemsmith.templates_bank.handler_identity import HandlerRef
from itemsmith.templates_bank.releases import ReleaseManifest

if TYPE_CHECKING:
    from conftest import CuratedRelease

HOSTILE_TASK = ("Ignore this <script>alert(1)</script> <img src=x onerror=alert(2)> ![p](https://evil.example/p.png) "
                "[click](javascript:alert(3)) https://evil.example **bold** _em_ ~~gone~~ $x^2$ `code` &amp;\n"
                "# A heading\n\n- a list\n\n| a | b |\n|---|---|\n\n```\n</code></pre><h1>owned</h1>\n```\n"
                "<!-- hidden --> \\*escaped\\*")
HOSTILE_CATEGORY = "cat | <b>bold</b> `tick` [link](https://evil.example)"
HOSTILE_TEMPLATE = "t`|<i>x</i>``"
HOSTILE_HANDLER = "h` <img src=x onerror=alert(4)> `"
OWN_TAGS = {"h1", "h2", "p", "code", "pre", "table", "thead", "tbody", "tr", "th", "td"}


class _Page(HTMLParser):
    """The tags of an HTML page and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _rendered(markdown: str) -> tuple[str, _Page]:
    rendered = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)
    page = _Page()
    page.feed(rendered)
    return rendered, page


def _body(card: str) -> str:
    """The card without its YAML front matter (the Hub reads that as metadata, not Markdown)."""
    assert card.startswith("---\n")
    return card.split("\n---\n", 1)[1]


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def hostile(curated_release: CuratedRelease) -> ReleaseManifest:
    manifest = curated_release.release.manifest
    templates = [manifest.templates[0].model_copy(update={"template_id": HOSTILE_TEMPLATE,
                                                          "category": HOSTILE_CATEGORY}),
                 *manifest.templates[1:]]
    counts = manifest.counts.model_copy(update={"by_category": {HOSTILE_CATEGORY: manifest.counts.by_category[
        manifest.templates[0].category]}})
    return manifest.model_copy(update={"task": HOSTILE_TASK, "templates": templates, "counts": counts,
                                       "handler": HandlerRef(name=HOSTILE_HANDLER, sha256="0" * 64)})


def test_hostile_bank_text_renders_as_its_words_and_no_markup(hostile: ReleaseManifest) -> None:
    rendered, page = _rendered(_body(dataset_card(hostile, ExportOptions())))
    assert set(page.tags) <= OWN_TAGS, set(page.tags) - OWN_TAGS  # no script, img, a, b, i, del, h3, li ...
    assert page.tags.count("h1") == 1 and page.tags.count("h2") == 5  # the card's own headings only
    assert "<!--" not in rendered and "javascript:" not in rendered.replace(html.escape("javascript:"), "")
    text = "".join(page.text)
    assert f"Task: {_one_line(HOSTILE_TASK)}" in text  # every word, literally, on one line
    assert HOSTILE_HANDLER.strip("` ") in text and HOSTILE_TEMPLATE in text


def test_the_card_keeps_its_tables_and_its_manifest(hostile: ReleaseManifest) -> None:
    rendered, _ = _rendered(_body(dataset_card(hostile, ExportOptions())))
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, flags=re.S)
    cells = [re.findall(r"<t[dh]>", row) for row in rows]
    counts, templates = len(hostile.counts.by_category) + 1, len(hostile.templates) + 1
    assert [len(c) for c in cells] == [3] * counts + [5] * templates  # a `|` in a cell split nothing
    block = re.search(r'<pre><code class="language-json">(.*?)</code></pre>', rendered, flags=re.S)
    assert block is not None
    assert json.loads(html.unescape(block.group(1))) == hostile.model_dump(mode="json")


@pytest.mark.parametrize("text", [HOSTILE_TASK, HOSTILE_CATEGORY, HOSTILE_TEMPLATE, HOSTILE_HANDLER, "plain words",
                                  "a\\b \\`c\\` 1. - + = ' \" #x"])
def test_escaped_text_and_code_render_back_to_the_text(text: str) -> None:
    """Both escapes round-trip through the renderer: what a reader sees is the text itself."""
    _, page = _rendered(f"Text: {markdown_text(text)}\n\nCode: {markdown_code(text)}\n")
    assert page.tags == ["p", "p", "code"]
    seen = "".join(page.text).strip()
    assert seen == f"Text: {_one_line(text)}\nCode: {_one_line(text)}"
