"""Seeds and sample sizes a template cannot predict: drawn from the OS for every check.

A template that behaves only under the seeds or sizes a check is known to use (seed 0,
num_samples 5) is caught because no check uses fixed ones; each check records what it drew.
"""

from __future__ import annotations

import secrets

__all__ = ["SEED_BOUND", "fresh_seed", "fresh_size"]

SEED_BOUND = 2**62


def fresh_seed() -> int:
    """A run seed from the OS's randomness."""
    return secrets.randbelow(SEED_BOUND)


def fresh_size(low: int, high: int) -> int:
    """A num_samples in [low, high], from the OS's randomness."""
    if not 1 <= low <= high:
        raise ValueError(f"need 1 <= low <= high, got {low}, {high}")
    return low + secrets.randbelow(high - low + 1)
