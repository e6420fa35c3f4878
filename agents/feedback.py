"""Turning a failed check into feedback a small model can act on.

Feedback = the sandbox's one-line error, the failing line with its neighbours, and a concrete hint
picked by matching the error against known mistakes (with the real column names where a name
was wrong). `audit_feedback` turns the item audit's findings (shortcuts a blind solver exploits)
into the same kind of message; `runaway_feedback` answers a reply that typed out values until the
output limit ("too long: compute it, do not list it"). Options for numbers and dates are always built with
`numeric_options` / `date_options` (the key at a uniformly random rank, every option formatted
alike), never with fixed offsets such as answer + d for d in (-3, 3, 6), whose key is always the
second smallest.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from itemsmith.agents.profile import HandlerProfile
from itemsmith.items.schema import AuditReport

_LINE = re.compile(r"(?:template )?line (\d+)", re.I)

Hint = Callable[[re.Match[str], HandlerProfile | None], str]


def _columns(profile: HandlerProfile | None) -> str:
    if profile is None:
        return ""
    return (f" records() columns: {', '.join(profile.record_columns)}; series() columns: "
            f"{', '.join(profile.channels)}.")


def _index_key_hint(key: str, profile: HandlerProfile | None) -> str | None:
    """Where a missing key really lives: the series' index, a records() column, or a series channel."""
    if profile is None:
        return None
    if profile.series and key == profile.series[0].index_name:
        return (f"`{key}` is the index of handler.series(rid), not a column: use frame.index, e.g. "
                f"dates = list(frame.index.strftime(\"%Y-%m-%d\")) (same positions as the values).")
    if key in profile.record_columns and key not in profile.channels:
        return (f"`{key}` is a column of handler.records() (one row per record), not of handler.series(rid): "
                f"row = handler.records().set_index(\"record_id\").loc[rid]; value = row[\"{key}\"]. "
                f"series() columns: {', '.join(profile.channels)}.")
    if key in profile.channels and key not in profile.record_columns:
        return (f"`{key}` is a column of handler.series(rid), not of handler.records(): "
                f"frame = handler.series(rid); values = frame[\"{key}\"].to_numpy(dtype=float).")
    return None


HINTS: list[tuple[re.Pattern[str], Hint]] = [
    (re.compile(r"not Timestamp|has no attribute 'iloc'|only integers, slices|cannot do (positional|slice) "
                r"indexing|Timestamp.*(index|subscript)"),
     lambda m, p: "use positions, not timestamps: values = frame[\"col\"].to_numpy(dtype=float); "
                  "i = int(np.argmax(values)); dates = list(frame.index.strftime(\"%Y-%m-%d\")); answer = dates[i]. "
                  "idxmax() returns a timestamp label, and an index has no .iloc."),
    (re.compile(r"randint"), lambda m, p: "use rng.integers(low, high) (high is excluded); there is no randint."),
    (re.compile(r"Generator\.(\w+) is not available"),
     lambda m, p: f"rng has no `{m.group(1)}`; use rng.integers(low, high), rng.choice(list), rng.random(), "
                  "rng.permutation(n)."),
    (re.compile(r"KeyError: '?([^'\n(]+)'?"),
     lambda m, p: _index_key_hint(m.group(1).strip(), p) or f"there is no key or column {m.group(1).strip()!r}."
                  + _columns(p)
                  + " Use exactly these names; read label columns from handler.records() and channels from "
                    "handler.series(rid)."),
    (re.compile(r"'numpy\.ndarray' object has no attribute '(\w+)'"),
     lambda m, p: (f"a numpy array has no `.{m.group(1)}`. "
                   + ("For the position of the maximum use i = int(np.argmax(values)) (np.argmin for the minimum); "
                      "for the positions where a condition holds use np.flatnonzero(values > t)."
                      if m.group(1) in ("index", "idxmax", "idxmin", "iloc", "loc")
                      else "Use numpy functions (np.mean(values), values.max(), np.diff(values)) or convert with "
                           "list(values)."))),
    (re.compile(r"has no attribute '(\w+)'"),
     lambda m, p: f"`{m.group(1)}` does not exist on that object." + _columns(p)
                  + " Index a column with frame[\"name\"], not frame.name."),
    (re.compile(r"unsupported format string passed to numpy\.ndarray|only (?:length-1|0-dimensional|size-1) arrays"),
     lambda m, p: "that value is a whole array, not one number: reduce it first (float(np.mean(values)), "
                  "float(values.max()), int(np.sum(values > t))), then format or compare it."),
    (re.compile(r"'float' object cannot be interpreted as an integer"),
     lambda m, p: "round(x, 1) takes the number of decimals (an int), not a step: round(x, 0.1) is wrong; "
                  "range() and list indices need ints too: int(...)."),
    (re.compile(r"returned 0 items|returned (\d+) items?; expected"),
     lambda m, p: "your loop skipped every record (or stopped early): a `continue` condition is always true or the "
                  "loop ends too soon. Relax the condition (check it against the value ranges above) and keep "
                  "`while len(items) < num_samples and tries < 200 * num_samples`."),
    (re.compile(r"NameError: name '(\w+)' is not defined"),
     lambda m, p: f"`{m.group(1)}` is not defined: define it before use, or use only the provided names handler, "
                  "rng, np, pd, math, statistics, datetime, mc_item, tf_item, series, numeric_options, "
                  "date_options."),
    (re.compile(r"needs 1 to \d distractors|at most \d options|at least \d options"),
     lambda m, p: "give mc_item exactly 3 distractors (wrong answers, not counting the correct one): for a number "
                  "`key, wrong = numeric_options(answer, spread=..., decimals=1)`, for a date `key, wrong = "
                  "date_options(day, low=dates[0], high=dates[-1])`; for labels `wrong = [c for c in LABELS if c != "
                  "answer]`, pass 3 of them, and `continue` when fewer than 3 remain."),
    (re.compile(r"must be distinct|duplicate options"),
     lambda m, p: "two options became the same string. For numbers use `key, wrong = numeric_options(answer, "
                  "spread=..., decimals=...)`, which rounds every option alike and keeps them distinct; for labels "
                  "or dates filter candidates with `!=` the answer; `continue` when fewer than 3 remain."),
    (re.compile(r"x not in list|list\.remove"),
     lambda m, p: "list.remove(x) fails when x is absent: build the list with a filter instead, "
                  "[c for c in candidates if c != answer]."),
    (re.compile(r"index out of range|out-of-bounds|out of bounds"),
     lambda m, p: "an index is past the end: check len(...) before indexing and `continue` to another record "
                  "when it is too short."),
    (re.compile(r"a must be greater than 0|cannot take a larger sample|empty"),
     lambda m, p: "a list or frame was empty after filtering: check its length and `continue` to another record."),
    (re.compile(r"non-finite|NaN|nan"),
     lambda m, p: "the series has NaN values: use frame[\"col\"].dropna() before computing and before series()."),
    (re.compile(r"not JSON|serializ|Timestamp"),
     lambda m, p: "items hold only plain numbers and strings: convert dates with str(...) or "
                  ".strftime(\"%Y-%m-%d\") and numbers with float(...)."),
    (re.compile(r"got an unexpected keyword argument '(\w+)'"),
     lambda m, p: f"`{m.group(1)}` is not a parameter: mc_item(question, correct, distractors, series=[...], "
                  "rationale=..., metadata=...); tf_item(statement, is_true, series=[...], rationale=..., "
                  "metadata=...); series(values, name=..., timestamps=..., unit=...)."),
    (re.compile(r"missing \d+ required positional argument"),
     lambda m, p: "a call lacks arguments: mc_item(question, correct, distractors, ...); tf_item(statement, "
                  "is_true, ...); series(values, ...)."),
    (re.compile(r"[Ii]mport|__import__"),
     lambda m, p: "remove every import line: np, pd, math, statistics, datetime and the helpers are already "
                  "provided."),
    (re.compile(r"starting with \"?_|begins with|name starting"),
     lambda m, p: "rename every name that starts with an underscore and remove `if __name__ == ...` blocks."),
    (re.compile(r"not deterministic|clock is not seeded|id\(\) is not available|hash\(\) of"),
     lambda m, p: "draw all randomness from rng; never read the clock (datetime.now, date.today, "
                  "pd.Timestamp('now')), id(), hash() of objects or unordered sets of objects for choices."),
    (re.compile(r"no variety"),
     lambda m, p: "pick the record (and any window or threshold) with rng inside the loop, so each item and "
                  "each seed differs."),
    (re.compile(r"killed|time limit|timed out|wall"),
     lambda m, p: "the code ran too long: bound every loop (while len(items) < num_samples and tries < "
                  "200 * num_samples) and avoid loops over every record."),
    (re.compile(r"ambiguous|truth value of a"),
     lambda m, p: "compare single numbers, not whole Series: use float(x) or .any()/.all()."),
    (re.compile(r"unsupported operand|can only concatenate|must be str"),
     lambda m, p: "mixing types: convert with float(...) for numbers or str(...) for text before combining."),
    (re.compile(r"returned|must return|list of items|not a list"),
     lambda m, p: "question(num_samples) must return a list of exactly num_samples items built with mc_item or "
                  "tf_item."),
    (re.compile(r"parenthesis '(.)' does not match opening parenthesis '(.)'|unmatched '(.)'|was never closed"),
     lambda m, p: "the brackets of that statement do not match: every ( [ { needs its own closing ) ] } in reverse "
                  "order. Rewrite the statement in two simpler steps (compute the list first, then call)."),
    (re.compile(r"SyntaxError|IndentationError|invalid syntax"),
     lambda m, p: "fix the Python syntax on that line (check brackets, quotes, colons and indentation)."),
]

GENERIC_HINT = ("follow the skeleton: pick a record with rng, compute the answer from its data, `continue` when it "
                "does not fit, and build the item with mc_item(question, answer, distractors, series=[...]).")


def hint_for(error: str, profile: HandlerProfile | None = None) -> str:
    for pattern, hint in HINTS:
        match = pattern.search(error)
        if match:
            return hint(match, profile)
    return GENERIC_HINT


def failing_line(error: str, source: str) -> str | None:
    """The source line the error names first (with one line of context each side), if any."""
    match = _LINE.search(error)
    if match is None:
        return None
    number = int(match.group(1))
    lines = source.splitlines()
    if not 1 <= number <= len(lines):
        return None
    first, last = number - 1, number + 1
    span = _statement_span(source, number)
    if span is not None:  # the whole statement that starts on that line (a multi-line call), capped
        first, last = min(first, span[0]), min(max(last, span[1]), number + 7)
    shown = []
    for n in range(max(1, first), min(len(lines), last) + 1):
        marker = ">>" if n == number else "  "
        shown.append(f"{marker} {n:3d} | {lines[n - 1]}")
    return "\n".join(shown)


def _statement_span(source: str, line: int) -> tuple[int, int] | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While,
                                                                ast.If, ast.With, ast.Try)):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or end - node.lineno < best[1] - best[0]):
                best = (node.lineno, end)
    return best


def _line_number(error: str) -> int | None:
    match = _LINE.search(error)
    return int(match.group(1)) if match else None


def _call_at(source: str, line: int | None, name: str) -> ast.Call | None:
    """The call of `name` whose span covers `line` (the innermost one), if it parses."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and (line is None or node.lineno <= line <= (node.end_lineno or node.lineno))):
            found = node
    return found


def _strip_str(expr: ast.expr) -> ast.expr:
    if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("str", "round", "float",
                                                                                              "int") and expr.args):
        return expr.args[0]
    return expr


def _fixed_length(value: ast.expr) -> int | None:
    """The length of a list display, or of a comprehension over a literal tuple/list without a filter."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return len(value.elts)
    if (isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs
            and isinstance(value.generators[0].iter, (ast.List, ast.Tuple))):
        return len(value.generators[0].iter.elts)
    return None


def _skip_conditions(source: str) -> list[tuple[int, str, list[str]]]:
    """(line, condition, assignments of the names it reads) of every `if COND: continue`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    assignments: dict[str, list[tuple[int, str]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            size = _fixed_length(node.value)
            note = f" (always {size} element{'s' if size != 1 else ''})" if size is not None else ""
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assignments.setdefault(target.id, []).append((node.lineno, ast.unparse(node) + note))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Continue):
            names = sorted({n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)})
            quoted = []
            for name in names:
                before = [a for a in assignments.get(name, []) if a[0] < node.lineno]
                if before:
                    quoted.append(f"line {before[-1][0]}: `{before[-1][1]}`")
            found.append((node.lineno, ast.unparse(node.test), quoted))
    return found


_NUMERIC_CALLS = {"round", "float", "int", "len", "sum", "max", "min", "mean", "std", "median", "abs", "count"}
_TEXT_HINTS = ("date", "time", "label", "name", "day", "month", "strftime", "str", "class")


def _answer_kind(source: str, name: str) -> str | None:
    """'number' or 'text' when the last assignment of `name` makes it obvious, else None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    value = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
    if value is None:
        return None
    if isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return "text"
    if isinstance(value, (ast.BinOp, ast.UnaryOp)) or (isinstance(value, ast.Constant)
                                                       and isinstance(value.value, (int, float))):
        return "number"
    called = [n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
              for n in ast.walk(value) if isinstance(n, ast.Call)]
    if called and called[0] in _NUMERIC_CALLS:
        return "number"
    text = ast.unparse(value).lower()
    if isinstance(value, ast.Subscript) and any(word in text for word in _TEXT_HINTS):
        return "text"
    if any(c in ("str", "strftime") for c in called):
        return "text"
    return None


def _offset_of_text(source: str, line: int | None) -> str | None:
    """In `[X + d for d in ...]` on the failing line, the name X (offsets added to a text answer)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.ListComp) and isinstance(node.elt, (ast.BinOp, ast.Call))
                and (line is None or node.lineno <= line <= (node.end_lineno or node.lineno))):
            inner = node.elt.args[0] if isinstance(node.elt, ast.Call) and node.elt.args else node.elt
            if isinstance(inner, ast.BinOp) and isinstance(inner.left, ast.Name):
                return inner.left.id
    return None


_WHOLE_ARRAY = re.compile(r"unsupported format string passed to numpy\.ndarray|only (?:length-1|0-dimensional|size-1) "
                          r"arrays can be converted")


_NUMBER_CASTS = ("float", "int", "round")


def _formatted_name(part: ast.FormattedValue) -> str | None:
    """`x` of `{x:.1f}` or `{float(x)}`, formatted or converted as one number (`{x}` alone prints
    anything, and a subscript such as `{v[i]:.1f}` picks one element)."""
    value = part.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _NUMBER_CASTS:
        return value.args[0].id if value.args and isinstance(value.args[0], ast.Name) else None
    return value.id if isinstance(value, ast.Name) and part.format_spec is not None else None


def _array_sources(source: str, line: int | None) -> list[str]:
    """For a whole array formatted as a number on `line`: each name formatted there
    (`{answer:.1f}`, `{float(answer):.1f}`) with its last assignment before that line, e.g.
    `answer = (tmax + tmin) / 2`. Small models patch the failing line (float(answer), then np.mean of
    an undefined name) instead of the line that made the array; quoting it points at the real fix."""
    if line is None:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = [name for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
             and node.lineno <= line <= (node.end_lineno or node.lineno)
             for part in node.values if isinstance(part, ast.FormattedValue)
             if (name := _formatted_name(part)) is not None]
    found = []
    for name in dict.fromkeys(names):
        made = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and n.lineno < line
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
        if made:
            found.append(f"line {made[-1].lineno}: `{ast.unparse(made[-1])}`")
    return found


def specific_hints(error: str, source: str | None, examples: str = "") -> list[str]:
    """Hints that name the template's own variables (the answer of its mc_item call, an undefined
    constant that an example defines)."""
    hints: list[str] = []
    if not source:
        return hints
    if re.search(r"distractors|must be distinct|duplicate options|options", error):
        call = _call_at(source, _line_number(error), "mc_item")
        if call is not None and len(call.args) >= 2:
            answer = ast.unparse(_strip_str(call.args[1]))
            kind = _answer_kind(source, answer)
            number = (f"build `key, wrong = numeric_options({answer}, spread=..., decimals=1)` (a typical gap "
                      "between options as spread) and call mc_item(question, key, wrong, ...)")
            text = (f"for a date `key, wrong = date_options({answer}, low=dates[0], high=dates[-1])`; for a label "
                    f"`wrong = [c for c in candidates if c != {answer}][:3]` from other labels of the same kind, "
                    "`continue` when fewer than 3")
            if kind == "number":
                advice = f"It is a number: {number}"
            elif kind == "text":
                advice = f"It is text (a date or a label): {text}"
            else:
                advice = f"If it is a number, {number}; if it is a date or a label, {text}"
            hints.append(f"Your correct answer is `{answer}`. {advice}.")
    if re.search(r"can only concatenate str|unsupported operand type\(s\) for [-+]: '(str|Timestamp)'", error):
        text_answer = _offset_of_text(source, _line_number(error))
        if text_answer:
            hints.append(f"`{text_answer}` is text (a date or a label), so numeric offsets do not apply. For a date: "
                         f"key, wrong = date_options({text_answer}, low=dates[0], high=dates[-1]); for a label pick "
                         f"other labels: wrong = [c for c in LABELS if c != {text_answer}][:3]")
    line = _line_number(error)
    statement = source.splitlines()[line - 1] if line and 0 < line <= len(source.splitlines()) else ""
    if "series(" in statement and re.search(r"could not convert string to float|is not iterable|"
                                             r"object of type '\w+' has no len", error):
        hints.append("series(values, name=..., timestamps=..., unit=...) takes the whole series: `values` is a list "
                     "or array of numbers (e.g. frame[\"col\"].to_numpy(dtype=float)), and dates go in "
                     "`timestamps=` (same length). Do not pass a single number or a list of dates as values.")
    if re.search(r"returned \d+ items?; expected", error):
        skips = _skip_conditions(source)
        if skips:
            lines = ["These conditions skip a record; at least one is true for every record:"]
            for n, cond, quoted in skips[:4]:
                lines.append(f"- line {n}: `if {cond}: continue`"
                             + (f", where {'; '.join(quoted)}" if quoted else ""))
            if any(re.search(r"\b(wrong|distractors|options|others|candidates)\b", cond) for _, cond, _ in skips):
                lines.append("Wrong answers must be other values than the correct one: for a number "
                             "key, wrong = numeric_options(answer, spread=..., decimals=1); for a date "
                             "key, wrong = date_options(answer, low=dates[0], high=dates[-1])")
            hints.append("\n".join(lines))
    if _WHOLE_ARRAY.search(error):
        made = _array_sources(source, _line_number(error))
        if made:
            hints.append("A value formatted on that line is a whole array, not one number. Fix it where it is made "
                         "(reduce it there: answer = float(np.mean(...))), not on the failing line:\n"
                         + "\n".join(f"- {m}" for m in made[:4]))
    missing = re.search(r"NameError: name '(\w+)' is not defined", error)
    if missing and examples:
        name = missing.group(1)
        definition = re.search(rf"^(?:{re.escape(name)} = |def {re.escape(name)}\().*?(?=^\S|\Z)", examples,
                               re.M | re.S)
        if definition:
            hints.append(f"`{name}` is defined at the top of an example; copy its definition too:\n"
                         + definition.group(0).strip())
    return hints


def build_feedback(error: str, source: str | None, profile: HandlerProfile | None = None,
                   extra: Sequence[str] = (), *, examples: str = "") -> str:
    """Error, failing line and hints, as one short message."""
    parts = [f"Error: {error.strip()}"]
    if source:
        line = failing_line(error, source)
        if line:
            parts.append("Failing code:\n" + line)
    specific = specific_hints(error, source, examples)
    if specific and specific[0].startswith("`") and " is text " in specific[0]:
        parts.append("Hint: " + specific[0])  # the generic "convert the types" hint would mislead here
        parts += specific[1:]
    else:
        parts.append("Hint: " + hint_for(error, profile))
        parts += specific
    parts += list(extra)
    return "\n".join(parts)


def audit_feedback(report: AuditReport) -> str:
    """The item audit's rejection as feedback: the wrong items and the shortcuts a solver that never
    sees the series exploits, each under its kind, and how to build the options instead."""
    lines = ["It runs, but the item audit found problems (each says which kind it is, with an item):",
             report.feedback or report.error or "the item audit failed"]
    if {"numeric_rank", "centre", "odd_format", "length_rank"} & set(report.shortcuts):
        lines.append("Build numeric options like this (the key lands at a random rank, all options rounded alike):\n"
                     "    key, wrong = numeric_options(answer, spread=typical_gap, decimals=1, unit=\"mm\")\n"
                     "    items.append(mc_item(question, key, wrong, series=[...]))\n"
                     "and dates with key, wrong = date_options(day, spread_days=7, low=dates[0], high=dates[-1]).")
    return "\n".join(lines)


RUNAWAY_HINT = ("too long: compute it, do not list it. A template is a short program (about 20 to 60 lines): times, "
                "dates, thresholds and tables come from the data (frame.index, handler.records()) or from a loop or "
                "comprehension such as [f\"{h:02d}:00\" for h in range(24)], never typed out one by one. Reply with "
                "the whole template, short, in one ```python block.")


def runaway_feedback(problem: str, extra: Sequence[str] = ()) -> str:
    """Feedback for a reply that ran into the output limit or repeats itself (it never ran)."""
    return "\n".join([f"Error: {problem}", f"Hint: {RUNAWAY_HINT}", *extra])
