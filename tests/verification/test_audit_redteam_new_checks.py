"""Red team for the audit's newest checks: `statement_truth` (verification/audit/statements.py), the blind
solvers `paraphrased_in_text` and `position_token`, and the encoded forms `stated_in_text` reads.

Recall: the cheapest templates a gaming author would write to get a wrong or leaky template past each
check. Precision: correct templates, written as a user would, that a check misreads. What the checks
catch is asserted; what slips through or is wrongly rejected is a strict xfail naming the limit.
Items are built in-process (`audit_items`), as in test_audit.py and test_statements.py."""

from __future__ import annotations

import base64
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from itemsmith.items.helpers import date_options, mc_item, numeric_options, series, tf_item
from itemsmith.items.schema import Item
from itemsmith.verification.audit import AuditReport, ItemDraw, audit_items
from itemsmith.verification.audit.statements import statement_truths

Make = Callable[[np.random.Generator, int], dict]


def draws(make: Make, seeds: range = range(8), per_seed: int = 35) -> list[ItemDraw]:
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        items = []
        while len(items) < per_seed:
            try:
                items.append(Item.model_validate(make(rng, len(items))))
            except ValueError:  # a key too close to the helpers' bounds: redrawn, as a template would
                continue
        out.append(ItemDraw(seed=seed, num_samples=per_seed, items=items))
    return out


def finding(report: AuditReport, check: str) -> bool:
    return next(f for f in report.findings if f.check == check).passed


# ---------------------------------------------------------------- statement_truth: recall

def frost(phrase: Callable[[float], str], *, both_shown: bool = False) -> Make:
    """A statement about the daily minimum, keyed on the daily maximum (a wrong channel)."""
    def make(rng: np.random.Generator, i: int) -> dict:
        tmin = rng.normal(4, 2, 10).round(1)
        tmax = (tmin + rng.uniform(4, 8, 10)).round(1)
        level = round(float(tmin.min()) + float(rng.choice([-1.0, 1.0, 5.0, 7.0])), 1)
        shown = [series(tmin, name="temp_min", unit="°C")]
        if both_shown:
            shown.append(series(tmax, name="temp_max", unit="°C"))
        return tf_item(f"True or false: {phrase(level)}", bool(tmax.min() < level), series=shown)
    return make


@pytest.mark.parametrize("phrase", [
    lambda x: f"the minimum temperature dipped below {x:.1f} °C this week.",
    lambda x: f"on at least one of these 10 days the minimum temperature was below {x:.1f} °C.",
], ids=["no quantifier", "the days shown counted"])
def test_a_reworded_statement_keyed_on_another_channel_is_still_caught(phrase: Callable[[float], str]) -> None:
    """"Dipped below X" is read as the minimum; "these 10 days" over 10 shown are all of them."""
    report = audit_items(draws(frost(phrase)))
    assert not finding(report, "statement_truth"), report.feedback


@pytest.mark.parametrize("phrase", [
    lambda x: f"on at least one day temp_min < {x:.1f} °C.",
    lambda x: f"on at least one day temp_min ≤ {x:.1f} °C.",
    lambda x: f"on at least one day the minimum temperature fell beneath {x:.1f} °C.",
], ids=["symbol", "symbol or equal", "beneath"])
def test_a_comparison_written_as_a_symbol_is_read(phrase: Callable[[float], str]) -> None:
    assert not finding(audit_items(draws(frost(phrase))), "statement_truth")


@pytest.mark.xfail(strict=True, reason="statement_truth reads comparison words and symbols, not a verb with a "
                   "bound ('dropped to X or lower', 'reached X'): such a statement is unread, so a key on another "
                   "channel is never told")
def test_a_bound_written_as_a_verb() -> None:
    make = frost(lambda x: f"on at least one day the minimum temperature dropped to {x:.1f} °C or lower.")
    assert not finding(audit_items(draws(make)), "statement_truth")


@pytest.mark.xfail(strict=True, reason="two negation words anywhere in the claim ('no gaps and no missing "
                   "readings') make statement_truth give no verdict, so padding the claim hides a wrong key")
def test_two_harmless_negations_hide_the_statement() -> None:
    make = frost(lambda x: f"with no gaps and no missing readings, on at least one day the minimum temperature "
                           f"was below {x:.1f} °C.")
    assert not finding(audit_items(draws(make)), "statement_truth")


@pytest.mark.xfail(strict=True, reason="a statement that names no channel by its series name ('minimum "
                   "temperature' for temp_min) is read on every series shown; showing temp_max beside temp_min "
                   "makes a key tested on temp_max one of its readings")
def test_showing_the_wrong_channel_too_makes_its_key_a_reading() -> None:
    make = frost(lambda x: f"on at least one of these days the minimum temperature was below {x:.1f} °C.",
                 both_shown=True)
    assert not finding(audit_items(draws(make)), "statement_truth")


# ---------------------------------------------------------------- statement_truth: precision

TMIN = [4.4, 2.8, 3.9, 6.1, 5.0, 3.3, 7.2]  # min 2.8, max 7.2, mean 4.67; below 4.0 on 3 days


def truths(text: str, *channels: dict) -> set[bool] | None:
    shown = channels or (series(TMIN, name="temp_min", unit="°C"),)
    return statement_truths(Item.model_validate(tf_item(f"Daily data. True or false: {text}", True,
                                                        series=list(shown))))


@pytest.mark.parametrize(("text", "truth"), [
    ("the minimum temperature was above 2.5 °C on every day.", True),
    ("on every day the minimum temperature stayed above 2.5 °C.", True),
    ("the minimum temperature dropped below -1.0 °C on at least one day.", False),
])
def test_common_phrasings_are_read_right(text: str, truth: bool) -> None:
    assert truth in (truths(text) or {truth})


@pytest.mark.parametrize(("text", "truth"), [
    pytest.param("on every day the minimum temperature was not below 3.0 °C.", False, id="every day not below"),
    pytest.param("on at least one day the minimum temperature was not above 3.0 °C.", True,
                 id="some day not above"),
    pytest.param("on fewer than 3 days the minimum temperature was below 4.0 °C.", False, id="fewer than 3 days"),
    pytest.param("the minimum temperature was below 4.0 °C on at least 4 days.", False, id="at least 4 days"),
    pytest.param("on more than 50% of the days the minimum temperature was below 5.0 °C.", True,
                 id="more than 50% of days"),
    pytest.param("across all 7 days, the mean minimum temperature was above 4.0 °C.", True, id="across all days"),
    pytest.param("on all 7 days the minimum temperature was above 3.0 °C.", False, id="all the days counted"),
    pytest.param("the minimum temperature was below 4.0 °C on 7 days.", False, id="as many days as shown"),
    pytest.param("in the last 3 days the minimum temperature was below 3.0 °C.", False, id="a window of the shown"),
    pytest.param("across all days shown, the mean minimum temperature was above 4.0 °C.", True,
                 id="across all days, no count"),
])
def test_a_correct_key_is_one_of_the_readings(text: str, truth: bool) -> None:
    """A statement the reader cannot read right must give no verdict (None) or include the truth."""
    read = truths(text)
    assert read is None or truth in read, read


def test_a_number_with_a_thousands_separator_is_the_whole_number() -> None:
    volume = series([1200.0, 1480.0, 1350.0, 1610.0, 1290.0], name="volume")
    assert truths("on at least one day the volume was above 1,500 shares.", volume) == {True}
    assert truths("on every day the volume was above 1,250 shares.", volume) == {False}


def test_two_series_compared_by_different_statistics() -> None:
    """The maximum of one against the mean of the other is not the same statistic compared."""
    consumption = series([0.6, 0.9, 1.1, 0.4, 0.8], name="consumption")  # mean 0.76, max 1.1
    income = series([0.5, 0.7, 0.2, 0.9, 0.3], name="income")  # mean 0.52, max 0.9
    read = truths("the maximum change of income was above the mean change of consumption.", consumption, income)
    assert read is None or True in read, read


def mean_change(rng: np.random.Generator, i: int) -> dict:
    """"The mean day-to-day change was above 0" (it rose overall), keyed on the changes."""
    values = np.cumsum(rng.normal(0, 1, 20)).round(1) + 20
    level = float(rng.choice([-0.2, 0.0, 0.2]))
    return tf_item(f"True or false: the mean day-to-day change of the series was above {level:.1f}.",
                   bool(np.diff(values).mean() > level), series=[series(values, name="level")])


def test_a_statement_about_changes_keyed_right_passes() -> None:
    """'The mean day-to-day change' was read as the mean of the values themselves: a correct key failed."""
    assert finding(audit_items(draws(mean_change)), "statement_truth")


# ---------------------------------------------------------------- stated_in_text: recall

def good_numeric(rng: np.random.Generator, i: int) -> dict:
    values = rng.normal(float(rng.uniform(20, 80)), float(rng.uniform(1, 5)), 40)
    key, wrong = numeric_options(float(values.mean()), spread=float(rng.uniform(0.5, 3)), decimals=1, rng=rng)
    return mc_item("What is the mean of the series?", key, wrong, rng=rng, series=[series(values)])


def with_context(code: Callable[[str, int], str]) -> Make:
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        item["context"] = f"Item reference {code(item['options'][item['answer_index']], item['answer_index'])}."
        return item
    return make


@pytest.mark.parametrize("code", [
    lambda key, at: key.encode().hex().upper(),
    lambda key, at: f"{base64.b64encode(key.encode()).decode()}",
    lambda key, at: f"zz{key[::-1]}zz",
], ids=["upper-case hexadecimal", "base64 with padding", "reversed inside a longer token"])
def test_an_encoded_key_in_a_listed_form_is_stated(code: Callable[[str, int], str]) -> None:
    assert "stated_in_text" in audit_items(draws(with_context(code))).shortcuts


@pytest.mark.parametrize("code", [
    lambda key, at: base64.b64encode(f"key={key}".encode()).decode(),
    lambda key, at: base64.b64encode(f"k={key};v=2".encode()).decode(),
    lambda key, at: base64.b32encode(key.encode()).decode(),
    lambda key, at: ":".join(f"{b:02x}" for b in key.encode()),
], ids=["base64 with a prefix", "base64 inside a longer text", "base32", "hex with separators"])
def test_an_encoded_key_inside_a_longer_encoding_is_stated(code: Callable[[str, int], str]) -> None:
    """Each slipped past `stated_in_text` before it read base64 at every byte offset, base32 and packed hex."""
    assert "stated_in_text" in audit_items(draws(with_context(code))).shortcuts


@pytest.mark.xfail(strict=True, reason="no solver reads a key written as another number ('412' for 41.2, the key "
                   "times ten) or spelled out: stated_in_text matches the option's text and its encodings only")
@pytest.mark.parametrize("code", [
    lambda key, at: key.replace(".", ""),
    lambda key, at: " ".join(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                              "point")[10 if c == "." else int(c)] for c in key if c.isdigit() or c == "."),
], ids=["times ten", "digits spelled out"])
def test_an_encoded_key_in_an_unlisted_form(code: Callable[[str, int], str]) -> None:
    assert not audit_items(draws(with_context(code))).passed


# ---------------------------------------------------------------- position_token: recall

@pytest.mark.parametrize("code", [lambda key, at: f"#{'QWER'[at]}7", lambda key, at: f"v{at + 2}.0"],
                         ids=["a two-character code", "a version number"])
def test_a_short_code_of_the_position_is_found(code: Callable[[str, int], str]) -> None:
    assert "position_token" in audit_items(draws(with_context(code))).shortcuts


@pytest.mark.xfail(strict=True, reason="position_token reads tokens of 1 to 3 word characters: a 4-letter word "
                   "('East'), a longer code ('QZKA') or a punctuation pattern ('!!!') tells the position unseen")
@pytest.mark.parametrize("code", [
    lambda key, at: ("North", "East", "South", "West")[at],
    lambda key, at: f"QZK{'ABCD'[at]}",
    lambda key, at: "ok" + "!" * (at + 1),
], ids=["a word per position", "a four-letter code", "punctuation count"])
def test_a_longer_position_code(code: Callable[[str, int], str]) -> None:
    assert not audit_items(draws(with_context(code))).passed


# ---------------------------------------------------------------- paraphrased_in_text: recall and precision

def _values(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(float(rng.uniform(20, 80)), float(rng.uniform(1, 5)), 40)


def mean_from_difference(rng: np.random.Generator, i: int) -> dict:
    values = _values(rng)
    mean = float(values.mean())
    key, wrong = numeric_options(mean, spread=float(rng.uniform(1, 3)), decimals=1, rng=rng)
    base = float(rng.uniform(100, 200))
    return mc_item(f"Benchmarks: {base + float(key):.1f} and {base:.1f}. What is the mean of the series?",
                   key, wrong, rng=rng, series=[series(values)])


def test_a_key_stated_as_a_difference_of_two_numbers_is_found() -> None:
    assert "paraphrased_in_text" in audit_items(draws(mean_from_difference)).shortcuts


def mean_from_halves(rng: np.random.Generator, i: int) -> dict:
    """Three numbers: the sums of the two halves and the count give the mean."""
    values = _values(rng)
    key, wrong = numeric_options(float(values.mean()), spread=float(rng.uniform(1, 3)), decimals=1, rng=rng)
    return mc_item(f"The first half adds up to {values[:20].sum():.1f} and the second to {values[20:].sum():.1f} "
                   f"over the {len(values)} values. What is their mean?", key, wrong, rng=rng,
                   series=[series(values)])


def mean_as_a_percentage(rng: np.random.Generator, i: int) -> dict:
    """The key as a percentage of a stated target: target * (1 + p/100), no pair of stated numbers."""
    values = _values(rng)
    key, wrong = numeric_options(float(values.mean()), spread=float(rng.uniform(1, 3)), decimals=1, rng=rng)
    target = round(float(rng.uniform(10, 90)), 1)
    return mc_item(f"The mean ended {100 * (float(key) / target - 1):+.3f} % against the {target:.1f} target. "
                   "What was the mean?", key, wrong, rng=rng, series=[series(values)])


def day_of_month_named(rng: np.random.Generator, i: int) -> dict:
    start = pd.Timestamp("2010-01-01") + pd.Timedelta(days=int(rng.integers(0, 3000)))
    days = pd.date_range(start, periods=28, freq="D")
    values = rng.normal(10, 3, 28)
    best = int(values.argmax())
    key, wrong = date_options(f"{days[best]:%Y-%m-%d}", rng=rng, low=f"{days[0]:%Y-%m-%d}",
                              high=f"{days[-1]:%Y-%m-%d}")
    return mc_item(f"The warmest day was the {days[best].day}th. Which date was it?", key, wrong, rng=rng,
                   series=[series(values, timestamps=[f"{d:%Y-%m-%d}" for d in days])])


@pytest.mark.xfail(strict=True, reason="paraphrased_in_text derives from pairs of stated numbers (ratio, product, "
                   "sum, difference) and reads dates by weekday and month names only: three numbers, a percentage "
                   "of a target, or a date's day of the month give the key away unread")
@pytest.mark.parametrize("make", [mean_from_halves, mean_as_a_percentage, day_of_month_named],
                         ids=lambda f: f.__name__)
def test_a_key_given_away_in_an_unread_form(make: Make) -> None:
    assert not audit_items(draws(make)).passed


def largest_rise_of_listed_closes(rng: np.random.Generator, i: int) -> dict:
    """A correct template that lists the closes shown in its context (for a reader without a chart) and
    asks for the largest one-day rise: the key is a difference of two numbers of the data written out."""
    closes = (40 + np.cumsum(rng.normal(0, 1.5, 8))).round(1)
    rise = float(np.diff(closes).max())
    key, wrong = numeric_options(rise, spread=float(rng.uniform(0.5, 1.5)), decimals=1, rng=rng)
    listed = ", ".join(f"{c:.1f}" for c in closes)
    return mc_item("What was the largest one-day rise of the close?", key, wrong, rng=rng,
                   series=[series(closes, name="close")], context=f"Daily closes: {listed}.")


@pytest.mark.xfail(strict=True, reason="paraphrased_in_text counts a key derived from numbers of the data the "
                   "context writes out as given away, so a template that lists its series in text is rejected "
                   "for reading its data")
def test_data_written_out_in_the_context_is_no_paraphrase() -> None:
    assert "paraphrased_in_text" not in audit_items(draws(largest_rise_of_listed_closes)).shortcuts


def noisy_letter(key: str, at: int) -> str:
    """The position's letter on four items in five, a neighbour's on the fifth (decided by the key's digits)."""
    return "ABCD"[(at + (int(key.replace(".", "")) % 5 == 0)) % 4]


@pytest.mark.xfail(strict=True, reason="position_token trusts a token only when it came with one position in at "
                   "least 90 % of training items: a code right on 4 items in 5 (worth about 0.55 over chance) is "
                   "never learned, and no other solver reads it")
def test_a_position_code_with_noise_added() -> None:
    assert not audit_items(draws(with_context(noisy_letter))).passed


def weekday_of_the_max_in_a_week(rng: np.random.Generator, i: int) -> dict:
    """A correct template: "which weekday was warmest in the week starting Monday <date>": every option
    is a date of that week, one of them the Monday the question names."""
    start = pd.Timestamp("2010-01-04") + pd.Timedelta(weeks=int(rng.integers(0, 400)))
    days = pd.date_range(start, periods=7, freq="D")
    values = rng.normal(10, 3, 7).round(1)
    best = int(values.argmax())
    wrong = [f"{days[d]:%Y-%m-%d}" for d in rng.choice([d for d in range(7) if d != best], 3, replace=False)]
    return mc_item(f"In the week starting Monday {days[0]:%Y-%m-%d}, on which date was it warmest?",
                   f"{days[best]:%Y-%m-%d}", wrong, rng=rng,
                   series=[series(values, timestamps=[f"{d:%Y-%m-%d}" for d in days])])


def test_a_weekday_the_question_names_for_another_reason_gives_nothing_away() -> None:
    assert "paraphrased_in_text" not in audit_items(draws(weekday_of_the_max_in_a_week)).shortcuts


def frost_days(rng: np.random.Generator, i: int) -> dict:
    """A correct template counting frost days: "on fewer than k days the minimum was below X"."""
    tmin = rng.normal(4, 2, 10).round(1)
    level = round(float(np.quantile(tmin, rng.uniform(0.2, 0.8))) + 0.05, 2)
    k = int(rng.integers(2, 7))
    return tf_item(f"True or false: on fewer than {k} days the minimum temperature was below {level:.2f} °C.",
                   bool((tmin < level).sum() < k), series=[series(tmin, name="temp_min", unit="°C")])


def test_a_count_of_days_keyed_right_is_not_failed() -> None:
    """Read as "the minimum was below X" (the count ignored), these correct keys failed statement_truth."""
    assert finding(audit_items(draws(frost_days)), "statement_truth")
