"""Running one template (inside the sandbox child, or in-process for benchmarks).

`run_template_here` compiles the source under the policy, executes it in a fresh namespace,
calls `question(num_samples)`, converts the result to plain JSON and returns the envelope the
child writes to its pipe. Errors name the exception, its message and the template's own
line, never a sandbox or library frame; error, traceback and printed text are cleaned of
control characters and lone surrogates (`output.clean_text`).
"""

from __future__ import annotations

import json
import traceback
import types
from typing import Any

from itemsmith.items.blocks import bind_blocks
from itemsmith.items.helpers import bind_helpers
from itemsmith.sandbox import policy, proxies
from itemsmith.sandbox.output import OutputError, clean_text, to_plain_json

MAX_ERROR_CHARS = 400
MAX_TRACEBACK_FRAMES = 6


def _short(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a template's exception with a failing __str__
        return "<message unavailable>"


def describe_exception(exc: BaseException, source: str) -> tuple[str, str | None]:
    """`("ZeroDivisionError: division by zero (template line 12: x = a / b)", tail)`."""
    lines = source.splitlines()
    frames: list[tuple[str, int]] = []
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == policy.TEMPLATE_FILENAME:
            frames.append((frame.f_code.co_name, lineno))
    message = _short(_safe_str(exc))
    name = type(exc).__name__
    head = f"{name}: {message}" if message else name
    if not frames:
        return head, None
    def where(lineno: int) -> str:
        code = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
        return f"template line {lineno}: {_short(code, 160)}"
    error = f"{head} ({where(frames[-1][1])})"
    tail = "\n".join(f"{where(lineno)} (in {fn})" for fn, lineno in frames[-MAX_TRACEBACK_FRAMES:])
    return error, tail


def _wrap_helper(fn: Any) -> Any:
    def helper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    helper.__name__ = getattr(getattr(fn, "func", fn), "__name__", "helper")
    helper.__doc__ = getattr(getattr(fn, "func", fn), "__doc__", None)
    return helper


def make_namespace(handler: Any, seed: int, print_sink: policy.PrintSink, synth: Any) -> dict[str, Any]:
    randomness = proxies.RunRandomness(seed)
    bound = {**bind_helpers(randomness.rng), **bind_blocks(randomness.rng)}
    helpers = {name: _wrap_helper(fn) if callable(fn) else fn for name, fn in bound.items()}  # `recipe`: a namespace
    return policy.build_namespace(handler=handler, randomness=randomness, helpers=helpers, synth=synth,
                                  print_sink=print_sink)


def run_template_here(source: str, *, handler: Any, num_samples: int, seed: int, output_bytes: int,
                      print_bytes: int, source_bytes: int | None = None, synth: Any = None) -> str:
    """Run a template in this process and return the child envelope as JSON text.

    Only call this in a sandbox child (or on trusted sources: warm-up, benchmarks).
    """
    sink = policy.PrintSink(print_bytes)

    def envelope(status: str, *, error: str | None = None, tb: str | None = None,
                 items_json: str | None = None) -> str:
        parts = [f'"status":{json.dumps(status)}']
        if items_json is not None:
            parts.append(f'"items":{items_json}')
        if error is not None:
            parts.append(f'"error":{json.dumps(clean_text(error))}')
        if tb is not None:
            parts.append(f'"traceback":{json.dumps(clean_text(tb))}')
        parts.append(f'"printed":{json.dumps(clean_text(sink.text()))}')
        return "{" + ",".join(parts) + "}"

    try:
        code = policy.compile_template(source, source_bytes)
    except policy.TemplateRefused as refused:
        return envelope("refused", error=_short("; ".join(refused.errors), 600))
    namespace = make_namespace(handler, seed, sink, synth)
    try:
        exec(code, namespace)  # noqa: S102 - restricted code in its own namespace (see module doc)
        question = namespace.get("question")
        if not isinstance(question, types.FunctionType):
            return envelope("error", error="the template must define a function question(num_samples)")
        result = question(num_samples)
    except MemoryError:
        return envelope("killed", error="memory limit exceeded (MemoryError)")
    except BaseException as exc:  # noqa: BLE001 - every template failure is reported, not raised
        error, tail = describe_exception(exc, source)
        return envelope("error", error=error, tb=tail)
    if type(result) is not list:
        return envelope("rejected", error=f"question() must return a list of item dicts, got {type(result).__name__}")
    try:
        items_json = to_plain_json(result, output_bytes)
    except OutputError as exc:
        return envelope("rejected", error=_short(str(exc)))
    except MemoryError:
        return envelope("killed", error="memory limit exceeded while serializing the output")
    except RecursionError:
        return envelope("rejected", error="output is nested too deeply")
    return envelope("ok", items_json=items_json)
