"""Independent re-derivation (N-version check) of a template's keys, without a model.

A solver (an LLM, in `agents.stages.rederivation`) is shown one drawn item as `solver_view` makes it:
the question, the options in a fresh random order, the series as shown with their units and the
context, and nothing else: no key, no answer text, no rationale, no metadata, never the
template's source. It writes `solve(item)`; `run_solver` runs that program in the sandbox (hostile
code, like a template) over the views of many fresh items and `assess` compares what it returns
with each item's key:

- a number fits the options whose stated value it equals within the option's own rounding (half
  a unit of its last written decimal); a string fits the option with the same text (or the same
  date / number); ``True``/``False`` fit the options that say so; an integer, for options that are
  not numbers, is a position in the shuffled options shown;
- an item **agrees** when the value fits exactly the keyed option, is **ambiguous** when it fits
  several, **disagrees** when it fits another option or none, and is **failed** when `solve`
  raised, timed out or returned None, NaN or something else, or when its answer to the same view
  with the options `rotated` fits other options (it picked a position, not a value: without this a
  solver returning ``options[1]`` "disagrees" with any key three times in four).

The program's source is preceded by `SOLVER_HELPERS` (stated numbers and dates of a text, a
series by name, a dated window), which know nothing of any template.

The verdict (`RederivationConfig` thresholds): too many failed items and the template is
``not_rederivable`` (reported as such, never as agreement); else too many disagreements and it
``disagrees``; else too many ambiguous items and it is ``ambiguous``; else it ``agrees``.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from itemsmith.items.schema import Item, RederivationReport, RederivedItem, RunStatus
from itemsmith.sandbox import SandboxLimits, SandboxPool
from itemsmith.verification.audit.features import option_value, plain_number
from itemsmith.verification.settings import RederivationConfig

__all__ = ["SOLVER_HELPERS", "SolverOutcome", "SolverView", "assess", "concurrence", "fits", "judge_items", "kept_key",
           "moved_with_order", "rotated", "run_solver", "solver_view", "usable", "verdict_of", "with_other_series"]

MAX_EXAMPLES = 3
# each sandbox run of a solver holds at most this much item data in its source (the source cap is 256 KiB)
BATCH_SOURCE_BYTES = 180_000
_TRUE_WORDS = frozenset({"true", "yes"})
_FALSE_WORDS = frozenset({"false", "no"})


class SolverView(BaseModel):
    """What the solver's program gets for one item: what a reader of the item sees, options shuffled."""

    model_config = ConfigDict(extra="forbid")

    question: str
    options: list[str]
    kind: str
    series: list[dict[str, Any]]
    context: str | None = None


class SolverOutcome(BaseModel):
    """What `solve(view)` gave for one view: a value, or why not."""

    value: str | float | bool | None = None
    error: str | None = None


def solver_view(item: Item, rng: random.Random) -> tuple[SolverView, list[int]]:
    """The item as the solver sees it and `order` (view option j is item option order[j])."""
    order = list(range(len(item.options)))
    rng.shuffle(order)
    series = [{"name": s.name, "unit": s.unit, "values": list(s.values), "timestamps": s.timestamps}
              for s in item.series]
    view = SolverView(question=item.question, options=[item.options[i] for i in order], kind=item.kind.value,
                      series=series, context=item.context)
    return view, order


# --- matching a value to options ------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".")


def _number_fits(value: float, option: str) -> bool:
    parsed = plain_number(option)
    if parsed is None:
        return False
    number, decimals = parsed
    return abs(value - number) <= 0.5 * 10.0 ** -decimals + 1e-9 * max(1.0, abs(number))


def _nearest_per_precision(value: float, options: Sequence[str], fitted: list[int]) -> list[int]:
    """Of the fitting options written with the same decimals, the nearest only: a value on the
    rounding boundary of two neighbours (18.25 between 18.2 and 18.3) picks one; options of
    different precision that both fit ("12" and "12.3" for 12.3) stay ambiguous."""
    best: dict[int, int] = {}
    for i in fitted:
        number, decimals = plain_number(options[i]) or (0.0, 0)
        kept = best.get(decimals)
        if kept is None or abs(value - number) < abs(value - (plain_number(options[kept]) or (0.0, 0))[0]):
            best[decimals] = i
    return sorted(best.values())


def fits(value: str | float | bool, options: Sequence[str]) -> list[int]:
    """The positions of the options `value` fits (see the module docstring)."""
    if isinstance(value, bool):
        words = _TRUE_WORDS if value else _FALSE_WORDS
        return [i for i, o in enumerate(options) if _words(o) in words]
    if isinstance(value, str):
        exact = [i for i, o in enumerate(options) if _words(o) == _words(value)]
        if exact:
            return exact
        if _words(value) in _TRUE_WORDS | _FALSE_WORDS:
            return fits(_words(value) in _TRUE_WORDS, options)
        stated = option_value(value)
        if stated is None:
            return []
        number = plain_number(value)
        if number is not None:
            return fits(number[0], options)
        return [i for i, o in enumerate(options) if option_value(o) is not None
                and abs((option_value(o) or 0.0) - stated) < 1e-6]
    numeric = [plain_number(o) is not None for o in options]
    if all(numeric):
        return _nearest_per_precision(float(value), options,
                                      [i for i, o in enumerate(options) if _number_fits(float(value), o)])
    if float(value).is_integer() and 0 <= value < len(options):
        return [int(value)]
    return [i for i, (o, n) in enumerate(zip(options, numeric, strict=True)) if n and _number_fits(float(value), o)]


# --- running the solver's program in the sandbox --------------------------------------------

# Defined before the solver's program (which may redefine them): reading a question's stated
# parameters and a series' dated values, the steps where a small solver's own code failed most
# (a threshold read from a date's digits, a date passed to int(), a misspelt series name, a list of
# values where the dated series was needed). They know nothing of any template; what to compute
# stays the solver's to decide. Their names are no nouns a program would give its own variables:
# `window = window(...)` in a program made `window` a local name and failed before it ran.
SOLVER_HELPERS = '''
import re

SOLVER_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2})?)?")
SOLVER_MONTH = re.compile(r"\\b\\d{4}-\\d{2}\\b")
SOLVER_NUMBER = re.compile(r"(?<![\\w.])[-+]?\\d+(?:\\.\\d+)?")


def dates_in(text):
    return SOLVER_DATE.findall(text)


def numbers_in(text):
    return [float(x) for x in SOLVER_NUMBER.findall(SOLVER_MONTH.sub(" ", SOLVER_DATE.sub(" ", text)))]


def series_named(item, name=None):
    series = item["series"]
    if name is None:
        return series[0]
    for wanted in (name, name.casefold()):
        for s in series:
            if s["name"] == wanted or s["name"].casefold() == wanted:
                return s
    raise KeyError("no series named " + repr(name) + "; the series are " + repr([s["name"] for s in series]))


def values_between(s, start, end):
    if not isinstance(s, dict) or "values" not in s:
        got = "a list of values" if isinstance(s, list) else repr(s)[:40]
        raise TypeError("values_between(s, start, end) takes a series dict such as series_named(item), whose "
                        "timestamps date its values; it got " + got)
    if not s.get("timestamps"):
        raise ValueError("series " + repr(s["name"]) + " has no timestamps")
    return [v for v, t in zip(s["values"], s["timestamps"]) if start <= t[:len(start)] and t[:len(end)] <= end]
'''

# Runs after the solver's program in the same sandboxed source: each view through solve(), the
# value checked and reported as item metadata (the sandbox returns items only). Names are the
# driver's own; a program that redefines them only spoils its own result.
_DRIVER = '''

SOLVER_ERRORS = (("ZeroDivisionError", ZeroDivisionError), ("KeyError", KeyError), ("IndexError", IndexError),
                 ("ValueError", ValueError), ("TypeError", TypeError), ("AttributeError", AttributeError),
                 ("NameError", NameError))


def solver_error_name(exc):
    for name, klass in SOLVER_ERRORS:
        if isinstance(exc, klass):
            return name
    return "Exception"


def solver_result(view):
    try:
        value = solve(view)
    except Exception as exc:
        return {"error": solver_error_name(exc) + ": " + str(exc)[:200]}
    if isinstance(value, bool) or isinstance(value, str):
        return {"value": value}
    if value is None:
        return {"error": "solve() returned None"}
    try:
        number = float(value)
    except Exception:
        return {"error": "solve() returned a value that is neither a number, a string nor a bool"}
    if not math.isfinite(number):
        return {"error": "solve() returned " + str(number)}
    return {"value": number}


def question(num_samples):
    results = []
    for view in SOLVER_VIEWS[:num_samples]:
        results.append({"question": "solver result", "options": ["value", "no value"], "answer_index": 0,
                        "metadata": {"solver": solver_result(view)}})
    return results
'''


def _batches(views: Sequence[SolverView]) -> list[list[SolverView]]:
    batches: list[list[SolverView]] = [[]]
    size = 0
    for view in views:
        length = len(view.model_dump_json())
        if batches[-1] and size + length > BATCH_SOURCE_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(view)
        size += length
    return [b for b in batches if b]


# Runs one view through solve() uncaught, so that the sandbox reports the line it failed on.
_RAISING_DRIVER = '''

def question(num_samples):
    solve(SOLVER_VIEWS[0])
    return []
'''
_FRAME_LINE = re.compile(r"template line (\d+):")


def driver_source(program: str, views: Sequence[SolverView], driver: str = _DRIVER) -> str:
    """The helpers, the program, the views as a literal and the driver, as one source for the sandbox."""
    literal = repr([v.model_dump(mode="json") for v in views])  # str, float, bool, None, lists, dicts only
    return f"{SOLVER_HELPERS}\n{program}\n\nSOLVER_VIEWS = {literal}\n{driver}"


def _limits(pool: SandboxPool, wall_s: float) -> SandboxLimits:
    wall_s = min(wall_s, 599.0)  # the sandbox's own bound
    return pool.limits.model_copy(update={"wall_s": wall_s, "cpu_s": int(wall_s) + 1})


def failing_line(program: str, view: SolverView, pool: SandboxPool, *, wall_s: float = 20.0) -> str | None:
    """The line of `program` on which `solve(view)` raises (its innermost frame in the program, not
    in a helper), None when it does not raise there. A small solver told only its error's name
    tends to write the same program again."""
    result = pool.run(driver_source(program, [view], _RAISING_DRIVER), num_samples=1, seed=0,
                      limits=_limits(pool, wall_s))
    first = SOLVER_HELPERS.count("\n") + 2  # the program's first line in the source
    lines = program.splitlines()
    frames = [int(m.group(1)) - first for m in _FRAME_LINE.finditer(result.traceback_tail or "")]
    inside = [n for n in frames if 0 <= n < len(lines)]
    return lines[inside[-1]].strip() if result.status is RunStatus.error and inside else None


def run_solver(program: str, views: Sequence[SolverView], pool: SandboxPool, *,
               wall_s: float = 20.0, item_s: float = 0.0) -> list[SolverOutcome]:
    """`solve(view)` for every view, in the sandbox (batched under the source cap), each run given
    `wall_s` plus `item_s` per view of its batch. A run that fails as a whole (refused, killed,
    crashed) fails each of its views with its error."""
    outcomes: list[SolverOutcome] = []
    for batch in _batches(views):
        limits = _limits(pool, wall_s + item_s * len(batch))
        result = pool.run(driver_source(program, batch), num_samples=len(batch), seed=0, limits=limits)
        if result.status is not RunStatus.ok:
            error = f"the program {result.status.value}: {result.error}"
            outcomes += [SolverOutcome(error=error) for _ in batch]
            continue
        for raw in result.items:
            reported = (raw.get("metadata") or {}).get("solver") or {}
            outcomes.append(SolverOutcome.model_validate(reported) if isinstance(reported, dict)
                            else SolverOutcome(error="the driver's report was overwritten"))
    return outcomes


# --- the verdict ----------------------------------------------------------------------------


def usable(outcome: SolverOutcome, view: SolverView) -> str | None:
    """Why `outcome` is no answer to `view` (None: it is one). A text that is none of the options
    (and states no number or date that fits one) is a malformed answer, not a disagreement; a
    number that fits no option is a disagreement."""
    value = outcome.value
    if value is None:
        return outcome.error or "no value"
    if isinstance(value, str) and not fits(value, view.options):
        return f"solve() returned {value[:80]!r}, which is none of the options"
    return None


def rotated(view: SolverView) -> SolverView:
    """The view with its options moved one place (the last first): a right answer does not move
    with them, an option picked by its position does."""
    return view.model_copy(update={"options": [view.options[-1], *view.options[:-1]]})


def _picked(options: list[str], order: list[int], result: SolverOutcome) -> tuple[list[int] | None, str | None]:
    """The positions in `options` that the value given for them in `order` fits, or None and why it
    is no answer."""
    value = result.value
    view_options = [options[i] for i in order]
    why = usable(result, SolverView(question="", options=view_options, kind="mc", series=[]))
    if value is None or why is not None or (isinstance(value, float) and not math.isfinite(value)):
        return None, why or "no value"
    return sorted(order[j] for j in fits(value, view_options)), None


def moved_with_order(first: SolverOutcome, view: SolverView, again: SolverOutcome) -> str | None:
    """Why a program's answers to `view` and to `rotated(view)` differ in content (None: they do
    not): it picked an option by its position, or broke on the other order."""
    if first.value is None:
        return None
    if again.value is None:
        return f"with the options in another order it gave no value ({again.error})"
    order = list(range(len(view.options)))
    if _picked(view.options, order, first)[0] != _picked(view.options, [order[-1], *order[:-1]], again)[0]:
        return ("its answer changed when the options were listed in another order: it picks an option by its "
                "position, not by what the series shows; return the computed number (or the option's text)")
    return None


def _outcome(item: Item, order: list[int], result: SolverOutcome, seed: int, index: int,
             again: SolverOutcome | None) -> RederivedItem:
    common: dict[str, Any] = {"seed": seed, "index": index, "question": item.question, "options": item.options,
                              "key": item.answer_index}
    fitted, why = _picked(item.options, order, result)
    if fitted is None:
        return RederivedItem(**common, value=result.value, error=why, outcome="failed")
    shown = SolverView(question=item.question, options=[item.options[i] for i in order], kind="mc", series=[])
    moved = None if again is None else moved_with_order(result, shown, again)
    if moved is not None:
        return RederivedItem(**common, value=result.value, outcome="failed", error=moved)
    outcome: Literal["agree", "disagree", "ambiguous"] = (
        "ambiguous" if len(fitted) > 1 else "agree" if fitted == [item.answer_index] else "disagree")
    return RederivedItem(**common, value=result.value, fits=fitted, outcome=outcome)


def judge_items(draws: Sequence[tuple[int, Item, list[int], SolverOutcome]],
                rotated_outcomes: Sequence[SolverOutcome] | None = None) -> list[RederivedItem]:
    """Each item's outcome (agree, disagree, ambiguous, failed) from (seed, item, view order, outcome);
    `rotated_outcomes`: the program's answers to the same views with their options `rotated`, an
    item whose answer moved with them fails (a position, not a value)."""
    per_draw: dict[int, int] = {}
    judged = []
    agains = list(rotated_outcomes) if rotated_outcomes is not None else [None] * len(draws)
    for (seed, item, order, result), again in zip(draws, agains, strict=True):
        index = per_draw.get(seed, 0)
        per_draw[seed] = index + 1
        judged.append(_outcome(item, order, result, seed, index, again))
    return judged


def assess(draws: Sequence[tuple[int, Item, list[int], SolverOutcome]], *, solver: str, program: str | None,
           config: RederivationConfig, seeds: Sequence[int] = (), sizes: Sequence[int] = (), tries: int = 0,
           reused: bool = False, elapsed_ms: float = 0.0,
           rotated_outcomes: Sequence[SolverOutcome] | None = None) -> RederivationReport:
    """The verdict over (seed, item, view order, outcome) per item (see the module docstring and
    `judge_items`)."""
    return verdict_of(judge_items(draws, rotated_outcomes), solver=solver, program=program, config=config, seeds=seeds,
                   sizes=sizes, tries=tries, reused=reused, elapsed_ms=elapsed_ms)


def verdict_of(judged: Sequence[RederivedItem], *, solver: str, program: str | None, config: RederivationConfig,
            seeds: Sequence[int] = (), sizes: Sequence[int] = (), tries: int = 0, reused: bool = False,
            replayed: bool = False, elapsed_ms: float = 0.0) -> RederivationReport:
    """One program's (or the trusted replay's) verdict over its judged items."""
    counts = {name: sum(r.outcome == name for r in judged) for name in ("agree", "disagree", "ambiguous", "failed")}
    answered = counts["agree"] + counts["disagree"] + counts["ambiguous"]
    error = None
    status: Literal["agrees", "disagrees", "ambiguous", "not_rederivable"]
    if not judged or counts["failed"] > config.max_failed * len(judged):
        status = "not_rederivable"
        first = next((r.error for r in judged if r.outcome == "failed"), None)
        error = (f"its program solved {answered} of {len(judged)} items (first error: {first})" if judged
                 else "no items")
    elif counts["disagree"] > config.max_disagreement * answered:
        status = "disagrees"
    elif counts["ambiguous"] > config.max_ambiguous * answered:
        status = "ambiguous"
    else:
        status = "agrees"
    wanted = {"disagrees": "disagree", "ambiguous": "ambiguous", "not_rederivable": "failed"}.get(status, "disagree")
    examples = [r for r in judged if r.outcome == wanted][:MAX_EXAMPLES]
    return RederivationReport(status=status, solver=solver, program=program, reused=reused, replayed=replayed,
                              tries=tries, programs=0 if replayed or reused else 1, n_items=len(judged),
                              agree=counts["agree"], disagree=counts["disagree"], ambiguous=counts["ambiguous"],
                              failed=counts["failed"], seeds=list(seeds), sizes=list(sizes), examples=examples,
                              error=error, elapsed_ms=elapsed_ms)


def concurrence(a: Sequence[RederivedItem], b: Sequence[RederivedItem]) -> float | None:
    """The share of the items two programs both answered on which they pick the same options (the
    same value, when it fits none): two independent programs that concur in disagreeing with a key
    confirm each other; a solver's own mistakes seldom repeat item by item. None: no item in common."""
    both = [(x, y) for x, y in zip(a, b, strict=True) if x.outcome != "failed" and y.outcome != "failed"]
    if not both:
        return None
    same = sum(x.fits == y.fits and (bool(x.fits) or _same_value(x.value, y.value)) for x, y in both)
    return same / len(both)


def _same_value(a: str | float | bool | None, b: str | float | bool | None) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


# --- does the program read the data? --------------------------------------------------------


def _fitted(values: Sequence[float], length: int) -> list[float]:
    """`values` cut or repeated to `length`."""
    return [values[i % len(values)] for i in range(length)] if values else []


def with_other_series(views: Sequence[SolverView], rng: random.Random) -> list[SolverView | None]:
    """Each view with every series' values taken from another view that shows other values under
    the same series names (cut or repeated to its own length; its question, options and timestamps
    kept); None where no view does. A program that computes the answer from the series answers these
    otherwise; one that reads the answer from the text (a key written in the question, a code with
    an instruction to solvers) gives the same key."""
    names = [tuple(str(s.get("name")) for s in view.series) for view in views]
    values = [[list(s.get("values") or []) for s in view.series] for view in views]
    swapped: list[SolverView | None] = []
    for i, view in enumerate(views):
        others = [j for j in range(len(views)) if names[j] == names[i] and values[j] != values[i]
                  and all(values[j])]
        if not view.series or not others:
            swapped.append(None)
            continue
        j = others[rng.randrange(len(others))]
        series = [{**own, "values": _fitted(other, len(own.get("values") or []))}
                  for own, other in zip(view.series, values[j], strict=True)]
        swapped.append(view.model_copy(update={"series": series}))
    return swapped


def kept_key(judged: Sequence[RederivedItem], orders: Sequence[list[int]], swapped: Sequence[SolverView | None],
             outcomes: Sequence[SolverOutcome | None]) -> tuple[int, int, int]:
    """(items asked, items checked, items still answered with their key): asked, the items the program
    agreed on that were shown with other series (`swapped`); checked, those it answered with a value
    (`outcomes`). A value that fits none of the options is an answer too: over another item's series the
    right answer is seldom one of this item's options ("day 57" where they are days 3 to 12), and a
    program that gives it has moved with the data."""
    asked = checked = kept = 0
    for item, order, view, outcome in zip(judged, orders, swapped, outcomes, strict=True):
        if item.outcome != "agree" or view is None or outcome is None:
            continue
        asked += 1
        value = outcome.value
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            continue
        checked += 1
        kept += _picked(item.options, order, outcome)[0] == [item.key]
    return asked, checked, kept
