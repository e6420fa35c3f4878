"""Red team for the item audit and the seed-robust checks: templates written to fool them, run
through the sandbox (`audit_template`), each of which must fail naming its shortcut; a
well-made template and known-good curated templates must pass."""

from __future__ import annotations

import numpy as np
import pytest

from itemsmith.items.helpers import mc_item, numeric_options, series
from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox import RunResult, SandboxPool
from itemsmith.templates_bank.curated import get_curated
from itemsmith.verification.audit import AuditConfig, audit_template

HANDLER = "synthetic"
FIXED_PLAN = [(1000 + i, 30) for i in range(8)]  # reproducible runs for the pass/fail contrasts

SKELETON = '''
def question(num_samples):
    items = []
    for _ in range(num_samples):
        values = rng.normal(float(rng.uniform(20, 80)), float(rng.uniform(1, 5)), 40)
        mean = float(values.mean())
{body}
    return items
'''


def template(body: str, prelude: str = "") -> str:
    return prelude + SKELETON.format(body="\n".join("        " + line for line in body.strip().splitlines()))


GOOD = template('''
key, wrong = numeric_options(mean, spread=float(rng.uniform(0.5, 3)), decimals=1)
items.append(mc_item("What is the mean of the series?", key, wrong, series=[series(values)]))
''')


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(HANDLER) as p:
        yield p


def test_well_made_template_passes(pool: SandboxPool) -> None:
    report = audit_template(GOOD, HANDLER, pool=pool, plan=FIXED_PLAN)
    assert report.passed, report.feedback
    assert report.error is None and report.n_items >= AuditConfig().min_items
    assert {"determinism", "key_consistency"} <= {f.check for f in report.findings if f.passed}


@pytest.mark.parametrize("template_id", ["exam_base_pattern", "feat_trend_classify", "feat_extreme_date"])
def test_known_good_curated_templates_pass(template_id: str) -> None:
    curated = get_curated(template_id)
    report = audit_template(curated.source, curated.handler or HANDLER, plan=FIXED_PLAN)
    assert report.passed, report.feedback


def test_fresh_seeds_and_sizes_are_recorded_and_reproducible(pool: SandboxPool) -> None:
    first = audit_template(GOOD, HANDLER, pool=pool)
    second = audit_template(GOOD, HANDLER, pool=pool)
    assert first.passed and second.passed, (first.feedback, second.feedback)
    assert len(first.seeds) == len(first.sizes) and not set(first.seeds) & set(second.seeds)
    assert 5 in first.sizes  # the first seed is also run at the size checks used to run
    plan = list(zip(first.seeds, first.sizes))[:AuditConfig().seeds]
    confirmation = list(zip(first.confirmation_seeds, first.confirmation_sizes, strict=True)) or None
    again = audit_template(GOOD, HANDLER, pool=pool, plan=plan, confirmation_plan=confirmation)
    assert [s.model_dump() for s in again.solvers] == [s.model_dump() for s in first.solvers]


def test_correct_only_when_num_samples_is_five(pool: SandboxPool) -> None:
    source = template('''
key, wrong = numeric_options(mean, spread=2.0, decimals=1)
answer = key if num_samples == 5 else wrong[0]
others = [o for o in [key] + wrong if o != answer]
items.append(mc_item("What is the mean of the series?", answer, others, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert not report.passed and "key_consistency" in report.failed_checks
    assert "never on num_samples" in report.feedback


def _tags(seeds: tuple[int, ...]) -> list[int]:
    return [int(np.random.default_rng(s).integers(1 << 30)) for s in seeds]


def test_correct_only_for_seeds_zero_and_one(pool: SandboxPool) -> None:
    """Fingerprints rng: well made under seeds 0 and 1 (what checks used to run), lazy elsewhere
    (the key is always the largest option)."""
    source = template('''
key, wrong = numeric_options(mean, spread=2.0, decimals=1)
if not GOOD_SEED:
    key, wrong = f"{mean + 4.5:.1f}", [f"{mean + d:.1f}" for d in (-1.5, 0.5, 2.5)]
items.append(mc_item("What is the mean of the series?", key, wrong, series=[series(values)]))
''', prelude=f"GOOD_SEED = int(rng.integers(1 << 30)) in {_tags((0, 1))}\n")
    assert audit_template(source, HANDLER, pool=pool, plan=[(0, 120), (1, 120)]).passed  # the old, fixed seeds
    report = audit_template(source, HANDLER, pool=pool)
    assert not report.passed and "numeric_rank" in report.shortcuts
    assert "the largest numeric option" in report.solver("numeric_rank").detail


@pytest.mark.parametrize("reader", ["datetime.datetime.now().microsecond % 2 == 0", "id(values) % 32 == 0",
                                    "hash(rng) % 2 == 0", "pd.Timestamp.today().day % 2 == 0"])
def test_keyed_on_the_clock_or_identity(pool: SandboxPool, reader: str) -> None:
    source = template(f'''
key, wrong = numeric_options(mean, spread=2.0, decimals=1)
answer = key if {reader} else wrong[0]
others = [o for o in [key] + wrong if o != answer]
items.append(mc_item("What is the mean of the series?", answer, others, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert not report.passed and report.error is not None
    assert "not available in templates" in report.error


def test_clock_through_a_string_is_refused(pool: SandboxPool) -> None:
    source = template('''
key, wrong = numeric_options(mean, spread=2.0, decimals=1)
answer = key if pd.Timestamp("now").microsecond % 2 == 0 else wrong[0]
others = [o for o in [key] + wrong if o != answer]
items.append(mc_item("What is the mean of the series?", answer, others, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert not report.passed and "clock" in (report.error or "")


class ProcessDependentPool:
    """Stands in for a sandbox whose second process gives other items for the same seed (what a
    template keyed on memory addresses does, only sometimes): the audit must notice."""

    size = 1

    def __init__(self) -> None:
        self.calls: dict[tuple[int, int], int] = {}

    def run(self, source: str, *, num_samples: int, seed: int, limits=None) -> RunResult:
        process = self.calls[(seed, num_samples)] = self.calls.get((seed, num_samples), 0) + 1
        rng = np.random.default_rng(seed)
        items = []
        for i in range(num_samples):
            values = rng.normal(50, 3, 20)
            key, wrong = numeric_options(float(values.mean()), spread=1.0, decimals=2, rng=rng)
            answer = key if process == 1 or i % 2 else wrong[0]
            options = [key, *wrong]
            items.append(Item.model_validate(mc_item("Mean?", answer, [o for o in options if o != answer], rng=rng,
                                                     series=[series(values)])).model_dump(mode="json"))
        return RunResult(status=RunStatus.ok, items=items)


def test_items_that_differ_between_processes_fail_determinism() -> None:
    report = audit_template("unused", HANDLER, pool=ProcessDependentPool(), plan=FIXED_PLAN)  # type: ignore[arg-type]
    assert not report.passed and "determinism" in report.failed_checks
    assert "second sandbox process" in report.feedback


def test_key_always_in_the_middle(pool: SandboxPool) -> None:
    source = template('''
wrong = [round(mean + d, 1) for d in (-3, 3, 6)]
items.append(mc_item("What is the mean of the series?", round(mean, 1), wrong, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert {"numeric_rank", "centre"} <= set(report.shortcuts)
    assert "draw the key's rank uniformly" in report.feedback and "numeric_options(" in report.feedback


def test_key_rank_fixed_without_symmetry(pool: SandboxPool) -> None:
    source = template('''
wrong = [f"{mean * f:.1f}" for f in (0.5, 0.8, 0.9)]
items.append(mc_item("What is the mean of the series?", f"{mean:.1f}", wrong, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert "numeric_rank" in report.shortcuts and "the largest numeric option" in report.feedback


def test_unrounded_key_among_rounded_distractors(pool: SandboxPool) -> None:
    source = template('''
_, wrong = numeric_options(mean, spread=2.0, decimals=1)
items.append(mc_item("What is the mean of the series?", str(mean), wrong, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert "odd_format" in report.shortcuts and "unrounded key" in report.feedback


def test_memorizable_answer_text(pool: SandboxPool) -> None:
    source = template('''
names = ["north", "south", "east", "west", "centre", "coast"]
hottest = names[int(rng.integers(2))]
wrong = [str(n) for n in rng.choice([n for n in names if n != hottest], 3, replace=False)]
items.append(mc_item(f"Which station recorded the series (mean {mean:.1f})?", hottest, wrong,
                     series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert "memorization" in report.shortcuts and "the key's own distribution" in report.feedback


def test_a_pool_of_four_items_is_reported_small_not_rejected(pool: SandboxPool) -> None:
    source = template('''
pick = np.random.default_rng(int(rng.integers(4)))
values = pick.normal(50, 3, 40)
key, wrong = numeric_options(float(values.mean()), spread=1.0, decimals=1, rng=pick)
items.append(mc_item("What is the mean of the series?", key, wrong, series=[series(values)]))
''')
    report = audit_template(source, HANDLER, pool=pool)
    assert report.passed, report.feedback
    assert report.pool is not None and report.pool.distinct == 4 and report.pool.small


@pytest.mark.parametrize("body, message", [
    ("pass", "question(5) returned 0 items"),
    ("if len(items) < 2:\n    items.append(mc_item('q?', '1', ['2', '3', '4'], series=[series(values)]))",
     "question(5) returned 2 items"),
])
def test_too_few_items_is_a_clear_failure(pool: SandboxPool, body: str, message: str) -> None:
    report = audit_template(template(body), HANDLER, pool=pool, plan=[(3, 5), (4, 5)])
    assert not report.passed and message in (report.error or "")
    assert report.feedback and "could not draw items" in report.feedback
