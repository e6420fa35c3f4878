"""Units of measure: one canonical name per unit whatever its spelling ("°C", "deg C", "Celsius",
"degC"), the quantity it measures, and the units a free text names.

A unit field (a series' `unit`, a handler's `units`) is read whole by `canonical_unit`; a
question, an option or a context is scanned by `units_named`, which only finds spellings that
cannot be ordinary words ("mm", "°F", "Fahrenheit", "mg/dL", never "in" or "C" alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Unit", "canonical_unit", "conversions", "units_of", "units_named"]


@dataclass(frozen=True)
class Unit:
    quantity: str  # what it measures: "temperature", "length", ...
    name: str  # the canonical spelling: "degC", "mm", ...


# canonical name -> (quantity, spellings of a unit field, regexes that find it in free text)
_UNITS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "degC": ("temperature", ("degc", "deg c", "°c", "℃", "c", "celsius", "degrees celsius", "degree celsius",
                             "degrees c", "deg celsius", "centigrade"),
             (r"°\s?c\b", "℃", r"\bdeg(?:rees?)?\.? ?c\b", r"\bcelsius\b", r"\bcentigrade\b", r"\d\s?c\b(?![\w'])")),
    "degF": ("temperature", ("degf", "deg f", "°f", "℉", "f", "fahrenheit", "degrees fahrenheit", "degrees f"),
             (r"°\s?f\b", "℉", r"\bdeg(?:rees?)?\.? ?f\b", r"\bfahrenheit\b")),
    "K": ("temperature", ("k", "kelvin", "kelvins"), (r"\bkelvins?\b",)),
    "mm": ("length", ("mm", "millimetre", "millimetres", "millimeter", "millimeters"),
           (r"\bmm\b", r"\bmillimet(?:re|er)s?\b")),
    "cm": ("length", ("cm", "centimetre", "centimetres", "centimeter", "centimeters"),
           (r"\bcm\b", r"\bcentimet(?:re|er)s?\b")),
    "in": ("length", ("in", "inch", "inches", '"'), (r"\binch(?:es)?\b",)),
    "m/s": ("speed", ("m/s", "mps", "m s-1", "metres per second", "meters per second"),
            (r"\bm/s\b", r"\bmet(?:re|er)s? per second\b")),
    "km/h": ("speed", ("km/h", "kmh", "kph", "kilometres per hour", "kilometers per hour"),
             (r"\bkm/h\b", r"\bkph\b", r"\bkilomet(?:re|er)s? per hour\b")),
    "mph": ("speed", ("mph", "miles per hour"), (r"\bmph\b", r"\bmiles per hour\b")),
    "kn": ("speed", ("kn", "kt", "knot", "knots"), (r"\bknots?\b",)),
    "mg/dL": ("glucose", ("mg/dl", "mg dl", "mg per dl"), (r"\bmg\s?/\s?dl\b",)),
    "mmol/L": ("glucose", ("mmol/l", "mmol", "mmol per l"), (r"\bmmol\s?/\s?l\b",)),
    "mV": ("voltage", ("mv", "millivolt", "millivolts"), (r"\bmV\b", r"\bmillivolts?\b")),
    "uV": ("voltage", ("uv", "µv", "μv", "microvolt", "microvolts"), (r"\b[µμu]V\b", r"\bmicrovolts?\b")),
    "V": ("voltage", ("v", "volt", "volts"), (r"\bvolts?\b",)),
    "USD": ("currency", ("usd", "$", "us$", "dollar", "dollars", "us dollars"), (r"\busd\b", r"\$\s?\d", r"\bdollars?\b")),
    "EUR": ("currency", ("eur", "€", "euro", "euros"), (r"\beur\b", "€", r"\beuros?\b")),
}
# A rate written after the unit ("mm/day", "mm per day") keeps the unit's quantity and name.
_PER = re.compile(r"\s*(?:/|per\s+)\s*(?:day|d|hour|h|hr|month|year|yr|min|minute|s|sec|second)s?\s*$")
_FIELD: dict[str, Unit] = {spelling: Unit(quantity, name) for name, (quantity, spellings, _) in _UNITS.items()
                           for spelling in spellings}
# case matters for the voltage symbols only ("mV" vs "MV", "uV"); everything else is case-insensitive
_TEXT: list[tuple[re.Pattern[str], Unit]] = [
    (re.compile(pattern, 0 if "V" in pattern else re.I), Unit(quantity, name))
    for name, (quantity, _, patterns) in _UNITS.items() for pattern in patterns]


def canonical_unit(text: str | None) -> Unit | None:
    """The unit a unit field names ("deg C", "°C/day", "mm per day"), or None if it names none
    this module knows."""
    if not text:
        return None
    field = " ".join(text.replace("º", "°").split()).strip(" ()[]").casefold()
    return _FIELD.get(field) or _FIELD.get(_PER.sub("", field))


# one pass that finds whether a text may name any unit at all (most texts name none)
_ANY_UNIT = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _TEXT), re.I)


def units_named(text: str) -> set[Unit]:
    """The units a free text names (in any known spelling)."""
    text = text.replace("º", "°")
    if not _ANY_UNIT.search(text):
        return set()
    return {unit for pattern, unit in _TEXT if pattern.search(text)}


# value in the quantity's base unit = value * scale + offset; glucose's mmol/L has two factors in use
# (18, from the rounded molar mass, and 18.016)
_TO_BASE: dict[str, tuple[tuple[float, float], ...]] = {
    "degC": ((1.0, 0.0),), "degF": ((5 / 9, -32 * 5 / 9),), "K": ((1.0, -273.15),),
    "mm": ((1.0, 0.0),), "cm": ((10.0, 0.0),), "in": ((25.4, 0.0),),
    "m/s": ((1.0, 0.0),), "km/h": ((1 / 3.6, 0.0),), "mph": ((0.44704, 0.0),), "kn": ((1852 / 3600, 0.0),),
    "mg/dL": ((1.0, 0.0),), "mmol/L": ((18.0, 0.0), (18.016, 0.0)),
    "mV": ((1.0, 0.0),), "uV": ((1e-3, 0.0),), "V": ((1e3, 0.0),),
}


def units_of(quantity: str) -> list[Unit]:
    """Every unit this module knows of a quantity ("temperature": degC, degF, K)."""
    return [Unit(q, name) for name, (q, _, _) in _UNITS.items() if q == quantity]


def conversions(source: Unit, target: Unit, *, interval: bool = False) -> list[tuple[float, float]]:
    """(scale, offset) with target = source * scale + offset, one per factor in use (empty: the units
    measure different quantities or a currency); an `interval` (a difference, a spread) converts
    without the offset."""
    if source.quantity != target.quantity or source.name not in _TO_BASE or target.name not in _TO_BASE:
        return []
    out = []
    for a, b in _TO_BASE[source.name]:
        for c, d in _TO_BASE[target.name]:
            scale = a / c
            out.append((scale, 0.0 if interval else (b - d) / c))
    return list(dict.fromkeys(out))
