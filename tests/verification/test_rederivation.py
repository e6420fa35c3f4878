"""The model-free half of the re-derivation stage: what the solver is shown (no key, shuffled
options), how a value fits the options, running hostile solver programs in the sandbox, and the
verdict (including the cheapest ways to fool it)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from itemsmith.items.schema import Item
from itemsmith.sandbox import SandboxPool
from itemsmith.verification.rederivation import (
    RederivationConfig,
    SolverOutcome,
    assess,
    failing_line,
    fits,
    rotated,
    run_solver,
    solver_view,
)

MEAN = "def solve(item):\n    values = item['series'][0]['values']\n    return sum(values) / len(values)\n"


def _item(values: list[float], options: list[str], key: int, **extra: object) -> Item:
    return Item(question="What is the mean of the series?", options=options, answer_index=key,
                series=[{"name": "level", "unit": "m", "values": values}], **extra)


def _mean_items(count: int, *, shift: float = 0.0, seed: int = 1) -> list[Item]:
    """Items keyed with the mean of their series (plus `shift`), the key at a random position."""
    rng = random.Random(seed)
    items = []
    for _ in range(count):
        values = [round(rng.uniform(0, 10), 2) for _ in range(12)]
        key = round(sum(values) / len(values) + shift, 2)
        options = [f"{key + d:.2f}" for d in (0.0, 1.5, -1.5, 3.0)]
        rng.shuffle(options)
        items.append(_item(values, options, options.index(f"{key:.2f}")))
    return items


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool("synthetic", workers=1) as p:
        yield p


def _judge(items: list[Item], outcomes: list[SolverOutcome], **config: object):
    rng = random.Random(7)
    views = [solver_view(item, rng) for item in items]
    return assess([(0, item, order, outcome) for item, (_, order), outcome in zip(items, views, outcomes,
                                                                                   strict=True)],
                  solver="scripted:solver", program=MEAN, config=RederivationConfig(**config))


# --- what the solver sees -------------------------------------------------------------------


def test_the_view_holds_no_key_answer_rationale_or_metadata() -> None:
    item = _item([1.0, 2.0, 3.0], ["1.00", "2.00", "3.00", "4.00"], 1, rationale="the mean is 2.00",
                 metadata={"answer_value": 2.0, "record_ids": ["r1"]}, context="hourly levels")
    view, order = solver_view(item, random.Random(0))
    dumped = view.model_dump()
    assert set(dumped) == {"question", "options", "kind", "series", "context"}
    text = view.model_dump_json()
    assert "the mean is 2.00" not in text and "answer_value" not in text and "record_ids" not in text
    assert sorted(view.options) == sorted(item.options) and [item.options[i] for i in order] == view.options
    assert dumped["series"] == [{"name": "level", "unit": "m", "values": [1.0, 2.0, 3.0], "timestamps": None}]


def test_the_key_position_is_not_revealed_by_the_shown_order() -> None:
    """A template that always keys its first option: in the views the key sits anywhere."""
    rng = random.Random(3)
    positions = [solver_view(item, rng)[1].index(0) for item in
                 (_item([1.0, 2.0], ["a", "b", "c", "d"], 0) for _ in range(400))]
    counts = [positions.count(p) for p in range(4)]
    assert min(counts) > 60, counts  # about 100 each


def test_a_solver_that_returns_the_first_option_shown_does_not_agree() -> None:
    """The cheapest exploit of a template that keys option 0 always: answer the first option."""
    items = [_item([1.0, 2.0], ["rising", "falling", "flat", "noisy"], 0) for _ in range(120)]
    rng = random.Random(11)
    views = [solver_view(item, rng) for item in items]
    outcomes = [SolverOutcome(value=view.options[0]) for view, _ in views]
    report = assess([(0, item, order, outcome) for item, (_, order), outcome in zip(items, views, outcomes,
                                                                                     strict=True)],
                    solver="s", program=None, config=RederivationConfig())
    assert report.status == "disagrees" and report.agreement is not None and report.agreement < 0.4


# --- how values fit options -----------------------------------------------------------------


@pytest.mark.parametrize(("value", "options", "expected"), [
    (2.004, ["1.00", "2.00", "3.00"], [1]),  # within the options' rounding
    (2.006, ["1.00", "2.00", "3.00"], []),  # outside it: fits none
    (12.3, ["12", "12.3", "15.0"], [0, 1]),  # mixed precision: two options fit
    (45.0, ["45%", "50%", "55%"], [0]),
    (18.27, ["18.2 °C", "18.3 °C", "19.0 °C"], [1]),
    (18.25, ["18.2", "18.3", "19.0"], [0]),  # on the boundary of two neighbours: one of them, not both
    ("Falling", ["rising", "falling"], [1]),
    (True, ["False", "True"], [1]),
    ("yes", ["No", "Yes"], [1]),
    (1, ["rising", "falling", "flat"], [1]),  # a position in the shuffled options shown
    ("2024-01-03", ["2024-01-02", "2024-01-03 00:00"], [1]),
    ("12.30", ["12.3", "15.0"], [0]),
])
def test_values_fit_the_options_within_their_rounding(value: object, options: list[str], expected: list[int]) -> None:
    assert fits(value, options) == expected  # type: ignore[arg-type]


# --- the verdict ----------------------------------------------------------------------------


def test_a_solver_that_recomputes_the_key_agrees() -> None:
    items = _mean_items(50)
    outcomes = [SolverOutcome(value=sum(i.series[0].values) / len(i.series[0].values)) for i in items]
    report = _judge(items, outcomes)
    assert report.status == "agrees" and report.agree == 50 and report.examples == []


def test_a_shifted_key_disagrees_and_quotes_the_item() -> None:
    items = _mean_items(50, shift=1.5)  # keyed 1.5 above the mean: the mean is a distractor
    outcomes = [SolverOutcome(value=sum(i.series[0].values) / len(i.series[0].values)) for i in items]
    report = _judge(items, outcomes)
    assert report.status == "disagrees" and report.agree == 0
    example = report.examples[0]
    assert example.outcome == "disagree" and example.fits and example.fits != [example.key]
    assert example.value == pytest.approx(float(example.options[example.fits[0]]), abs=0.005)


def test_two_options_that_fit_the_value_are_ambiguous() -> None:
    items = [_item([2.0, 2.6], ["2", "2.3", "5.0", "7.0"], 1) for _ in range(20)]
    report = _judge(items, [SolverOutcome(value=2.3)] * 20)
    assert report.status == "ambiguous" and report.ambiguous == 20 and report.examples[0].fits == [0, 1]


def test_failures_are_never_agreement() -> None:
    items = _mean_items(20)
    report = _judge(items, [SolverOutcome(error="ZeroDivisionError: division by zero")] * 20)
    assert report.status == "not_rederivable" and report.agree == 0 and report.failed == 20
    assert "ZeroDivisionError" in (report.error or "") and "not re-derivable" in report.summary()


def test_a_few_failures_leave_the_rest_judged() -> None:
    items = _mean_items(20)
    outcomes = [SolverOutcome(value=sum(i.series[0].values) / len(i.series[0].values)) for i in items]
    outcomes[:3] = [SolverOutcome(error="KeyError: 'x'")] * 3
    report = _judge(items, outcomes)
    assert report.status == "agrees" and report.failed == 3 and report.agree == 17


# --- hostile programs in the sandbox --------------------------------------------------------


def _views(count: int = 3) -> list:
    rng = random.Random(5)
    return [solver_view(item, rng)[0] for item in _mean_items(count)]


def test_a_program_runs_over_many_views_in_the_sandbox(pool: SandboxPool) -> None:
    views = _views(30)
    outcomes = run_solver(MEAN, views, pool)
    assert [o.value for o in outcomes] == pytest.approx(
        [sum(v.series[0]["values"]) / len(v.series[0]["values"]) for v in views])


def test_a_program_that_calls_re_without_importing_it_still_runs(pool: SandboxPool) -> None:
    """The 2026-12-05 quick start's third template lost its re-derivation to `NameError: name 're'
    is not defined`: the prompt offers re, like np and math, which templates get without an import."""
    program = ("def solve(item):\n    n = len(re.findall(r'\\d', '12'))\n"
               "    values = item['series'][0]['values']\n    return sum(values) / len(values) + n - 2\n")
    views = _views(3)
    assert [o.value for o in run_solver(program, views, pool)] == pytest.approx(
        [sum(v.series[0]["values"]) / len(v.series[0]["values"]) for v in views])


@pytest.mark.parametrize(("program", "error"), [
    ("def solve(item):\n    return open('/etc/passwd').read()\n", "open"),
    ("import socket\ndef solve(item):\n    return socket.gethostname()\n", "import of \"socket\" is not allowed"),
    ("import os\ndef solve(item):\n    return os.listdir('/')\n", "import of \"os\" is not allowed"),
    ("def solve(item):\n    return item.__class__.__mro__\n", "_"),
    ("def solve(item):\n    return None\n", "returned None"),
    ("def solve(item):\n    return float('nan')\n", "returned nan"),
    ("def solve(item):\n    return 1 / 0\n", "ZeroDivisionError"),
    ("def solve(item):\n    return [1, 2]\n", "neither a number"),
    ("def solve(item):\n    while True:\n        pass\n", "wall-clock limit"),
])
def test_hostile_or_broken_programs_give_no_value(pool: SandboxPool, program: str, error: str) -> None:
    outcomes = run_solver(program, _views(2), pool, wall_s=2)
    assert all(o.value is None for o in outcomes)
    assert all(error in (o.error or "") for o in outcomes), outcomes


def test_a_program_cannot_forge_the_driver_report_of_a_key_it_never_saw(pool: SandboxPool) -> None:
    """A program that redefines the driver's names only spoils its own values: it has no key."""
    program = ("def solve(item):\n    return 0.0\n\ndef question(num_samples):\n"
               "    return [{'question': 'x', 'options': ['a', 'b'], 'answer_index': 0}] * num_samples\n")
    outcomes = run_solver(program, _views(3), pool)
    assert [o.value for o in outcomes] == [0.0, 0.0, 0.0]  # the driver's question() is the one that runs


def test_a_text_that_is_none_of_the_options_is_a_failure_not_a_disagreement() -> None:
    items = _mean_items(10)
    report = _judge(items, [SolverOutcome(value="The timestamp does not exist in the series.")] * 10)
    assert report.status == "not_rederivable" and report.disagree == 0 and report.failed == 10
    assert "none of the options" in (report.error or "")
    numbers = _judge(items, [SolverOutcome(value=-999.0)] * 10)  # a number that fits no option disagrees
    assert numbers.status == "disagrees" and numbers.disagree == 10


# --- the helpers a solver's program may call ----------------------------------------------------


def _dated_views() -> list:
    """Count items over a dated series: the question states a threshold and two dates, and the
    record's own name (a year-month) that a digit regex would read as numbers."""
    values = [6.7, 8.3, 3.9, 8.3, 7.2, 8.3, 8.3, 7.2, 5.6, 5.6, 6.7, 7.8, 8.3]
    stamps = [f"2012-12-{day:02d}" for day in range(16, 29)]
    question = ("How many values of the temp_max (degC) of record 2012-12 from 2012-12-18 to 2012-12-25 are "
                "above 6.7 degC?")
    item = Item(question=question, options=["3", "4", "5", "6"], answer_index=2,
                series=[{"name": "temp_max", "unit": "degC", "values": values, "timestamps": stamps}])
    return [solver_view(item, random.Random(0))[0]]


def test_the_helpers_read_the_stated_threshold_and_dated_window(pool: SandboxPool) -> None:
    """numbers_in() leaves the dates and the record's year-month out; values_between() keeps the values
    dated from the first date to the second, both included."""
    program = ("def solve(item):\n    q = item['question']\n    start, end = dates_in(q)\n"
               "    above = numbers_in(q)[0]\n    values = values_between(series_named(item, 'TEMP_MAX'), start, end)\n"
               "    return float(sum(v > above for v in values))\n")
    assert [o.value for o in run_solver(program, _dated_views(), pool)] == [5.0]  # 3.9 8.3 7.2 8.3 8.3 7.2 5.6 5.6


def test_a_misnamed_series_tells_the_solver_the_names_there_are(pool: SandboxPool) -> None:
    program = "def solve(item):\n    return sum(series_named(item, 'temperature')['values'])\n"
    (outcome,) = run_solver(program, _dated_views(), pool)
    assert outcome.value is None and "temp_max" in (outcome.error or "")


def test_values_of_a_series_in_place_of_the_series_tell_the_solver_what_it_takes(pool: SandboxPool) -> None:
    """The local solver's most frequent slip: the values list, which has no dates, passed for the series."""
    program = ("def solve(item):\n    start, end = dates_in(item['question'])\n"
               "    return sum(values_between(item['series'][0]['values'], start, end))\n")
    (outcome,) = run_solver(program, _dated_views(), pool)
    assert outcome.value is None and "takes a series dict" in (outcome.error or "") and "a list of values" in outcome.error


def test_the_line_a_program_fails_on_is_its_own_not_a_helpers(pool: SandboxPool) -> None:
    (view,) = _dated_views()
    into_helper = ("def solve(item):\n    q = item['question']\n"
                   "    shown = values_between(item['series'][0]['values'], *dates_in(q))\n    return len(shown)\n")
    assert failing_line(into_helper, view, pool) == "shown = values_between(item['series'][0]['values'], *dates_in(q))"
    shadowing = "def solve(item):\n    window = window(item)\n    return 1.0\n"
    assert failing_line(shadowing, view, pool) == "window = window(item)"
    assert failing_line("def solve(item):\n    return 3.0\n", view, pool) is None


def test_a_program_that_defines_a_helper_name_uses_its_own(pool: SandboxPool) -> None:
    program = "def numbers_in(text):\n    return [99.0]\n\ndef solve(item):\n    return numbers_in(item['question'])[0]\n"
    assert [o.value for o in run_solver(program, _dated_views(), pool)] == [99.0]


# --- an answer that moves with the options' order is no answer --------------------------------


def _assessed_in_both_orders(program: str, items: list[Item], pool: SandboxPool):
    rng = random.Random(11)
    views = [solver_view(item, rng) for item in items]
    shown = [view for view, _ in views]
    outcomes = run_solver(program, [*shown, *map(rotated, shown)], pool)
    return assess([(0, item, order, outcome) for item, (_, order), outcome in zip(items, views, outcomes[:len(items)],
                                                                                   strict=True)],
                  solver="scripted:solver", program=program, config=RederivationConfig(),
                  rotated_outcomes=outcomes[len(items):])


@pytest.mark.parametrize("pick", ["options[1]", "options[0]", "options[-1]"])
def test_a_program_that_returns_an_option_by_position_fails_instead_of_disagreeing(pool: SandboxPool,
                                                                                   pick: str) -> None:
    """A correct key must not be rejected because the solver answered a position: each item's
    answer is read again with the options rotated, and one that moves with them is a failure."""
    program = f"def solve(item):\n    options = item['options']\n    return {pick}\n"
    report = _assessed_in_both_orders(program, _mean_items(40), pool)
    assert report.disagree == 0 and report.agree == 0 and report.status == "not_rederivable"
    assert "another order" in (report.examples[0].error or "")


def test_an_option_chosen_by_its_content_survives_the_rotation(pool: SandboxPool) -> None:
    """Picking the option nearest the computed mean is a value, not a position: it agrees, and a
    shifted key still disagrees."""
    program = ("def solve(item):\n    values = item['series'][0]['values']\n    mean = sum(values) / len(values)\n"
               "    return min(item['options'], key=lambda o: abs(float(o) - mean))\n")
    assert _assessed_in_both_orders(program, _mean_items(30), pool).status == "agrees"
    assert _assessed_in_both_orders(program, _mean_items(30, shift=3.0), pool).status == "disagrees"


def test_an_option_picked_by_its_rank_among_values_is_content_not_position(pool: SandboxPool) -> None:
    """The smallest option is a statement about values, order-free: it is judged (here it disagrees
    with a mean key), not failed: the rotation does not excuse a wrong answer that reads content."""
    program = "def solve(item):\n    return min(item['options'], key=float)\n"
    report = _assessed_in_both_orders(program, _mean_items(30), pool)
    assert report.failed == 0 and report.disagree > 0
