"""The prompts of the planner and the generator, and the pieces they are built from.

Design (it matters most for small local models):
- One narrow, documented API: the injected names with exact signatures, taken from the
  DatasetHandler and helper docstrings, plus the few numpy calls templates need.
- The data as it really is: columns with dtypes and ranges, an example record, the first rows of
  a series (read in the sandbox, see `agents.profile`).
- A fixed skeleton (pick a record, compute, guard with `continue`, build options, `mc_item`)
  and one curated example of the same handler: the one nearest the brief (TF-IDF over words).
- A strict output format: exactly one ```python block.
- Static text first, the example and the brief last: an in-process model reuses its cache for the
  shared prefix, and a refinement extends the same conversation.
- Short: on CPU the prompt costs more time than the reply (benchmarks/prompt_tokens.py measures
  every section), so columns show a few short values and only one example is shown.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import json
import math
import re
from collections.abc import Sequence

from itemsmith.agents.authoring.taxonomy import CATEGORY_HINTS, CONCEPTS, TASK_KINDS
from itemsmith.agents.profile import ColumnInfo, HandlerProfile
from itemsmith.handlers.base import DatasetHandler
from itemsmith.items.blocks import BLOCKS, DRAWN, STATISTICS, written_calls
from itemsmith.items.helpers import date_options, mc_item, numeric_options, series, tf_item
from itemsmith.items.reasoning_blocks import REASONING_BLOCKS, uses_for
from itemsmith.items.schema import Template
from itemsmith.templates_bank.curated import load_curated

SKELETON = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, "{channel}")   # a random window: values with their dates and unit
        if win is None:   # the record does not fit: draw another
            continue
{draw}        res = {block}   # the block computes the answer, its question, series and rationale
        item = ask(res)   # the item: res.question, the key and 3 distractors from the data
        if item is None:   # no fitting result or options: draw again
            continue
        items.append(item)
    return items'''

COOKBOOK = """Blocks compute answers right by construction; use them instead of computing by hand:
- win = take_window(handler, rid, channel, length=None): win.values[i] was measured at win.dates[i]; \
win.unit, win.about (channel, unit, record and dates, for the question text), win.first, win.last; None: continue
- res = channel_stat(win, how), how: "max", "min", "mean", "median", "sum", "range", "std": res.value, res.day \
(date of the max/min), res.question, res.shown (for series=), res.rationale, res.spread, res.decimals, res.unit
- item = ask(res): the whole item of any block's result (None: continue); or write your own question: \
key, wrong = numeric_options(res.value, spread=res.spread, decimals=res.decimals, unit=res.unit), then mc_item
- count_beyond(win, above=t) or (win, below=t): how many values; change_between(win, first=0, last=-1): \
values[last] - values[first]; first_day(win, above=t): res.value is the first date (None: never); \
t = draw_threshold(win): a value of the record drawn for each item, so counts differ from item to item
- other = align_window(handler, win, "other_channel"): the same dates; compare_windows(win, other, "mean"): \
res.label names the larger, res.value is the difference; also two records: two take_window calls
- reasoning blocks write their own question and options (None inside their margin: continue), then item = ask(res): \
trend(win); seasonal_peak(win, "month"|"weekday"|"hour"); unusual(win); level_shift(win); \
volatility_regime(win); compare(win, take_windows(handler, win, 3), "higher"|"more_variable"|"trends_more") \
(4 windows: 4 options); correlation(win, other); leads(win, other); most_alike(win, take_windows(handler, win, 4))
- time options: key, wrong = date_options(res.day, spread_days=7, low=win.first, high=win.last)
- a label of the record: row = handler.records().set_index("record_id").loc[rid]; row["{label}"]
- label distractors: wrong = [c for c in ALL_LABELS if c != answer][:3]  (at least 4 labels in ALL_LABELS)
- free code on win.values (numpy) and win.dates: i = int(np.argmax(win.values)) -> win.dates[i]; show \
series=[series(values, name=..., timestamps=dates, unit=win.unit)] with the values and dates you used
- never fixed offsets such as answer + d for d in (-3, 3, 6): the key is then always the second smallest"""


def numeric_channel(profile: HandlerProfile | None) -> str:
    """The channel the skeleton uses: the most common numeric one across sampled records."""
    if profile is None or not profile.series:
        return "value"
    numeric = {c.name for peek in profile.series for c in peek.columns if c.min is not None}
    ranked = sorted(profile.channels, key=lambda c: (-profile.channel_counts.get(c, 0), c not in numeric))
    return ranked[0] if ranked else "value"


def _label_column(profile: HandlerProfile | None) -> str:
    if profile is not None:
        for col in profile.columns:
            if col.name != "record_id" and col.values:
                return col.name
        for col in profile.columns:
            if col.name != "record_id":
                return col.name
    return "label"


DEFAULT_BLOCK = 'channel_stat(win, "mean")'
DRAW_LINE = f"        {DRAWN} = draw_threshold(win)   # a threshold of the record's values, drawn for each item\n"


def skeleton(profile: HandlerProfile | None = None, block: str = DEFAULT_BLOCK, channel: str | None = None) -> str:
    """The skeleton on `channel` (default: the dataset's main one; `take_window` returns None where a
    record lacks it) computing `block`, which may pass the drawn threshold `t`."""
    draws = any(call.draws for call in written_calls(block))
    return SKELETON.format(channel=channel or numeric_channel(profile), block=block, draw=DRAW_LINE if draws else "")


def brief_block(brief: dict[str, object]) -> str | None:
    """The block call a brief's `answer_from` names on `win` with literal arguments or the drawn
    threshold `t` ("count_beyond(win, 0) of precipitation ...", "first_day(win, above=t)"), or a
    reasoning block's call on `win` whose other arguments are literals or block calls
    ("correlation(win, align_window(handler, win, "wind"))"), for a skeleton of its own; None when it
    names none."""
    text = str(brief.get("answer_from", ""))
    written = next((call.text for call in written_calls(text) if call.literal and call.on_win), None)
    return written or next(filter(None, (_reasoning_call(text, m.start()) for m in _REASONING_CALL.finditer(text))),
                           None)


_REASONING_CALL = re.compile(rf"\b({'|'.join(REASONING_BLOCKS)})\s*\(")
_CALL_NAMES = frozenset({"win", "handler", *BLOCKS})


def _reasoning_call(text: str, start: int) -> str | None:
    """The call of a reasoning block at `start` when its first argument is `win` and it names nothing
    but `win`, `handler`, blocks and literals."""
    depth = 0
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0 and text[end] == ")":
            break
    else:
        return None
    call = text[start:end + 1]
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "win"):
        return None
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return call if names <= _CALL_NAMES and not any(isinstance(n, ast.Attribute) for n in ast.walk(node)) else None


def cookbook(profile: HandlerProfile | None = None) -> str:
    return COOKBOOK.format(label=_label_column(profile))


def _first_paragraph(obj: object) -> str:
    return (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")


def handler_api() -> str:
    """The handler's methods, from the DatasetHandler docstrings."""
    return "\n".join([
        f"    handler.records() -> pandas DataFrame. {_first_paragraph(DatasetHandler.records)}",
        f"    handler.series(record_id) -> pandas DataFrame. {_first_paragraph(DatasetHandler.series)}",
        "    handler.name, handler.description: strings. (getDataframe() and query(record_id) are aliases.)",
    ])


def helper_api() -> str:
    """The item helpers, from their docstrings (the `rng` argument is bound by the sandbox)."""
    return "\n".join([
        '    mc_item(question, correct, distractors, series=[...], rationale="...", metadata={...})\n'
        f"        {_first_paragraph(mc_item)} Options are turned into strings and must all differ;"
        " give 2 to 4 distractors.",
        '    tf_item(statement, is_true, series=[...], rationale="...", metadata={...})\n'
        f"        {_first_paragraph(tf_item)}",
        '    series(values, name="...", timestamps=None, unit=None, derived=None)\n'
        f"        {_first_paragraph(series)} Values must be finite numbers (no NaN).",
        '    numeric_options(correct, spread=..., n=4, decimals=..., unit="", low=None, high=None) -> (key, wrong)\n'
        f"        {_first_paragraph(numeric_options)} Pass both to mc_item(question, key, wrong, ...).",
        '    date_options(correct, spread_days=7, n=4, low=None, high=None, fmt="%Y-%m-%d") -> (key, wrong)\n'
        f"        {_first_paragraph(date_options)}",
    ])


GENERATOR_SYSTEM = """You write item templates: small Python functions that build multiple-choice questions about \
time series from a dataset. Reply with exactly one ```python code block and nothing else.

## Contract
Define `def question(num_samples):` that returns a list of `num_samples` items, each built with mc_item or \
tf_item. The code runs in a sandbox where these names already exist (never import them, never define them):
  handler: the dataset (read-only)
{handler_api}
  rng: a seeded numpy Generator, the ONLY source of randomness
    rng.integers(low, high) -> int in [low, high)   (there is NO rng.randint)
    rng.choice(a_list) -> one element; rng.choice(n, size=k, replace=False) -> k distinct positions 0..n-1
    rng.random() -> float in [0, 1); rng.permutation(n)
  np, pd, math, statistics, datetime: the usual modules, already imported
  item helpers:
{helper_api}
  statistics blocks (see the cookbook): take_window, align_window, channel_stat, count_beyond, change_between, ask, \
first_day, draw_threshold, compare_windows; reasoning blocks: trend, seasonal_peak, unusual, level_shift, \
volatility_regime, compare, correlation, leads, most_alike, take_windows

## Rules
1. Compute the answer from the data. Never guess it or hard-code it.
2. Attach the data the question is about: series=[series(values, name=..., timestamps=..., unit=...)]. Drop \
NaN first (`.dropna()`). Show a column's values as they are, named after the column, in its unit; a channel \
computed from them (a rolling mean, a conversion) says how: derived="7-day mean of temp_max".
3. Give mc_item exactly 3 distractors that only the data tells apart from the answer: for a number or a date \
use `key, wrong = numeric_options(answer, spread=..., decimals=1)` / `date_options(...)` (the key lands at a \
random rank, every option is formatted alike); for a label, other real labels filtered with `!=` the answer. \
Never fixed offsets of the answer, an unrounded answer among rounded options, or answers from a handful of values: \
an audit answers your items without the series and rejects the template when it beats chance.
4. When a record does not fit (too short, empty after a filter, a tie), `continue` and draw another one; the \
loop is bounded by `tries`.
5. Pick records with `ids[int(rng.integers(len(ids)))]`. Use only columns listed below; check their exact names.
6. No imports, no print, no file access, no names starting with "_", no `if __name__`. Define every name you \
use (also constants such as a list of month names) above `question` or inside it.
7. Say the unit and the dates in the question text. Give `rationale` (how the answer was computed) and \
`metadata={{"record_ids": [rid]}}`.
8. Keep f-strings simple: compute values into variables first; no quotes, joins or calls inside {{ }}.

## Skeleton to follow (for this dataset)
```python
{skeleton}
```

## Cookbook: building blocks and free code
{cookbook}"""


def generator_system(profile: HandlerProfile | None = None) -> str:
    return GENERATOR_SYSTEM.format(handler_api=handler_api(), helper_api=helper_api(), skeleton=skeleton(profile),
                                   cookbook=cookbook(profile))


MAX_SHOWN_VALUES = 4
MAX_VALUE_CHARS = 24


def _column_line(col: ColumnInfo) -> str:
    """A column as the profile describes it, with at most a few short example values."""
    values = [v if len(v) <= MAX_VALUE_CHARS else v[:MAX_VALUE_CHARS - 3] + "..." for v in col.values[:MAX_SHOWN_VALUES]]
    distinct = max(col.n_unique or 0, len(col.values)) or None
    return f"  - {col.model_copy(update={'values': values, 'n_unique': distinct}).describe()}"


def _record_lines(profile: HandlerProfile) -> list[str]:
    """What a record is, its id's type and examples, and how question text names the data."""
    quote = repr if not profile.record_id_dtype.startswith(("int", "uint", "float")) else str
    raw = [str(row["record_id"]) for row in profile.example_records[:2] if "record_id" in row]
    example = f" (e.g. {', '.join(quote(r) for r in raw)})" if raw else ""
    bare = f' ("record {raw[0]}")' if raw else ""
    return [f"A record is one row of handler.records() with its samples handler.series(record_id): "
            f"{profile.n_records} records, record_id {profile.record_id_dtype}{example}.",
            f"Question text names the data in the description's words (what a record is, the unit); a bare "
            f"record_id{bare} means nothing to a reader."]


def describe_profile(profile: HandlerProfile) -> str:
    """The dataset section (seen by the planner and the generator): the handler's description, what
    a record is and how questions name it, records columns, an example record, a series peek with
    its sampling."""
    description = profile.description.strip() or "(no description: name the data by its columns)"
    lines = [f"## Dataset `{profile.name}`", description, *_record_lines(profile), "",
             "handler.records() columns:"]
    lines += [_column_line(c) for c in profile.columns if c.name != "record_id"]
    if profile.example_records:
        row = {k: v for k, v in profile.example_records[0].items() if str(v) not in ("nan", "None", "NaT", "")}
        lines.append("Example row (missing values left out): " + json.dumps(row, ensure_ascii=False))
    lo, hi = profile.series_length_range
    if profile.series:
        peek = profile.series[0]
        lines += ["", f"handler.series(record_id): index `{peek.index_name}` ({peek.index_dtype}), "
                      f"{peek.sampling}, {lo} to {hi} rows per record; e.g. record {peek.record_id!r}: "
                      f"{peek.length} rows from {peek.index_first} to {peek.index_last}. Columns:"]
        lines += [_column_line(c) for c in peek.columns]
        if profile.units:
            lines.append("Units (pass unit= on every channel shown): "
                         + ", ".join(f"{c} {u}" for c, u in profile.units.items()))
        if profile.varying_channels:
            counts = ", ".join(f"{c} ({n} of {profile.n_sampled})" for c, n in
                               sorted(profile.channel_counts.items(), key=lambda kv: -kv[1]))
            lines.append(f"Channels differ between records; in the sampled records: {counts}. Check "
                         "`if name in frame.columns` before using one.")
        header = [peek.index_name] + [c.name for c in peek.columns]
        lines.append("First rows: " + " | ".join(header))
        lines += ["  " + " | ".join(row) for row in peek.head]
    return "\n".join(lines)


_STOP = {"the", "a", "an", "of", "in", "on", "at", "to", "for", "with", "and", "or", "is", "was", "what", "which",
         "how", "many", "much", "did", "does", "do", "record", "records", "value", "values", "this", "these", "by",
         "from", "its", "it", "be", "as", "that", "than", "most", "one", "each"}
_SYNONYMS = {"date": "day", "days": "day", "when": "day", "time": "day", "highest": "max", "maximum": "max",
             "largest": "max", "peak": "max", "lowest": "min", "minimum": "min", "smallest": "min",
             "number": "count", "often": "count", "percentage": "share", "percent": "share", "fraction": "share"}


def _words(text: str) -> set[str]:
    words = {w.strip(".,?!:;()'\"<>").lower() for w in text.replace("_", " ").split()}
    return {_SYNONYMS.get(w, w) for w in words if w and w not in _STOP}


def _example_pool(handler_name: str, max_chars: int) -> list[Template]:
    """This handler's curated templates, else (a user's handler) those of the real-data handlers."""
    curated = [t for t in load_curated().values() if len(t.source) <= max_chars]
    own = [t for t in curated if t.handler == handler_name]
    return own or [t for t in curated if t.handler not in (None, "synthetic")]


COPY_SIMILARITY = 0.9  # normalized code this alike to a curated example is a copy of it
EXAMPLE_MAX_CHARS = 2800  # longer curated templates are never shown as examples


class _Renamed(ast.NodeTransformer):
    """Names of the template's own (variables, functions, arguments) as n0, n1, ... in order of
    first use; the API's attributes and keywords stay, so renaming a copy's variables keeps it a copy."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self._name(node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node


def normalized_code(source: str) -> str | None:
    """The code without comments and layout, its own names renamed n0, n1, ... (None: no Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return ast.unparse(_Renamed().visit(tree))  # no comments, one layout, the template's names renamed


def copied_example(source: str, prompt: str, handler_name: str) -> Template | None:
    """The curated example shown in `prompt` (a slot's first message) that `source` copies: its
    code, without comments and layout and with its own names renamed, at least COPY_SIMILARITY
    alike; None when it copies none. A copy adds no template to the user's bank that the curated
    set does not already hold."""
    code = normalized_code(source)
    if code is None:
        return None
    for template in _example_pool(handler_name, EXAMPLE_MAX_CHARS):
        if template.source.strip() not in prompt:
            continue
        example = normalized_code(template.source)
        if example is not None and difflib.SequenceMatcher(None, code, example).ratio() >= COPY_SIMILARITY:
            return template
    return None


def nearest_examples(brief: dict[str, object], handler_name: str, *, limit: int = 1,
                     max_chars: int = EXAMPLE_MAX_CHARS) -> list[Template]:
    """The curated templates closest to the brief: TF-IDF cosine similarity of the content words of
    the brief (title, category, concept, question) and of each template (title, category,
    concepts), weighted over the candidates so that words they all share (the dataset's name, a
    common category) count little (ties: the shorter source, fewer prompt tokens). A template that
    shares no word with the brief is never shown: the skeleton and the API summary cost less."""
    pool = _example_pool(handler_name, max_chars)
    if limit <= 0 or not pool:
        return []
    wanted = _words(" ".join(str(brief.get(k, "")) for k in ("title", "category", "concept", "question")))
    docs = {t.id: _words(" ".join([t.title, t.category or "", *t.concepts])) for t in pool}
    frequency: dict[str, int] = {}
    for words in docs.values():
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    idf = {word: math.log((1 + len(pool)) / (1 + n)) + 1 for word, n in frequency.items()}

    def similarity(template: Template) -> float:
        words = docs[template.id]
        shared = sum(idf[w] ** 2 for w in wanted & words)
        norm = math.sqrt(sum(idf.get(w, idf_max) ** 2 for w in wanted) * sum(idf[w] ** 2 for w in words))
        return shared / norm if norm else 0.0

    idf_max = math.log(1 + len(pool)) + 1  # a word of the brief that no candidate has
    scored = sorted(((similarity(t), t) for t in pool), key=lambda st: (-st[0], len(st[1].source), st[1].id))
    return [t for score, t in scored if score > 0][:limit]  # none in common: the API summary has to do


def top_level_names(source: str) -> list[str]:
    """Constants a template defines at the top level (outside `question`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.FunctionDef) and node.name != "question":
            names.append(node.name)
    return names


def describe_examples(examples: Sequence[Template]) -> str:
    """The curated templates closest to the brief, with a note on the constants they define."""
    if not examples:
        return ""
    heading = "template closest to your brief" if len(examples) == 1 else "templates closest to your brief"
    blocks = [f"## The working {heading} (follow its style and its use of the API; do not copy its question)"]
    for template in examples:
        blocks.append(f"# {template.title}\n```python\n{template.source.strip()}\n```")
    constants = sorted({n for t in examples for n in top_level_names(t.source)})
    if constants:
        blocks.append(f"It defines {', '.join(constants)} above `question`; if your code uses one, copy its "
                      "definition too.")
    return "\n\n".join(blocks)


def describe_brief(brief: dict[str, object]) -> str:
    columns = ", ".join(str(c) for c in brief.get("columns", []) or []) or "choose from the columns above"
    return "\n".join([
        f"Title: {brief['title']}",
        f"Category: {brief['category']} ({CATEGORY_HINTS.get(str(brief['category']), '')})",
        f"Kind: {'true/false item (tf_item)' if brief.get('kind') == 'tf' else 'multiple choice (mc_item)'}",
        f"Question idea: {brief['question']}",
        *([f"Say in the question text (what a record is, the unit): {brief['context']}"] if brief.get("context")
          else []),
        f"Answer computed from: {brief['answer_from']}",
        f"Columns: {columns}",
        *_category_blocks(brief),
        *_brief_skeleton(brief),
    ])


def _category_blocks(brief: dict[str, object]) -> list[str]:
    """The reasoning blocks of the brief's category, as a short call each (`res = ...`, then `ask(res)`)."""
    columns = [str(c) for c in brief.get("columns", []) or []]
    second = columns[1] if len(columns) > 1 else None
    calls = [(use.written(second), use.asks) for use in uses_for(str(brief.get("category", "")),
                                                                 pairs=second is not None)]
    if not calls:
        return []
    return ["Blocks that answer this category (res = the call on the skeleton's win, then item = ask(res)):",
            *(f"  {call}: {asks}" for call, asks in calls)]


def _brief_skeleton(brief: dict[str, object]) -> list[str]:
    block, columns = brief_block(brief), [str(c) for c in brief.get("columns", []) or []]
    if block is None or not columns:
        return []  # a block on its first column: on one window, a block reads one channel
    return ["This brief as the skeleton (start from it; add what the brief needs):",
            f"```python\n{skeleton(block=block, channel=columns[0])}\n```"]


def generator_task(*, profile_text: str, task: str, brief: dict[str, object], accepted_titles: Sequence[str],
                   examples: Sequence[Template] = ()) -> str:
    """The first user message of a slot: the dataset and the task first (the same for every slot, so
    an in-process model keeps them in its prompt cache), then the curated example closest to the
    brief, the accepted titles, and the brief last."""
    parts = [profile_text, f"## Benchmark task\n{task.strip()}"]
    if examples:
        parts.append(describe_examples(examples))
    if accepted_titles:
        parts.append("## Templates already accepted (write a different one)\n"
                     + "\n".join(f"- {t}" for t in accepted_titles))
    parts.append("## Write the template for this brief\n" + describe_brief(brief)
                 + "\n\nReply with the whole template in one ```python block.")
    return "\n\n".join(parts)


def refine_message(feedback: str) -> str:
    return (f"The template failed the check.\n{feedback}\n\nFix this problem. Keep what works. Reply with the whole "
            "corrected template in one ```python block.")


# --- planner --------------------------------------------------------------------------------

PLANNER_SYSTEM = """You plan a benchmark of time-series reasoning questions. Each question type becomes one \
item template later, written by a programmer. Plan question types that are answerable only by looking at the \
series, whose correct answer can be computed exactly from the data, and that differ from each other.
Reply with one JSON array and nothing else."""

PLANNER_TASK = """{profile}

## Benchmark task
{task}

## Categories
{categories}
Concept tags: {concepts}
Task kinds: {kinds}

## Building blocks the programmer has (exact by construction: prefer questions one of them answers)
{blocks}

## Plan {n} question types
Their categories, in this order: {slots}.

Each element of the JSON array is an object with exactly these keys:
  "title": a short title of the question (4 to 8 words, unique),
  "category": the category given above,
  "concept": one concept tag or task kind,
  "kind": "mc" (multiple choice) or "tf" (true/false),
  "question": the question a student sees, with placeholders like <record> or <date>,
  "context": one short sentence in the description's words telling the student what a record is and the unit,
  "answer_from": how the program computes the correct answer: a building block below and its channel when one \
fits (e.g. channel_stat(win, "max") of a channel over a random window), else which column and which calculation; \
the very quantity the question asks for (the maximum for "highest", a date for "when"),
  "columns": the column names it needs (from records() or series()).
Use the real column names above. The only placeholder allowed is <record>. The data is historical: never refer \
to today or the current date. Each question must need the values of one or a few records' series (not only their \
dates or labels), and the questions must differ from each other.
Example element (do not repeat it):
{example}
Reply with the JSON array of {n} objects."""

def planner_example(channel: str, context: str) -> dict[str, object]:
    """One concrete brief on the dataset's own channel and in its description's words (a
    placeholder-free pattern to follow)."""
    return {
        "title": f"Highest {channel} of a record",
        "category": "arithmetic",
        "concept": "arithmetic",
        "kind": "mc",
        "question": f"What was the highest {channel} in record <record>?",
        "context": context,
        "answer_from": f'channel_stat(win, "max") of {channel} over a random window (take_window), rounded to 1 '
                       "decimal",
        "columns": [channel],
    }


def series_channels(profile: HandlerProfile | None) -> list[str]:
    """The numeric channels of the sampled series, most common first."""
    if profile is None:
        return []
    numeric = {c.name for peek in profile.series for c in peek.columns if c.min is not None}
    return sorted(numeric, key=lambda c: (-profile.channel_counts.get(c, 0), c))


def block_menu(profile: HandlerProfile | None) -> str:
    """What the blocks compute on this data's channels: the statistics a brief can name."""
    channels = series_channels(profile) or [numeric_channel(profile)]
    shown = ", ".join(channels[:6])
    lines = [f"Each works on win = take_window(handler, record, channel): a window of one channel of one record "
             f"(channels: {shown}).",
             f"- channel_stat(win, how), how in {', '.join(STATISTICS)}: the value; for max/min also its day",
             "- count_beyond(win, above=t) / count_beyond(win, below=t): how many values are above/below t",
             "- change_between(win, first, last): the change from one day of the window to another",
             "- first_day(win, above=t): the first date above (or below) t",
             "t: a number, or write t itself for a threshold each item draws from its record's values "
             "(a fixed threshold leaves a seasonal channel's windows all above or all below it)"]
    if len(channels) >= 2:
        lines.append(f"- compare_windows(win, align_window(handler, win, other), how): which of two channels "
                     f"(e.g. {channels[0]} vs {channels[1]}) has the larger statistic, and by how much")
    lines.append("- compare_windows(win_a, win_b, how) of two records: which record has the larger statistic")
    second = channels[1] if len(channels) >= 2 else None
    lines.append("Reasoning blocks (each asks its own question; the answer_from of a brief of its category should "
                 "name one, with its arguments):")
    for category in CATEGORY_HINTS:
        calls = [f"{use.written(second)} ({use.asks})" for use in uses_for(category, pairs=second is not None)]
        if calls:
            lines.append(f"- {category}: " + "; ".join(calls))
    return "\n".join(lines)


def planner_task(*, profile_text: str, task: str, categories: Sequence[str],
                 profile: HandlerProfile | None = None) -> str:
    slots = ", ".join(categories)
    described = "\n".join(f"- {c}: {hint}" for c, hint in CATEGORY_HINTS.items())
    return PLANNER_TASK.format(
        profile=profile_text, task=task.strip(), categories=described, concepts=", ".join(CONCEPTS),
        kinds=", ".join(TASK_KINDS), n=len(categories), slots=slots, blocks=block_menu(profile),
        example=json.dumps(planner_example(numeric_channel(profile), profile.context if profile else "")))


def planner_retry(errors: Sequence[str], missing: Sequence[str]) -> str:
    """The follow-up to a short plan: what was wrong, and the categories still needed (one object each)."""
    shown = "\n".join(f"- {e}" for e in errors[:6])
    return (f"{len(missing)} question type(s) are still missing or invalid:\n{shown}\nReply with a JSON array of "
            f"{len(missing)} new, different objects, one for each of these categories: {', '.join(missing)}; "
            "each with the keys title, category, concept, kind, question, context, answer_from, columns.")
