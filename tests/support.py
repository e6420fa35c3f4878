"""Helpers every test package shares: waiting on an observable event, and an ASGI app on a real
uvicorn server.

A test never sleeps a fixed time to let something happen: it names the event it waits for
(`wait_until`), which returns as soon as the event is seen and fails with that name, and whatever
`details` adds (a log's tail), when it is not seen in time. A condition that finds the wait
hopeless (the server process exited) fails at once by raising.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def _timed_out(what: str, timeout_s: float, details: Callable[[], str] | None) -> AssertionError:
    message = f"timed out after {timeout_s:g} s waiting for {what}"
    return AssertionError(f"{message}\n{details()}" if details else message)


def wait_until(condition: Callable[[], T], what: str, timeout_s: float = 30.0, *, interval_s: float = 0.01,
               details: Callable[[], str] | None = None) -> T:
    """The first truthy value of `condition()`, called every `interval_s`; an AssertionError naming
    `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise _timed_out(what, timeout_s, details)
        time.sleep(interval_s)
    return value


async def await_until(condition: Callable[[], T], what: str, timeout_s: float = 30.0, *, interval_s: float = 0.01,
                      details: Callable[[], str] | None = None) -> T:
    """`wait_until` inside a coroutine: the event loop runs between checks."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise _timed_out(what, timeout_s, details)
        await asyncio.sleep(interval_s)
    return value


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether a GET of `url` is answered 200 (False while nothing listens there yet)."""
    import httpx

    try:
        return httpx.get(url, timeout=timeout_s).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def serve_app(app: Any, timeout_s: float = 30.0, **config: Any) -> Iterator[str]:
    """`app` (ASGI) on a uvicorn server in a thread, on a free loopback port, until the block ends;
    yields its base URL once uvicorn says it listens. `config`: more uvicorn.Config options."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        def listening() -> bool:
            assert thread.is_alive(), "uvicorn exited before it listened"
            return server.started

        wait_until(listening, "uvicorn to listen", timeout_s)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
