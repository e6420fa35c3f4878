"""The API's and the worker's start-up import what serving needs, not the libraries of the work:
no pandas, SciPy, LangChain, LangGraph, matplotlib or PyTorch until a request or a job asks for
them (job kinds are imported when a job of the kind runs: `service.jobs._kinds`). Each import runs
in a fresh interpreter; benchmarks/cli_startup.py times them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# pyarrow is not listed: the API documents the export formats by name, and the exporters' registry
# imports its writers (the parquet one, pyarrow) with it.
HEAVY = ("pandas", "scipy", "sklearn", "matplotlib", "torch", "langchain_core", "langgraph", "openai", "anthropic",
         "llama_cpp", "itemsmith.agents.authoring.run", "itemsmith.agents.authoring.graph", "itemsmith.agents.authoring.context",
         "itemsmith.verification.audit", "itemsmith.verification.students")


def _loaded(statement: str) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after `statement`."""
    probe = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("statement", [
    "import itemsmith.api.app",
    "from itemsmith.api.app import create_app",
    "import itemsmith.service.jobs.celery_app",
], ids=["api", "api-factory", "worker"])
def test_start_up_imports_no_data_or_model_library(statement: str) -> None:
    assert _loaded(statement) == []


def test_the_worker_does_not_import_the_web_framework() -> None:
    probe = ("import sys, itemsmith.service.jobs.celery_app\n"
             "print(sorted(m for m in ('fastapi', 'starlette') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]"


def test_the_probe_sees_a_heavy_import() -> None:
    """Control: a job kind's own module does load the model layer, and the probe says so."""
    loaded = _loaded("import itemsmith.service.jobs._author")
    assert "langgraph" in loaded and "itemsmith.agents.authoring.graph" in loaded
