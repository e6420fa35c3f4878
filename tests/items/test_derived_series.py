"""A channel's `derived` description (how a series not taken from a column as it is was made)
reaches the schema, the text a student or judge reads and the export, and leaves the JSON (and so
the hash) of items without one unchanged."""

from __future__ import annotations

from itemsmith.items.hashing import item_hash
from itemsmith.items.helpers import series
from itemsmith.items.rendering import render_item
from itemsmith.items.schema import Item


def item(**channel: object) -> Item:
    return Item.model_validate({"question": "What is the highest 7-day mean?", "options": ["1", "2"],
                                "answer_index": 0, "series": [series([1.0, 2.0, 3.0], name="temp_max 7d", **channel)]})


def test_the_derivation_is_in_the_schema_and_the_rendered_text() -> None:
    assert "derived" in Item.model_json_schema()["$defs"]["Series"]["properties"]
    text = render_item(item(unit="°C", derived="7-day mean of temp_max"))
    assert "temp_max 7d (unit: °C; derived: 7-day mean of temp_max)" in text


def test_items_without_a_derivation_serialize_and_hash_as_before() -> None:
    plain = item(unit="°C")
    assert "derived" not in plain.model_dump(mode="json")["series"][0]
    # the JSON an item had before `derived` existed validates to the same hash
    before = {"question": "What is the highest 7-day mean?", "options": ["1", "2"], "answer_index": 0, "kind": "mc",
              "series": [{"name": "temp_max 7d", "values": [1.0, 2.0, 3.0], "timestamps": None, "unit": "°C"}],
              "context": None, "rationale": None, "metadata": {}}
    assert plain.model_dump(mode="json") == before
    assert item_hash(plain) == item_hash(Item.model_validate(before))
    assert item_hash(item(unit="°C", derived="7-day mean")) != item_hash(plain)
