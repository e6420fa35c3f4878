"""The names of the series text formats (`items.rendering` renders them), apart from the rendering so
that a command line can offer them without importing the item schema."""

from __future__ import annotations

from enum import Enum

__all__ = ["TextFormat"]


class TextFormat(str, Enum):
    """The nine text formats of Fons et al., Appendix F, and ``compact`` (`items.rendering`'s docstring shows each)."""

    csv = "csv"
    plain = "plain"
    tsv = "tsv"
    json = "json"
    markdown = "markdown"
    spaces = "spaces"
    context = "context"
    symbol = "symbol"
    custom = "custom"
    compact = "compact"
