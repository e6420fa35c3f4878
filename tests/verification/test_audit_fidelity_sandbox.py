"""Data fidelity and key statistics through the whole audit (`audit_template`): templates on the
built-in weather handler run in the sandbox, the records their items name are read by the trusted
fetch template in the sandbox, and the audit compares. A sound 7-day-mean template that declares
`derived=` passes; the same template without the declaration, one showing Fahrenheit labelled
Celsius, one keyed from temp_min under a temp_max question, and one keyed right at small sizes and
wrong at larger ones fail, each with feedback that says what differs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from itemsmith.sandbox.executor import SandboxPool
from itemsmith.verification.audit import audit_template

pytest.importorskip("vega_datasets")

HANDLER = "weather"

TEMPLATE = '''
def question(num_samples):
    ids = sorted(handler.records()["record_id"].tolist())
    frame = pd.concat([handler.series(rid) for rid in ids])
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        size = int(rng.integers(20, 41))
        start = int(rng.integers(0, len(frame) - size - 8))
        part = frame.iloc[start:start + size + 6]
        dates = list(part.index.strftime("%Y-%m-%d"))[6:]
        high = part["temp_max"].to_numpy(dtype=float)
        low = part["temp_min"].to_numpy(dtype=float)
{body}
    return items
'''

ROLLING = '''
        shown = np.convolve(high, np.ones(7) / 7, mode="valid")
        try:
            key, wrong = numeric_options(float(shown.mean()), spread=1.0, decimals=2, unit="°C")
        except ValueError:
            continue
        items.append(mc_item(
            f"This is the 7-day mean of the daily maximum temperature in Seattle from {{dates[0]}} to {{dates[-1]}}. "
            "What is its average over these days?", key, wrong,
            series=[series(shown, name="{name}", timestamps=dates, unit="°C"{derived})],
            metadata={{"record_ids": sorted({{d[:7] for d in list(part.index.strftime("%Y-%m-%d"))}})}}))
'''

WINDOW = '''
        shown = {shown}
        keyed = {keyed}
        try:
            key, wrong = numeric_options(float({statistic}), spread=1.5, decimals=1, unit="{unit}")
        except ValueError:
            continue
        items.append(mc_item(
            f"These are the daily maximum temperatures in Seattle from {{dates[0]}} to {{dates[-1]}}. "
            "What was the {word} of them?", key, wrong,
            series=[series(shown, name="temp_max", timestamps=dates, unit="{unit}")],
            metadata={{"record_ids": sorted({{d[:7] for d in list(part.index.strftime("%Y-%m-%d"))}})}}))
'''


def template(body: str) -> str:
    return TEMPLATE.format(body=body)


def window(shown: str = "high[6:]", keyed: str = "high[6:]", statistic: str = "keyed.mean()", unit: str = "°C",
           word: str = "average") -> str:
    return template(WINDOW.format(shown=shown, keyed=keyed, statistic=statistic, unit=unit, word=word))


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    made = SandboxPool(HANDLER)
    yield made
    made.close()


def test_a_declared_rolling_mean_passes(pool: SandboxPool) -> None:
    source = template(ROLLING.format(name="temp_max 7-day mean", derived=', derived="7-day mean of temp_max"'))
    report = audit_template(source, HANDLER, pool=pool)
    assert report.passed, report.feedback
    fidelity = next(f for f in report.findings if f.check == "data_fidelity")
    assert fidelity.passed and "made as its derived= says" in fidelity.message


def test_a_rolling_mean_named_as_one_passes_without_derived(pool: SandboxPool) -> None:
    report = audit_template(template(ROLLING.format(name="temp_max 7-day mean", derived="")), HANDLER, pool=pool)
    assert "data_fidelity" not in report.failed_checks, report.feedback


def test_an_undeclared_rolling_mean_fails_with_what_to_write(pool: SandboxPool) -> None:
    report = audit_template(template(ROLLING.format(name="temp_max", derived="")), HANDLER, pool=pool)
    assert "data_fidelity" in report.failed_checks
    assert "is not at its timestamps a column" in report.feedback and 'derived="<how it was made' in report.feedback


def test_fahrenheit_labelled_celsius_fails(pool: SandboxPool) -> None:
    report = audit_template(window(shown="high[6:] * 9 / 5 + 32", keyed="shown"), HANDLER, pool=pool)
    assert "data_fidelity" in report.failed_checks and "is not at its timestamps a column" in report.feedback


def test_a_key_from_temp_min_under_a_temp_max_question_fails(pool: SandboxPool) -> None:
    report = audit_template(window(keyed="low[6:]"), HANDLER, pool=pool)
    assert "key_is_statistic" in report.failed_checks, report.feedback
    assert "data_fidelity" not in report.failed_checks


def test_a_key_right_at_small_sizes_and_wrong_at_larger_ones_fails(pool: SandboxPool) -> None:
    plan = [(seed, 30) for seed in range(101, 109)]  # the first seed also runs at 60
    report = audit_template(window(keyed="high[6:] if num_samples < 60 else high[5:-1]"), HANDLER, pool=pool,
                            plan=plan)
    assert {"key_consistency", "key_is_statistic"} & set(report.failed_checks), report.feedback


def test_a_sound_window_template_passes(pool: SandboxPool) -> None:
    report = audit_template(window(), HANDLER, pool=pool)
    assert report.passed, report.feedback
