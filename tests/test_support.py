"""The shared test helpers (`tests/support.py`): a wait returns at the event and fails with its name,
and the uvicorn helper serves an app until its block ends."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from .support import answers, await_until, serve_app, wait_until


def test_wait_until_returns_the_first_truthy_value_as_soon_as_it_is_seen() -> None:
    calls: list[int] = []

    def third_call() -> list[int] | None:
        calls.append(len(calls))
        return calls if len(calls) == 3 else None

    assert wait_until(third_call, "the third call", 5, interval_s=0) == [0, 1, 2]
    assert len(calls) == 3


def test_wait_until_fails_with_what_it_waited_for_and_the_details() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"timed out after 0.05 s waiting for the light\nlog tail") as failure:
        wait_until(lambda: False, "the light", 0.05, details=lambda: "log tail")
    assert time.monotonic() - started < 5
    assert "log tail" in str(failure.value)


def test_a_condition_that_raises_ends_the_wait_at_once() -> None:
    def exited() -> bool:
        raise AssertionError("the server exited")

    started = time.monotonic()
    with pytest.raises(AssertionError, match="the server exited"):
        wait_until(exited, "the server", 60)
    assert time.monotonic() - started < 5


def test_await_until_lets_the_event_loop_run_between_checks() -> None:
    async def scenario() -> str:
        box: list[str] = []
        asyncio.get_running_loop().call_later(0.02, box.append, "set by the loop")
        return (await await_until(lambda: box, "the callback", 5))[0]

    assert asyncio.run(scenario()) == "set by the loop"


def test_another_thread_makes_the_event_happen() -> None:
    event = threading.Event()
    threading.Timer(0.05, event.set).start()
    assert wait_until(event.is_set, "the timer", 5) is True


async def _hello(scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                 send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


def test_serve_app_serves_until_the_block_ends() -> None:
    with serve_app(_hello, lifespan="off") as url:
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        assert httpx.get(url).text == "hello"
        assert answers(url)
    assert not answers(url, timeout_s=1)  # nothing listens there any more
