"""Text from a bank (its task, categories, template names, a handler's name) written into
Markdown that a site renders as HTML (the Hugging Face dataset card): as plain text, never as
markup. A bank's text is written by its owner and by the generator model, so it may hold HTML,
links, images, headings or a code fence that ends the card's own.

- `markdown_text`: one line of inline text; HTML's ``& < >`` as entities, and the punctuation
  that starts markup within a line backslash-escaped (emphasis, code, links, images, autolinks,
  table cells, strikethrough, math; CommonMark: a backslash makes ASCII punctuation literal);
- `markdown_code`: an inline code span whose backtick fence is longer than any backtick run in
  the text (a code span renders HTML and entities literally; only its fence could end it).

The data files (parquet, JSONL) are not escaped: they carry each item's text exactly, as the
release's hashes (`items_sha256`) and the models that read it need it (an option ``-3.5`` or
``+2`` prefixed for a spreadsheet would be another item). No export is a spreadsheet file (no
CSV), and spreadsheets that import parquet or JSON read their text as values, not formulas.

The manifest's fenced JSON block needs neither: every line `json.dumps` writes starts with
spaces, a bracket or a quote, never with the backticks that would close the fence.
"""

from __future__ import annotations

import html
import re

__all__ = ["markdown_code", "markdown_text"]

_PUNCTUATION = re.compile(r"([\\`*_\[\]()!|~$:#])")  # what starts markup within a line
_BACKTICKS = re.compile(r"`+")


def _one_line(text: str) -> str:
    """Whitespace runs, line breaks included, as one space: no block (heading, list, HTML block,
    fenced code, table row) can start inside the text."""
    return " ".join(text.split())


def markdown_text(text: str) -> str:
    """`text` as literal inline text of a paragraph or a table cell."""
    return _PUNCTUATION.sub(r"\\\1", html.escape(_one_line(text), quote=False))


def markdown_code(text: str, *, in_table: bool = False) -> str:
    """`text` as an inline code span; ``in_table``: inside a table cell, whose ``|`` would end the
    cell even inside a code span (GitHub's tables: ``\\|`` there is a literal ``|``)."""
    text = _one_line(text)
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # a padding space on each side is stripped
    return f"{fence}{pad}{text}{pad}{fence}"

