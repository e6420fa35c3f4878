"""A local OpenAI-compatible server that answers each prompt with a reply written for it beforehand.

The hosted path measured without a key: someone who never sees the templates (a person, or a
strong model in another session) reads the prompts itemsmith would send a hosted model and writes
the replies; this server serves them back, so the real client, retries and stage logic run as they
would against a provider. A reply is found by the prompt's hash (`prompt_key`: every message's role
and text); a prompt with no reply is written to `missing/` (to be answered in a next round) and
answered with HTTP 500, which the stage reports as a call without a usable reply (no verdict), never
as a verdict.

    replies/<key>.md       the reply to the prompt whose key is <key>
    prompts/<key>.md       the prompt (written by `write_prompt`, for the person answering)
    missing/<key>.md       prompts asked for during a replay that had no reply

Streaming (``stream: true``) is answered with the whole reply in one chunk.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

__all__ = ["prompt_key", "render_prompt", "replay_server", "write_prompt"]


def prompt_key(messages: Sequence[dict[str, Any]]) -> str:
    """The hash of a prompt: each message's role and text, in order."""
    rows = [[str(m.get("role")), m.get("content") if isinstance(m.get("content"), str)
             else json.dumps(m.get("content"), sort_keys=True)] for m in messages]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:24]


def render_prompt(messages: Sequence[dict[str, Any]]) -> str:
    return "\n\n".join(f"## {m['role']}\n\n{m['content']}" for m in messages) + "\n"


def write_prompt(folder: Path, messages: Sequence[dict[str, Any]], name: str | None = None) -> Path:
    """Write a prompt to `folder/prompts/<key>.md` (and, named, a line in `folder/prompts/index.tsv`)."""
    key = prompt_key(messages)
    (folder / "prompts").mkdir(parents=True, exist_ok=True)
    path = folder / "prompts" / f"{key}.md"
    path.write_text(render_prompt(messages))
    if name is not None:
        with (folder / "prompts" / "index.tsv").open("a") as index:
            index.write(f"{key}\t{name}\n")
    return path


def _app(folder: Path, served: list[str]) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "replayed", "object": "model"}]}

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Response:
        body = await request.json()
        messages = body.get("messages") or []
        key = prompt_key(messages)
        reply_file = folder / "replies" / f"{key}.md"
        if not reply_file.is_file():
            (folder / "missing").mkdir(parents=True, exist_ok=True)
            (folder / "missing" / f"{key}.md").write_text(render_prompt(messages))
            return JSONResponse({"error": {"message": f"no reply written for prompt {key}", "type": "server_error"}},
                                status_code=500)
        served.append(key)
        text = reply_file.read_text()
        tokens = max(1, len(text) // 4)
        usage = {"prompt_tokens": sum(len(str(m.get("content"))) // 4 for m in messages),
                 "completion_tokens": tokens}
        usage["total_tokens"] = usage["prompt_tokens"] + tokens
        model = body.get("model", "replayed")
        if body.get("stream"):
            def chunks() -> Iterator[str]:
                base = {"id": key, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
                yield "data: " + json.dumps({**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                                      "content": text},
                                                                  "finish_reason": None}]}) + "\n\n"
                yield "data: " + json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                             "usage": usage}) + "\n\n"
                yield "data: [DONE]\n\n"
            return StreamingResponse(chunks(), media_type="text/event-stream")
        return JSONResponse({"id": key, "object": "chat.completion", "created": int(time.time()), "model": model,
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                          "finish_reason": "stop"}], "usage": usage})

    return app


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def replay_server(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve `folder`'s replies on 127.0.0.1; yields the base URL (``.../v1``) and the keys served."""
    served: list[str] = []
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(_app(folder, served), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the replay server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1", served
    finally:
        server.should_exit = True
        thread.join(timeout=10)
