"""Diversity of stored templates: measured on the items of their newest structure check, with an
embedder or text similarity only; near duplicates found; the configured embedder can be off."""

from __future__ import annotations

import numpy as np
import pytest

from itemsmith.items.schema import Item
from itemsmith.templates_bank.diversity import configured_embedder, items_diversity


def bag_of_words(texts):
    vocabulary = sorted({w for t in texts for w in t.lower().split()})
    return np.array([[t.lower().split().count(w) for w in vocabulary] for t in texts], dtype=float)


def items(stem: str, options: list[str], n: int = 3) -> list[Item]:
    return [Item(question=f"{stem} {i}?", options=options, answer_index=0) for i in range(n)]


def test_near_duplicate_templates_are_paired_and_distinct_ones_are_not():
    summary = items_diversity({
        "trend": items("Which trend does the series show", ["up", "down", "flat"]),
        "trend_copy": items("Which trend does the series show", ["up", "down", "flat"]),
        "spike": items("At which index is the largest spike of channel x located", ["3", "17", "40", "88"]),
    }, bag_of_words, "bag of words")
    assert [(p.first, p.second) for p in summary.near_duplicates] == [("trend", "trend_copy")]
    assert summary.report is not None and summary.report.embedding_distance_mean is not None
    assert summary.templates == 3 and summary.embedder == "bag of words"


def test_without_an_embedder_only_text_similarity_is_measured():
    summary = items_diversity({"a": items("How many peaks", ["1", "2"]), "b": items("How many peaks", ["1", "2"])},
                              None, "off")
    assert summary.report is not None and summary.report.embedding_distance_mean is None
    assert summary.report.levenshtein_mean >= 0 and summary.near_duplicates[0].embedding_similarity is None


def test_one_item_is_too_few_to_measure():
    assert items_diversity({"a": items("Q", ["x", "y"], n=1)}, None, "off").report is None


def test_the_embedder_setting_can_switch_it_off(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ITEMSMITH_DIVERSITY_EMBEDDER", "off")
    embedder, name = configured_embedder()
    assert embedder is None and name.startswith("off")
