"""`itemsmith release verify`: a release's templates run again and their items compared byte for byte
with the stored ones; what differs is said per template, run and field (exit code 1)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.templates_bank import reproducibility
from itemsmith.templates_bank.regeneration import RunItems
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.reproducibility import reproduction_table, verify_release
from itemsmith.templates_bank.storage import open_session, upgrade


@pytest.fixture
def tiny(tmp_path: Path, add_argmax_bank: Callable[..., None]) -> tuple[str, Release]:
    """Bank "tiny": release 1 of the argmax template, seeds 0 and 1, 3 items each."""
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    add_argmax_bank(url)
    with open_session(url) as session:
        release = create_release(session, ReleaseCreate(bank="tiny", seeds=[0, 1], num_samples=3, created_by="tests"))
    return url, release


def _with_source(release: Release, change: Callable[[str], str]) -> Release:
    """The release with its template's code changed (as a changed library or handler would change it)."""
    (version,) = release.sources
    return dataclasses.replace(release, sources={version: change(release.sources[version])})


def test_a_release_that_reproduces(tiny: tuple[str, Release]) -> None:
    url, release = tiny
    with open_session(url) as session:
        report = verify_release(session, release)
    assert report.reproduced and report.compared_with == "stored items" and report.items == 6
    assert [(t.template_id, t.reproduced, t.differences) for t in report.templates] == [("argmax", True, [])]
    assert reproduction_table(report) == "tiny@1 reproduces: 6 items in 1 templates, byte for byte as stored"


def test_what_differs_is_said_by_run_item_and_field(tiny: tuple[str, Release]) -> None:
    url, release = tiny
    changed = _with_source(release, lambda source: source.replace("highest", "largest"))
    with open_session(url) as session:
        report = verify_release(session, changed)
    assert not report.reproduced
    (template,) = report.templates
    assert template.differences == ["seed 0 item 0 differs in question", "seed 0 item 1 differs in question",
                                    "seed 0 item 2 differs in question", "and 3 more"]
    assert reproduction_table(report).splitlines() == [
        "tiny@1 does NOT reproduce: 1 of 1 templates differ from the stored items", "argmax:",
        "    seed 0 item 0 differs in question", "    seed 0 item 1 differs in question",
        "    seed 0 item 2 differs in question", "    and 3 more"]


def test_a_failed_run_is_a_difference(tiny: tuple[str, Release]) -> None:
    url, release = tiny
    fewer = _with_source(release, lambda source: source.replace("return items", "return items[:2]"))
    failing = _with_source(release, lambda source: source.replace("items = []", "items = [] + 1 / 0"))
    with open_session(url) as session:
        assert verify_release(session, fewer).templates[0].differences == [
            "seed 0: the run failed: rejected: question(3) returned 2 items; expected 3",
            "seed 1: the run failed: rejected: question(3) returned 2 items; expected 3"]
        failed = verify_release(session, failing).templates[0]
    assert not failed.reproduced and failed.items == 0
    assert [d.split(": ZeroDivisionError")[0] for d in failed.differences] == [
        "seed 0: the run failed: error", "seed 1: the run failed: error"]


def test_only_the_order_of_keys_is_a_difference_too(tiny: tuple[str, Release]) -> None:
    url, release = tiny
    swapped = _with_source(release, lambda source: source.replace(
        'metadata={"spike_index": top, "answer_kind": "index"}', 'metadata={"answer_kind": "index", "spike_index": top}'))
    with open_session(url) as session:
        report = verify_release(session, swapped)
    assert not report.reproduced
    assert report.templates[0].differences[0] == "seed 0 item 0 differs in metadata (the order of keys)"


def _scripted(real: Callable[..., Iterator[RunItems]], change: Callable[[RunItems], RunItems], seed: int = 1
              ) -> Callable[..., Iterator[RunItems]]:
    """A regeneration whose run of `seed` is changed by `change` (a scripted stand-in for a template
    that stopped reproducing in a way the sandbox would not show on its own)."""
    def regenerate(*args: Any, **kwargs: Any) -> Iterator[RunItems]:
        for run in real(*args, **kwargs):
            yield change(run) if run.seed == seed else run
    return regenerate


def _one_option_changed(run: RunItems) -> RunItems:
    first = run.items[0]
    return dataclasses.replace(run, items=[first.model_copy(update={"options": [*first.options[:-1], "changed"]}),
                                           *run.items[1:]])


def test_a_run_giving_another_number_of_items_is_a_difference(tiny: tuple[str, Release],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url, release = tiny
    monkeypatch.setattr(reproducibility, "regenerate", _scripted(
        reproducibility.regenerate, lambda run: dataclasses.replace(run, items=run.items[:2])))
    with open_session(url) as session:
        assert verify_release(session, release).templates[0].differences == ["seed 1: 2 items, the release stored 3"]


def test_the_runs_after_a_failed_one_are_compared_with_their_own_items(tiny: tuple[str, Release],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    url, release = tiny
    monkeypatch.setattr(reproducibility, "regenerate", _scripted(
        reproducibility.regenerate, lambda run: dataclasses.replace(run, items=[], error="timeout: scripted"), seed=0))
    with open_session(url) as session:
        (template,) = verify_release(session, release).templates
    assert template.differences == ["seed 0: the run failed: timeout: scripted"] and template.items == 3


def test_verify_command_exit_codes_and_messages(tiny: tuple[str, Release], monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = tiny
    runner = CliRunner()
    result = runner.invoke(app, ["release", "verify", "tiny@1", "--db", url])
    assert result.exit_code == 0 and "tiny@1 reproduces" in result.output
    # a scripted regeneration in which one option of one item changed
    monkeypatch.setattr(reproducibility, "regenerate", _scripted(reproducibility.regenerate, _one_option_changed))
    result = runner.invoke(app, ["release", "verify", "tiny@1", "--db", url])
    assert result.exit_code == 1
    assert "does NOT reproduce" in result.output and "seed 1 item 0 differs in options" in result.output
    result = runner.invoke(app, ["release", "verify", "tiny@1", "--db", url, "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["reproduced"] is False
    assert report["templates"][0]["differences"] == ["seed 1 item 0 differs in options"]
    assert runner.invoke(app, ["release", "verify", "tiny@2", "--db", url]).exit_code == 1
