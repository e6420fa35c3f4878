"""The handler profile reads the units a handler declares and the generator prompt lists them."""

from __future__ import annotations

import pytest

from itemsmith.agents.authoring.prompts import describe_profile, generator_system
from itemsmith.agents.profile import profile_handler
from itemsmith.sandbox import SandboxPool


def test_the_profile_and_the_prompt_carry_the_declared_units() -> None:
    pytest.importorskip("vega_datasets")
    with SandboxPool("weather") as pool:
        profile = profile_handler(pool)
    assert profile.units == {"precipitation": "mm/day", "temp_max": "degC", "temp_min": "degC", "wind": "m/s"}
    assert "Units (pass unit= on every channel shown): precipitation mm/day, temp_max degC" in describe_profile(profile)
    assert 'derived="7-day mean of temp_max"' in generator_system(profile)
