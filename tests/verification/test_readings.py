"""A recipe's readings and the comparison of a channel with one (verification.audit.readings):
readings agree with pandas computing the same thing, a channel is compared at its timestamps in
order (a subset of the rows passes, a shift does not), as a stretch without timestamps, to the
decimals shown, and the edges of a resampled slice may be partial periods."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itemsmith.verification.audit.dates import Timeline, read_when
from itemsmith.verification.audit.readings import Reading, Table, Tolerance, compare, readings
from itemsmith.verification.audit.recipes import Column, Resample, Rolling
from itemsmith.verification.audit.units import canonical_unit

DAYS = pd.date_range("2013-01-01", periods=120, freq="D")
VALUES = np.round(np.random.default_rng(2).normal(10, 3, len(DAYS)), 1)
TIMELINE = Timeline.read([f"{d:%Y-%m-%dT%H:%M:%S}" for d in DAYS])
assert TIMELINE is not None
TABLE = Table("record 'x'", {"x": VALUES}, TIMELINE, {"x": canonical_unit("degC")})


def stamps(index: pd.DatetimeIndex, fmt: str = "%Y-%m-%d") -> list[list]:
    return [read_when(f"{t:{fmt}}") for t in index]


def test_readings_agree_with_pandas() -> None:
    trailing = {r.label: r.values for r in readings(Rolling(Column("x"), "mean", 7, "day", None), TABLE)}
    pandas = pd.Series(VALUES).rolling(7).mean().to_numpy()
    assert np.allclose(trailing["trailing 7-row mean"], pandas, equal_nan=True)
    assert np.allclose(trailing["centred 7-row mean"], pd.Series(VALUES).rolling(7, center=True).mean(), equal_nan=True)
    monthly = next(r for r in readings(Resample(Column("x"), "M", "sum"), TABLE))
    assert np.allclose(monthly.values, pd.Series(VALUES, index=DAYS).resample("MS").sum().to_numpy())


def test_a_subset_at_its_timestamps_passes_and_a_shift_does_not() -> None:
    column = Reading(VALUES, TIMELINE, "x")
    tolerance = Tolerance.of(VALUES, 1e-9)
    every_7th = list(range(0, 120, 7))
    assert compare(column, VALUES[every_7th], stamps(DAYS[every_7th], "%b %d, %Y"), tolerance).ok
    shifted = compare(column, VALUES[1:31], stamps(DAYS[:30]), tolerance)
    assert not shifted.ok and shifted.diffs[0] == (0, VALUES[0])


def test_without_timestamps_a_stretch_passes_at_every_offset_it_fits() -> None:
    column = Reading(VALUES, TIMELINE, "x")
    found = compare(column, VALUES[40:60], None, Tolerance.of(VALUES[40:60], 1e-9))
    assert found.ok and 40 in found.offsets


def test_values_rounded_for_display_pass_and_one_decimal_off_does_not() -> None:
    precise = Reading(VALUES + 0.0123, TIMELINE, "x")
    shown = np.round(VALUES[:20] + 0.0123, 1)
    assert compare(precise, shown, stamps(DAYS[:20]), Tolerance.of(shown, 1e-6)).ok
    assert not compare(precise, shown + 0.1, stamps(DAYS[:20]), Tolerance.of(shown, 1e-6)).ok


def test_the_first_and_last_periods_of_a_resampled_slice_may_be_partial() -> None:
    part = pd.Series(VALUES, index=DAYS).loc["2013-01-10":"2013-04-20"]
    monthly = part.resample("MS").sum()
    reading = next(r for r in readings(Resample(Column("x"), "M", "sum"), TABLE))
    tolerance = Tolerance.of(monthly.to_numpy(), 1e-6)
    assert compare(reading, monthly.to_numpy(), stamps(monthly.index, "%Y-%m"), tolerance).ok
    inner = monthly.to_numpy().copy()
    inner[1] -= 3.0  # an interior month may not be partial
    assert not compare(reading, inner, stamps(monthly.index, "%Y-%m"), tolerance).ok
