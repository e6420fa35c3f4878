"""The users' corpus key checker (benchmarks/semantic_corpus/key_checks.py) can fail.

Items are built here by hand from the handlers' data, the way the templates word them, and the
checker must accept the right one and report each deliberate fault: a moved key, a tie, two options
that say the same thing, a series shifted against its timestamps, a count against an unprinted
threshold. The whole corpus runs by hand: `python benchmarks/semantic_corpus/key_checks.py`.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "semantic_corpus"
AIRLINE = "benchmarks/semantic_corpus/handlers/airline_passengers.py"
CO2 = "benchmarks/semantic_corpus/handlers/co2_weekly.py"

pytest.importorskip("sktime")
pytest.importorskip("statsmodels")


def load_checks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("key_checks", CORPUS / "key_checks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


checks = load_checks()


@pytest.fixture(scope="module")
def airline() -> Any:
    return checks.Data(AIRLINE)


@pytest.fixture(scope="module")
def co2() -> Any:
    return checks.Data(CO2)


def channel(values: pd.Series, name: str) -> dict[str, Any]:
    return {"name": name, "values": [float(v) for v in values],
            "timestamps": [t.strftime("%Y-%m-%d") for t in values.index]}


def mc(question: str, options: list[str], key: int, *shown: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "mc", "question": question, "options": options, "answer_index": key, "series": list(shown)}


def peak_month_item(airline: Any, year: str, options: list[str], key: int) -> dict[str, Any]:
    return mc(f"The series gives the monthly number of international airline passengers (thousands) in {year}. "
              "In which month of that year were there the most passengers?", options, key,
              channel(airline.frame(year)["passengers"], "passengers"))


def test_every_users_template_has_a_checker() -> None:
    entries = tomllib.loads((CORPUS / "manifest.toml").read_text())["template"]
    stems = {Path(e.get("base") or e["file"]).stem for e in entries if e["file"].startswith(checks.FOLDERS)}
    assert stems and stems <= set(checks.CHECKERS)


def test_right_key_passes_and_a_moved_key_fails(airline: Any) -> None:
    check = checks.CHECKERS["airline_peak_month"]
    item = peak_month_item(airline, "1954", ["June", "July", "August", "September"], 1)  # July 1954: 302
    assert check(item, airline) == []
    assert any("is wrong" in p for p in check(checks.shifted(item), airline))


def test_two_months_sharing_the_peak_are_two_correct_options(airline: Any) -> None:
    item = peak_month_item(airline, "1949", ["June", "July", "August", "September"], 1)  # July = August = 148
    assert any("2 options are correct" in p for p in checks.CHECKERS["airline_peak_month"](item, airline))


def test_a_month_written_twice_is_reported(airline: Any) -> None:
    item = peak_month_item(airline, "1954", ["June", "July", "Jul", "September"], 1)
    assert any("same thing twice" in p for p in checks.CHECKERS["airline_peak_month"](item, airline))


def co2_difference_item(co2: Any, shift: int = 0) -> dict[str, Any]:
    a, b = co2.frame("1993")["co2"].dropna(), co2.frame("1994")["co2"].dropna()  # 1994 has 53 weeks
    shown_b = pd.Series(b.shift(-shift).ffill().to_numpy(), index=b.index)
    truth = b.mean() - a.mean()
    options = [f"{truth + d:.2f} ppm" for d in (-0.7, 0.0, 0.5, 1.1)]
    return mc("The two series are the weekly CO2 concentrations (ppm) measured at Mauna Loa in 1993 and in 1994 "
              "(weeks without a measurement are left out). Taking each year's mean over its measured weeks, by how "
              "much did the mean of 1994 exceed the mean of 1993?", options, 1,
              channel(a, "co2 1993"), channel(shown_b, "co2 1994"))


def test_a_year_of_53_weeks_is_no_problem_but_a_shifted_series_is(co2: Any) -> None:
    check = checks.CHECKERS["co2_annual_mean_difference"]
    assert check(co2_difference_item(co2), co2) == []
    assert any("shows" in p for p in check(co2_difference_item(co2, shift=1), co2))


def test_approximately_with_close_options_is_ambiguous(co2: Any) -> None:
    item = co2_difference_item(co2)
    truth = checks.number(item["options"][1])
    item = copy.deepcopy(item)
    item["question"] = item["question"].replace("by how much", "by approximately how much")
    item["options"] = [f"{truth + d:.2f} ppm" for d in (-0.02, 0.0, 0.01, 0.3)]
    assert any("options are correct" in p for p in checks.CHECKERS["co2_annual_mean_difference"](item, co2))


def test_a_count_is_checked_against_the_printed_threshold() -> None:
    stocks = checks.Data("stocks")
    adj = stocks.frame("IBM-2013")["adj_close"].iloc[:20]
    exact = float(adj.iloc[5])
    printed = f"{exact:.2f}"
    against_printed, against_exact = int((adj > float(printed)).sum()), int((adj > exact).sum())
    assert against_printed != against_exact  # the day itself lies between the two
    days = adj.index.strftime("%Y-%m-%d")
    question = (f"Adjusted closing prices (USD) of IBM on the 20 trading days from {days[0]} to {days[-1]}. On how "
                f"many of these days was the adjusted close above {printed} USD?")
    check = checks.CHECKERS["stocks_days_above_price"]
    options = sorted({against_printed, against_exact, against_printed + 3, against_printed - 3})
    right = mc(question, [str(o) for o in options], options.index(against_printed), channel(adj, "IBM adj_close"))
    unprinted = {**right, "answer_index": options.index(against_exact)}
    assert check(right, stocks) == []
    assert check(unprinted, stocks)


def test_encoded_key_in_the_context_is_found() -> None:
    item = mc("What is the mean?", ["2.37 m/s", "2.96 m/s", "1.70 m/s"], 1)
    assert not checks.answer_in_text(item)
    assert checks.answer_in_text({**item, "context": f"Item reference {b'2.96 m/s'.hex()}."})
    assert checks.answer_in_text({**item, "context": "Check string: s/m 69.2."})
    assert checks.answer_in_text({**item, "context": "Control letter: E."})  # B shifted by three
