"""Exports of a curated release: streamed from the stored items, byte-identical twice and to an
export of the same release regenerated in the sandbox (how every export was made before items
were stored), plots drawn once; and every format loads in its tool (parquet with pyarrow and
`datasets`, lm-eval tasks through lm-eval's own TaskManager and evaluator, the Inspect task
imported, built and evaluated with Inspect's mock model); a scripted OpenAI-compatible chat server
replying "A) day 4" is scored by its letter in both tools, as `release evaluate` reads it)."""

from __future__ import annotations

import dataclasses
import filecmp
import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import Item
from itemsmith.templates_bank import releases as releases_module
from itemsmith.templates_bank.exporters import EXPORTERS, ExportError, ExportOptions, export_release
from itemsmith.templates_bank.exporters import _plots as plots_module
from itemsmith.templates_bank.exporters._rows import stem
from itemsmith.templates_bank.exporters.lm_eval import task_name
from itemsmith.templates_bank.releases import Release, ReleaseIntegrityError, ReleaseManifest
from itemsmith.verification.answer_parsing import parse_answer

if TYPE_CHECKING:
    from conftest import CuratedRelease

FORMATS = sorted(EXPORTERS)


@pytest.fixture(scope="module")
def exports(curated_release: CuratedRelease, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each format exported once (markdown series, 1 decimal; small row groups and shards)."""
    options = ExportOptions(text_format=TextFormat.markdown, decimals=1, rows_per_group=10, rows_per_shard=25)
    root = tmp_path_factory.mktemp("exports")
    return {fmt: export_release(curated_release.release, fmt, root / fmt, options).out for fmt in FORMATS}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _expected(curated_release: CuratedRelease) -> list[tuple[str, Item]]:
    """(id, item) in release order, regenerated independently of the exporters and the stored items."""
    return [(f"{entry.template_id}-{run.seed}-{i}", item)
            for entry, run in curated_release.release.regenerated() for i, item in enumerate(run.items)]


def _assert_same_files(one: Path, other: Path) -> None:
    names = sorted(p.relative_to(one) for p in one.rglob("*"))
    assert names == sorted(p.relative_to(other) for p in other.rglob("*"))
    _, mismatch, errors = filecmp.cmpfiles(one, other, [str(p) for p in names if (other / p).is_file()], shallow=False)
    assert mismatch == [] and errors == []


def _no_template_runs(*args: object, **kwargs: object) -> None:
    raise AssertionError("a template ran")


@pytest.mark.parametrize("fmt", FORMATS)
def test_exports_are_byte_identical(fmt: str, exports: dict[str, Path], curated_release: CuratedRelease,
                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = ExportOptions(**json.loads((exports[fmt] / "export.json").read_text())["options"])
    # before items were stored, every export regenerated the release in the sandbox: the same bytes
    regenerated = dataclasses.replace(curated_release.release, stored=None)
    _assert_same_files(exports[fmt], export_release(regenerated, fmt, tmp_path / "regenerated", options).out)
    monkeypatch.setattr(releases_module, "regenerate", _no_template_runs)  # from the stored items alone
    again = export_release(curated_release.release, fmt, tmp_path / "again", options).out
    _assert_same_files(exports[fmt], again)
    for line in (exports[fmt] / "SHA256SUMS").read_text().splitlines():  # sha256sum -c format
        digest, name = line.split("  ")
        assert (exports[fmt] / name).is_file() and len(digest) == 64
    manifest = ReleaseManifest.model_validate_json((exports[fmt] / "manifest.json").read_text())
    assert manifest == curated_release.release.manifest


def test_jsonl_rows(exports: dict[str, Path], curated_release: CuratedRelease) -> None:
    rows = _jsonl(exports["jsonl"] / "data.jsonl")
    expected = _expected(curated_release)
    assert [r["id"] for r in rows] == [i for i, _ in expected]
    assert list(rows[0]) == ["id", "template_id", "template_version", "seed", "sample_index", "title", "category",
                             "concepts", "difficulty", "handler", "kind", "question", "context", "options",
                             "answer_index", "answer", "answer_text", "rationale", "series", "metadata", "prompt"]
    for row, (_, item) in zip(rows, expected, strict=True):
        assert row["options"] == item.options and row["answer_index"] == item.answer_index
        assert row["answer"] == "ABCDEF"[item.answer_index] and row["answer_text"] == item.answer
        assert [s["values"] for s in row["series"]] == [s.values for s in item.series]  # arrays, full precision
        assert row["prompt"] == render_item(item, TextFormat.markdown, 1)


def test_parquet_loads_with_pyarrow_and_datasets(exports: dict[str, Path], curated_release: CuratedRelease,
                                                 tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    files = sorted((exports["hf"] / "data").glob("*.parquet"))
    assert [f.name for f in files] == [f"test-0000{i}-of-00003.parquet" for i in range(3)]  # 60 rows, 25 a shard
    assert [pq.ParquetFile(f).metadata.num_rows for f in files] == [25, 25, 10]
    assert pq.ParquetFile(files[0]).metadata.num_row_groups == 3  # 10, 10, 5: streamed in row groups
    table = pq.read_table(files[0])
    assert table.column("series").type.value_type.field("values").type == pa.list_(pa.float64())
    ds = datasets.load_dataset("parquet", data_files={"test": [str(f) for f in files]}, cache_dir=str(tmp_path))["test"]
    jsonl = _jsonl(exports["jsonl"] / "data.jsonl")
    assert len(ds) == len(jsonl) == curated_release.release.manifest.counts.items
    for loaded, row in zip(ds, jsonl, strict=True):
        assert json.loads(loaded.pop("metadata")) == row.pop("metadata")
        assert loaded == row


def test_dataset_card(exports: dict[str, Path], curated_release: CuratedRelease) -> None:
    card = (exports["hf"] / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["configs"] == [{"config_name": "default", "data_files": [{"split": "test",
                                                                          "path": "data/test-*.parquet"}]}]
    assert front["license"] == "other" and front["size_categories"] == ["n<1K"]
    manifest = json.loads(card.split("```json\n")[1].split("\n```")[0])
    assert manifest == curated_release.release.manifest.model_dump(mode="json")


def test_plots(curated_release: CuratedRelease, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    options = ExportOptions(plots=True)
    jsonl = export_release(curated_release.tiny, "jsonl", tmp_path / "jsonl", options).out
    rows = _jsonl(jsonl / "data.jsonl")
    assert [r["image"] for r in rows] == [f"images/{r['id']}.png" for r in rows]
    assert all((jsonl / r["image"]).read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for r in rows)
    hf = export_release(curated_release.tiny, "hf", tmp_path / "hf", options).out
    ds = datasets.load_dataset("parquet", data_files=str(hf / "data" / "*.parquet"), cache_dir=str(tmp_path))["train"]
    assert type(ds.features["image"]).__name__ == "Image"
    assert ds[0]["image"].format == "PNG" and ds[0]["image"].size == (600, 200)
    with pytest.raises(ExportError, match="does not carry plots"):
        export_release(curated_release.tiny, "inspect", tmp_path / "inspect", options)


def test_plots_are_drawn_once_and_cached_by_item(curated_release: CuratedRelease, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[Item] = []
    render = plots_module.render_item_png

    def counted(item: Item, dpi: int) -> bytes:
        drawn.append(item)
        return render(item, dpi=dpi)

    monkeypatch.setattr(plots_module, "render_item_png", counted)
    options = ExportOptions(plots=True, plot_dpi=37)  # a dpi no other test draws at
    first = export_release(curated_release.tiny, "jsonl", tmp_path / "first", options).out
    assert len(drawn) == 2
    again = export_release(curated_release.tiny, "hf", tmp_path / "hf", options).out  # another format: cached
    assert len(drawn) == 2
    hf_images = pq.read_table(again / "data").column("image").to_pylist()
    assert [image["bytes"] for image in hf_images] == [p.read_bytes() for p in sorted((first / "images").iterdir())]
    regenerated = dataclasses.replace(curated_release.tiny, stored=None)  # no cache: drawn, the same bytes
    _assert_same_files(first, export_release(regenerated, "jsonl", tmp_path / "regenerated", options).out)
    assert len(drawn) == 4
    monkeypatch.setattr(plots_module, "renderer_id", lambda: "another matplotlib")  # another renderer draws anew
    export_release(curated_release.tiny, "jsonl", tmp_path / "another", options)
    assert len(drawn) == 6


def test_lm_eval_tasks_load_and_evaluate(exports: dict[str, Path], curated_release: CuratedRelease,
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("lm_eval")
    import datasets
    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)
    name = task_name(curated_release.release.manifest)
    manager = TaskManager(include_path=str(exports["lm-eval"]), include_defaults=False)
    assert {name, f"{name}_gen"} <= set(manager.all_tasks)
    tasks = manager.load([name, f"{name}_gen"])["tasks"]
    loglik, generative = tasks[name], tasks[f"{name}_gen"]
    assert (loglik.OUTPUT_TYPE, generative.OUTPUT_TYPE) == ("multiple_choice", "generate_until")
    expected = _expected(curated_release)
    doc = loglik.test_docs()[0]
    item = expected[0][1]
    assert loglik.doc_to_text(doc) == render_item(item, TextFormat.markdown, 1) + "\nAnswer:"
    assert loglik.doc_to_choice(doc) == list("ABCDEF"[: len(item.options)])
    assert loglik.doc_to_target(doc) == item.answer_index
    assert generative.doc_to_text(doc).endswith('"Answer: X", where X is the letter of the correct option.')
    assert generative.doc_to_target(doc) == item.answer_letter

    class AlwaysB(LM):
        """Prefers option B by log-likelihood; in generation, reasons past other letters first."""

        def loglikelihood(self, requests):
            return [(-1.0 if r.args[1].strip() == "B" else -2.0, False) for r in requests]

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

        def generate_until(self, requests):
            return ["A or C? The answer is not A.\nAnswer: **B**" for _ in requests]

    results = lm_eval.simple_evaluate(model=AlwaysB(), tasks=[name, f"{name}_gen"], task_manager=manager)["results"]
    share_b = sum(item.answer_index == 1 for _, item in expected) / len(expected)
    assert results[name]["acc,none"] == pytest.approx(share_b)
    assert results[f"{name}_gen"]["acc,none"] == pytest.approx(share_b)


REPLIES = ["A) day 4", "Answer: C", "answer: b", "The answer is (D).", "**Answer:** *E*", "Answer: A\nWait, no.\nAnswer: B",
           "Final answer: [F]", "Answer: Because", "I pick C", "B", "(a) rising", "A) up or B) down", ""]


@pytest.mark.parametrize("reply", REPLIES)
def test_shipped_answer_rule_reads_a_reply_as_release_evaluate_does(exports: dict[str, Path], reply: str) -> None:
    for fmt in ("lm-eval", "inspect"):
        spec = importlib.util.spec_from_file_location(f"shipped_{fmt.replace('-', '_')}",
                                                      exports[fmt] / "itemsmith_answers.py")
        shipped = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(shipped)
        for n_options in (2, 4, 6):
            ours = parse_answer(reply, n_options)
            assert shipped.parse_answer(reply, n_options).index == ours.index
            for key in range(n_options):
                doc = {"options": ["x"] * n_options, "answer_index": key}
                assert shipped.process_results(doc, [reply]) == {"acc": float(ours.index == key)}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai's retry setup
def test_inspect_task_imports_builds_and_scores(exports: dict[str, Path], curated_release: CuratedRelease,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("inspect_ai")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # Inspect's own data folder
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    spec = importlib.util.spec_from_file_location("itemsmith_exported_task", exports["inspect"] / "task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task = getattr(module, task_name(curated_release.release.manifest))()
    assert isinstance(task, Task)
    expected = _expected(curated_release)
    assert [s.id for s in task.dataset] == [i for i, _ in expected]
    sample, item = task.dataset[0], expected[0][1]
    assert sample.input == stem(item, TextFormat.markdown, 1)
    assert sample.choices == item.options and sample.target == item.answer_letter
    assert sample.metadata["template_version"] == curated_release.release.manifest.templates[0].version

    def reply(*_: object) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", "ANSWER: B")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return output

    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=reply), log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    share_b = sum(item.answer_index == 1 for _, item in expected) / len(expected)
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(share_b)

    def opening_letter(*_: object) -> ModelOutput:  # no "ANSWER: X" line: read by its opening letter
        output = ModelOutput.from_content("mockllm/model", "A) day 4")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=opening_letter),
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    share_a = sum(item.answer_index == 0 for _, item in expected) / len(expected)
    assert 0 < share_a and log.results.scores[0].metrics["accuracy"].value == pytest.approx(share_a)


def test_stem_is_the_prompt_without_options(curated_release: CuratedRelease) -> None:
    for _, run in curated_release.release.items():
        for item in run.items:
            options = "\n".join(f"{'ABCDEF'[i]}) {o}" for i, o in enumerate(item.options))
            for fmt in (TextFormat.plain, TextFormat.symbol):
                assert render_item(item, fmt, 2) == stem(item, fmt, 2) + "\n\n" + options


def test_export_errors_leave_nothing_behind(curated_release: CuratedRelease, tmp_path: Path) -> None:
    release = curated_release.tiny
    with pytest.raises(ExportError, match="unknown export format 'csv'; formats: hf, inspect, jsonl, lm-eval"):
        export_release(release, "csv", tmp_path / "x")
    (tmp_path / "taken").mkdir()
    with pytest.raises(ExportError, match="exists"):
        export_release(release, "jsonl", tmp_path / "taken")
    entry = release.manifest.templates[0].model_copy(update={"items_sha256": "0" * 64})
    tampered = Release(manifest=release.manifest.model_copy(update={"templates": [entry]}), sources=release.sources)
    with pytest.raises(ReleaseIntegrityError):
        export_release(tampered, "jsonl", tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no partial output
    assert export_release(release, "jsonl", tmp_path / "taken", overwrite=True).rows == 2


class _ChatServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat server (as llama.cpp's) whose model always replies "A) day 4"."""

    paths: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.paths.append(self.path)
        if not self.path.endswith("/chat/completions"):  # llama.cpp serves no /v1/responses
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps({"id": "reply", "object": "chat.completion", "created": 0, "model": "scripted",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "A) day 4"}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def chat_server() -> Iterator[str]:
    """The scripted chat server's /v1 address."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _ChatServer.paths.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    thread.join()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_scripted_chat_server_replying_a_day_4_is_scored_by_its_letter_in_both_tools(
        exports: dict[str, Path], curated_release: CuratedRelease, chat_server: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lm_eval")
    pytest.importorskip("inspect_ai")
    import datasets
    import lm_eval
    from inspect_ai import eval as inspect_eval
    from lm_eval.tasks import TaskManager

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = _expected(curated_release)
    share_a = sum(item.answer_index == 0 for _, item in expected) / len(expected)
    assert 0 < share_a < 1
    name = task_name(curated_release.release.manifest)
    manager = TaskManager(include_path=str(exports["lm-eval"]), include_defaults=False)
    results = lm_eval.simple_evaluate(
        model="local-chat-completions", model_args=f"model=scripted,base_url={chat_server}/chat/completions,"
                                                    "num_concurrent=1,max_retries=1",
        tasks=[f"{name}_gen"], task_manager=manager, apply_chat_template=True)["results"]
    assert results[f"{name}_gen"]["acc,none"] == pytest.approx(share_a)

    spec = importlib.util.spec_from_file_location("itemsmith_task_over_http", exports["inspect"] / "task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("LLAMA_API_KEY", "none")
    monkeypatch.setenv("LLAMA_BASE_URL", chat_server)
    (log,) = inspect_eval(getattr(module, name)(), model="openai-api/llama/scripted", log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(share_a)
    assert set(_ChatServer.paths) == {"/v1/chat/completions"}
    assert len(_ChatServer.paths) == 2 * len(expected)
