"""Exact tests of a blind solver's accuracy against chance, and Holm's correction.

Under the null hypothesis (the key is exchangeable among an item's options as far as the
solver's cue goes) the solver's answer to item i is right with probability 1/k_i, k_i its
option count, independently across items: the number right is Poisson-binomial. With equal
option counts it is the exact binomial test.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["holm", "poisson_binomial_sf", "poisson_binomial_tail"]


def poisson_binomial_sf(correct: int, chances: Sequence[float]) -> float:
    """P(X >= correct) for X the number of successes of independent Bernoulli(chances)."""
    if correct <= 0:
        return 1.0
    if correct > len(chances):
        return 0.0
    pmf = np.zeros(len(chances) + 1)
    pmf[0] = 1.0
    for n, p in enumerate(chances, start=1):
        pmf[1:n + 1] = pmf[1:n + 1] * (1 - p) + pmf[:n] * p
        pmf[0] *= 1 - p
    return float(min(1.0, max(0.0, pmf[correct:].sum())))


def poisson_binomial_tail(chances: Sequence[float]) -> np.ndarray:
    """P(X >= k) for every k = 0..len(chances) (one pass, where `poisson_binomial_sf` is one k)."""
    pmf = np.zeros(len(chances) + 1)
    pmf[0] = 1.0
    for n, p in enumerate(chances, start=1):
        pmf[1:n + 1] = pmf[1:n + 1] * (1 - p) + pmf[:n] * p
        pmf[0] *= 1 - p
    return np.clip(np.cumsum(pmf[::-1])[::-1], 0.0, 1.0)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
