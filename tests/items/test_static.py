"""A static version's source: built from items or from their canonical JSON, the same text."""

from __future__ import annotations

import pytest

from itemsmith.items.hashing import canonical_json
from itemsmith.items.schema import Item, ItemKind, Series
from itemsmith.items.static import StaticSourceError, parse_static_source, static_source, static_source_of


def test_the_source_of_canonical_json_items_is_the_source_of_the_items() -> None:
    items = [Item(question=f"Which way does series {i} go? «ünïcode»", options=["up", "down", "4.28"],
                  answer_index=i % 3, kind=ItemKind.mc, series=[Series(name="series", values=[1.5, -2.0, 3.25])],
                  metadata={"source_row": i, "tid": 50}) for i in range(3)]
    texts = [canonical_json(item.model_dump(mode="json")) for item in items]
    assert static_source_of(texts) == static_source(items)
    assert parse_static_source(static_source_of(texts)) == items
    with pytest.raises(StaticSourceError):
        static_source_of([])
