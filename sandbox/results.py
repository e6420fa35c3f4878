"""Turning what a worker reports about a child into a `RunResult`, on the host.

The payload is untrusted: it is parsed with a size cap, checked for exact plain-JSON types,
validated as a `ChildEnvelope`, and its items validated with `items.schema.Item`.
"""

from __future__ import annotations

import signal
from typing import Any

from pydantic import ValidationError

from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox.models import ChildEnvelope, RunRequest, RunResult
from itemsmith.sandbox.output import OutputError, parse_plain_json

_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGTRAP}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def validation_message(exc: ValidationError, limit: int = 3) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in error.get("loc", ()) if p != "__root__")
        msg = str(error.get("msg", "")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def validate_items(raw_items: list[Any], num_samples: int) -> tuple[list[dict[str, Any]], str | None]:
    """Validate raw JSON items with the Item schema: (normalized items, error or None)."""
    if len(raw_items) != num_samples:
        return [], f"question({num_samples}) returned {len(raw_items)} items; expected {num_samples}"
    items = []
    for index, raw in enumerate(raw_items):
        try:
            items.append(Item.model_validate(raw).model_dump(mode="json"))
        except ValidationError as exc:
            return [], f"item {index}: {validation_message(exc)}"
    return items, None


def build_result(outcome: dict[str, Any], payload: bytes, request: RunRequest, elapsed_ms: float) -> RunResult:
    """The RunResult for one child, from the worker's outcome record and the raw payload."""
    def result(status: RunStatus, error: str | None, **extra: Any) -> RunResult:
        return RunResult(status=status, error=error, elapsed_ms=elapsed_ms, **extra)

    if outcome.get("timed_out"):
        return result(RunStatus.killed, f"wall-clock limit of {request.wall_seconds:g} s exceeded")
    if outcome.get("oversize"):
        return result(RunStatus.rejected, f"output is larger than {request.output_bytes} bytes")
    sig = outcome.get("signal")
    if sig:
        name = _signal_name(sig)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return result(RunStatus.killed, f"CPU time limit of {request.cpu_seconds} s exceeded ({name})"
                          if sig == signal.SIGXCPU else f"killed by {name} (a resource limit)")
        if sig == signal.SIGXFSZ:
            return result(RunStatus.killed, "file size limit exceeded (templates cannot write files)")
        if sig == signal.SIGSYS:
            return result(RunStatus.killed, "a blocked system call ended the run")
        if sig in _CRASH_SIGNALS:
            return result(RunStatus.error, f"the template crashed the interpreter ({name})")
        return result(RunStatus.killed, f"killed by {name}")
    if outcome.get("exit_code") not in (0, None):
        return result(RunStatus.error, f"the sandbox child exited with status {outcome['exit_code']}")
    try:
        raw = parse_plain_json(payload, request.output_bytes + 256 * 1024)
        envelope = ChildEnvelope.model_validate(raw)
    except OutputError as exc:
        return result(RunStatus.rejected, str(exc))
    except ValidationError:
        return result(RunStatus.rejected, "the sandbox child's output is malformed")
    status = RunStatus(envelope.status)
    common = {"traceback_tail": envelope.traceback, "printed": envelope.printed}
    if status is not RunStatus.ok:
        return result(status, envelope.error or status.value, **common)
    raw_items = envelope.items or []
    items, error = validate_items(raw_items, request.num_samples)
    if error is not None:
        plain = [i for i in raw_items if isinstance(i, dict)]
        return result(RunStatus.rejected, error, items=plain, **common)
    return result(RunStatus.ok, None, items=items, **common)
