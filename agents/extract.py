"""Getting template source out of an LLM reply, fenced or not, and cheap checks before the sandbox.

`extract_code` raises `ExtractionError` with a message meant as feedback to the model, and drops
imports the code never uses (`drop_unused_imports`). A syntax error is not raised here: the
sandbox reports it with its line, like any other failure. `runaway` tells a reply that ran into
the output limit or repeats itself (a listing instead of code).
"""

from __future__ import annotations

import ast
import re

from itemsmith.items.blocks import BLOCKS

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:.*", re.S | re.M)
INJECTED = ("handler", "rng", "mc_item", "tf_item", "pz_item", "series", "np", "pd", "math", "random",
            "statistics", "datetime", "synth", *BLOCKS)


class ExtractionError(ValueError):
    """The reply holds no usable template; the message is feedback for the model."""


def _blocks(reply: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(reply)]


def _strip_unfenced(reply: str) -> str:
    """From an unfenced reply, the lines from the first code-looking line to the last one."""
    lines = reply.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if re.match(r"(def |import |from |[A-Z_][A-Z0-9_]* *=|@)", line)), None)
    if start is None:
        return ""
    code = lines[start:]
    # Drop trailing prose: shrink from the end until it parses (bounded by the line count).
    for end in range(len(code), 0, -1):
        candidate = "\n".join(code[:end])
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        if "def question" in candidate:
            return candidate
    return "\n".join(code)


def extract_code(reply: str) -> str:
    """The template source in a reply: the fenced block that defines `question` (the last such
    block; python-tagged ones first), else the code-looking part of an unfenced reply."""
    if not reply or not reply.strip():
        raise ExtractionError("the reply was empty; reply with the whole template in one ```python block")
    blocks = _blocks(reply)
    with_question = [(lang, body) for lang, body in blocks if re.search(r"^\s*def\s+question\s*\(", body, re.M)]
    if with_question:
        python = [body for lang, body in with_question if lang in ("python", "py", "python3")]
        code = (python or [body for _, body in with_question])[-1]
    elif blocks:
        code = "\n\n".join(body for lang, body in blocks if lang in ("", "python", "py", "python3"))
    else:
        code = _strip_unfenced(reply)
    code = drop_unused_imports(_MAIN_GUARD.sub("", code)).strip("\n")
    if not code.strip():
        raise ExtractionError("no Python code found in the reply; reply with the whole template in one "
                              "```python block")
    if not re.search(r"^def\s+question\s*\(", code, re.M):
        raise ExtractionError("the code does not define `def question(num_samples):` at the top level; "
                              "reply with the whole template in one ```python block")
    return code + "\n"


def drop_unused_imports(source: str) -> str:
    """The source without its top-level imports that bind only names it never uses (small models
    write `from scipy.stats import skew` and never call it; the sandbox would refuse the whole
    template for it). An import that is used stays, and the sandbox judges it; source that does
    not parse is returned as it is."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unused = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
              and all(a.name != "*" and (a.asname or a.name.split(".")[0]) not in used for a in node.names)]
    if not unused:
        return source
    lines = source.splitlines(keepends=True)
    for node in reversed(unused):  # statements on lines of their own: a `;` would join code to the import
        if node.end_lineno is None or any(";" in line for line in lines[node.lineno - 1:node.end_lineno]):
            continue
        del lines[node.lineno - 1:node.end_lineno]
    return "".join(lines)


def lint(source: str) -> str | None:
    """Problems the sandbox would report less clearly; None when there are none (or it does not parse:
    the sandbox reports syntax errors with their line)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id in INJECTED:
                return (f"line {node.lineno}: do not assign `{target.id}` at the top level: it is provided by the "
                        f"sandbox (remove that line and use the injected `{target.id}`)")
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in INJECTED:
            return (f"line {node.lineno}: do not define `{node.name}`: it is provided by the sandbox; remove your "
                    "definition and call the injected one")
    question = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "question"), None)
    if question is None:
        return "define `def question(num_samples):` at the top level"
    if len(question.args.args) != 1:
        return (f"line {question.lineno}: `question` must take exactly one argument, `num_samples` "
                f"(it takes {len(question.args.args)})")
    if not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(question)):
        return f"line {question.lineno}: `question` must `return items` (a list of items)"
    return None


# A reply that runs away: a small model that types out every minute of a day (or repeats one block)
# until the output limit. Units are the pieces between newlines, commas and semicolons with every
# digit run made "0", so a list that only counts up ("00:01", "00:02", ...) is one unit repeated.
RUNAWAY_REPEATS = 30  # one unit this often: a listing, not code (a year of months is 12)
RUNAWAY_LINE_REPEATS = 8  # one long line this often: a repeated block
RUNAWAY_LINE_CHARS = 24
_UNIT_SPLIT = re.compile(r"[\n,;]")
_DIGITS = re.compile(r"\d+")


def repetition_shape(text: str) -> str:
    """A unit or line as repetitions are counted: digit runs made "0", spaces collapsed."""
    return " ".join(_DIGITS.sub("0", text).split())


def repetition(reply: str) -> str | None:
    """How a reply repeats itself (a unit or a long line over and over, numbers aside), or None."""
    units = [repetition_shape(u) for u in _UNIT_SPLIT.split(reply)]
    counts: dict[str, int] = {}
    for unit in units:
        if len(unit) >= 3:
            counts[unit] = counts.get(unit, 0) + 1
    if counts:
        unit, n = max(counts.items(), key=lambda kv: kv[1])
        if n >= RUNAWAY_REPEATS:
            return f"it repeats `{unit[:60]}` {n} times (numbers aside)"
    lines: dict[str, int] = {}
    for line in reply.splitlines():
        shaped = repetition_shape(line)
        if len(shaped) >= RUNAWAY_LINE_CHARS:
            lines[shaped] = lines.get(shaped, 0) + 1
    if lines:
        line, n = max(lines.items(), key=lambda kv: kv[1])
        if n >= RUNAWAY_LINE_REPEATS:
            return f"it repeats the line `{line[:60]}` {n} times (numbers aside)"
    return None


def runaway(reply: str, *, truncated: bool, output_tokens: int = 0) -> str | None:
    """Why a reply ran away, as the error of its round (None: it did not): it was cut at the output
    limit, or it repeats itself. Such a reply never goes to the sandbox."""
    repeats = repetition(reply)
    if truncated:
        size = f" after {output_tokens} tokens" if output_tokens else ""
        return f"the reply was cut at the output limit{size}" + (f": {repeats}" if repeats else "")
    if repeats:
        return f"the reply runs on listing values: {repeats}"
    return None
