"""A model call that gave no usable reply: missing data, never an answer or a verdict.

The chat models that verification receives (built by `agents.llm.factory`) raise
`ModelCallFailed` when a call failed for good (a permanent error, retries or the wait bound
exhausted), came back empty, or was cut at the output limit. The judge panel records the
score as missing and does not re-ask (its parse retry is for replies that arrived); the student
pool records the item as not answered, outside the responses (so it is never counted as a wrong
answer, stored as one, or read by a calibration).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

__all__ = ["CallOutcome", "FailedCall", "ModelCallFailed"]

CallOutcome = Literal["failed", "empty", "cut"]


class ModelCallFailed(Exception):
    """A call with no usable reply; `outcome` says which kind, the message the provider's own words."""

    def __init__(self, message: str, *, outcome: CallOutcome = "failed") -> None:
        super().__init__(message)
        self.outcome: CallOutcome = outcome


class FailedCall(BaseModel):
    """One call that gave no usable reply: who was asked what, and why there is no answer."""

    model: str
    outcome: CallOutcome
    error: str
    item_index: int | None = None
    blind: bool = False
    criterion: str | None = None
