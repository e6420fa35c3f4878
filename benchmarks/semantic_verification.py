"""Measure template verification on the semantic corpus (benchmarks/semantic_corpus).

The corpus was written before and without reading the semantic checks it measures: good templates
(no known flaw), flawed ones (exactly one semantic flaw each, its class and a sentence in
manifest.toml) and gaming ones (built to beat blind audits, each with a blind rule here that answers
its items without the series).

    python benchmarks/semantic_verification.py [--only CLASS ...] [--with-models] [--timeout 600] [--json-out FILE]
    python benchmarks/semantic_verification.py --check-corpus [--samples 30] [--train-seeds 3] [--test-seeds 2]

Default mode: every entry through `itemsmith verify FILE --handler H --json --no-judges
--no-students` (`--with-models` drops the last two flags), which prints one JSON object with
`accepted`, `stage` (the rejecting stage or null), `reasons` and `stages`, and exits 0 only when
accepted. Prints per class the recall (share of flawed/gaming templates rejected) and the stage
that rejected them, and for good templates the false rejections per stage.

`--check-corpus` uses only what exists without the new checks: `itemsmith check-template` on every
entry (it must run and yield items), then items sampled in the sandbox on fresh seeds, each gaming
entry's blind rule scored on them against chance, and every rule scored on the good templates'
items as a control (a rule that also answers good items measures nothing). Flawed entries with a
`fix` in the manifest run next to their fixed twin on the same seeds, at 5 and 60 items: the share
of items that differ is how often the flaw shows (a size-dependent flaw shows more at 60).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "semantic_corpus"
MANIFEST = CORPUS / "manifest.toml"

FLAW_CLASSES = ("shifted_window", "wrong_channel", "whole_record", "two_correct", "answer_in_text",
                "mislabelled_unit", "size_dependent", "precedence", "wrong_statistic", "mislabelled_series",
                # written later, as users write them, in `flawed_users/` (each an edit of a `good_users/` template)
                "lying_derivation", "tie", "date_off_by_one", "shifted_timestamps", "equivalent_options",
                "other_record", "encoded_answer", "approximate_close_options", "printed_threshold",
                "other_channel", "wrong_statistic_derived")
GAMING_CLASSES = ("round_number", "digit_pattern", "ratio_distractors", "paraphrase", "tf_giveaway",
                  "memorizable_key", "middle_value", "option_in_context")
CLASSES_BY_KIND: dict[str, tuple[str, ...]] = {"good": ("good",), "flawed": FLAW_CLASSES, "gaming": GAMING_CLASSES}

REALIZATION_SIZES = (5, 60)  # num_samples at which a flaw's share of affected items is measured

Item = dict[str, Any]
Answerer = Callable[[Item], int | None]  # the option index a rule picks, None when it abstains


# --- the manifest -----------------------------------------------------------------------------------


class CorpusEntry(BaseModel):
    """One template of the corpus, as manifest.toml lists it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    file: str
    kind: Literal["good", "flawed", "gaming"]
    klass: str = Field(alias="class")
    handler: str
    flaw: str
    blind_rule: str | None = None
    # flawed only: (old, new) source edits that remove the flaw and change nothing else, so the flawed
    # template and its fixed twin draw the same items on a seed and differ only where the flaw shows
    fix: list[tuple[str, str]] = Field(default_factory=list)
    base: str | None = None  # flawed only: the correct template it is an edit of

    @model_validator(mode="after")
    def _consistent(self) -> CorpusEntry:
        if self.klass not in CLASSES_BY_KIND[self.kind]:
            raise ValueError(f"{self.file}: class {self.klass!r} is not a {self.kind} class "
                             f"({', '.join(CLASSES_BY_KIND[self.kind])})")
        if (self.kind == "good") != (self.flaw == "none"):
            raise ValueError(f"{self.file}: good templates have flaw = \"none\", the others say what is wrong")
        if self.kind == "gaming" and self.blind_rule not in BLIND_RULES:
            raise ValueError(f"{self.file}: blind_rule {self.blind_rule!r} is not one of {sorted(BLIND_RULES)}")
        if self.kind != "gaming" and self.blind_rule is not None:
            raise ValueError(f"{self.file}: only gaming templates have a blind_rule")
        if self.kind != "flawed" and (self.fix or self.base):
            raise ValueError(f"{self.file}: only flawed templates have a fix or a base")
        return self

    @property
    def path(self) -> Path:
        return CORPUS / self.file

    def fixed_source(self) -> str:
        """The template with `fix` applied; each old text must occur exactly once."""
        source = self.path.read_text()
        for old, new in self.fix:
            if source.count(old) != 1:
                raise ValueError(f"{self.file}: fix text {old!r} occurs {source.count(old)} times, not once")
            source = source.replace(old, new)
        return source


def load_manifest(path: Path = MANIFEST) -> list[CorpusEntry]:
    """The manifest's entries, validated (a missing file or a duplicate entry is an error)."""
    raw = tomllib.loads(path.read_text())
    entries = [CorpusEntry.model_validate(t) for t in raw.get("template", [])]
    dupes = [f for f, n in Counter(e.file for e in entries).items() if n > 1]
    if dupes:
        raise ValueError(f"manifest lists these files more than once: {dupes}")
    missing = [e.file for e in entries if not e.path.is_file()]
    if missing:
        raise ValueError(f"manifest lists files that do not exist: {missing}")
    return entries


# --- blind rules: answer an item from its text and options alone --------------------------------------

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def option_numbers(item: Item) -> list[float] | None:
    """The first number of every option, or None when an option has none."""
    found = [NUMBER.search(o) for o in item["options"]]
    if any(m is None for m in found):
        return None
    return [float(m.group()) for m in found if m is not None]


def unique_best(scores: Sequence[float]) -> int | None:
    """The index of the single highest score; None on a tie."""
    top = max(scores)
    winners = [i for i, s in enumerate(scores) if s == top]
    return winners[0] if len(winners) == 1 else None


def roundest_number(item: Item) -> int | None:
    """The option whose number is a multiple of the largest round unit (100, 50, 10, 5, 1, 0.5, 0.1)."""
    values = option_numbers(item)
    if values is None:
        return None
    units = (100.0, 50.0, 10.0, 5.0, 1.0, 0.5, 0.1)

    def roundness(x: float) -> float:
        return next((u for u in units if abs(x / u - round(x / u)) < 1e-6), 0.0)

    return unique_best([roundness(v) for v in values])


def odd_one_out_parity(item: Item) -> int | None:
    """The one option whose last digit's parity differs from every other option's."""
    digits = [re.findall(r"\d", o) for o in item["options"]]
    if any(not d for d in digits):
        return None
    parity = [int(d[-1]) % 2 for d in digits]
    counts = Counter(parity)
    if len(counts) != 2 or min(counts.values()) != 1:
        return None
    lone = min(counts, key=lambda p: counts[p])
    return parity.index(lone)


SIMPLE_RATIOS = (2.0, 10.0, 25.4)  # doubling/halving, a decimal slip, mm vs inches


def ratio_hub(item: Item) -> int | None:
    """The option that the most other options are a simple multiple or fraction of."""
    values = option_numbers(item)
    if values is None or any(v <= 0 for v in values):
        return None

    def simple(a: float, b: float) -> bool:
        r = max(a, b) / min(a, b)
        return any(abs(r / s - 1) < 0.015 for s in SIMPLE_RATIOS)

    return unique_best([sum(simple(v, w) for j, w in enumerate(values) if j != i) for i, v in enumerate(values)])


def weekday_in_question(item: Item) -> int | None:
    """The option date falling on the weekday the question (or context) names."""
    text = f"{item['question']} {item.get('context') or ''}".lower()
    named = [d for d in WEEKDAYS if re.search(rf"\b{d}\b", text)]
    if len(named) != 1:
        return None
    hits = []
    for i, option in enumerate(item["options"]):
        try:
            day = dt.date.fromisoformat(option.strip()[:10])
        except ValueError:
            return None
        if WEEKDAYS[day.weekday()] == named[0]:
            hits.append(i)
    return hits[0] if len(hits) == 1 else None


def just_under_number(item: Item) -> int | None:
    """'just under N' / 'a little over N' in the text: the one option within 1 of N on that side."""
    text = f"{item['question']} {item.get('context') or ''}"
    under = re.search(r"just under (-?\d+(?:\.\d+)?)", text)
    over = re.search(r"a little over (-?\d+(?:\.\d+)?)", text)
    values = option_numbers(item)
    if values is None or (under is None) == (over is None):
        return None
    if under is not None:
        n = float(under.group(1))
        hits = [i for i, v in enumerate(values) if n - 1 <= v < n]
    else:
        assert over is not None
        n = float(over.group(1))
        hits = [i for i, v in enumerate(values) if n < v <= n + 1]
    return hits[0] if len(hits) == 1 else None


def tf_index(item: Item, truth: bool) -> int | None:
    options = [o.strip().lower() for o in item["options"]]
    wanted = "true" if truth else "false"
    return options.index(wanted) if wanted in options else None


def tf_absolute_words(item: Item) -> int | None:
    """A true/false statement with an absolute word (every, all, always, never, none) is false."""
    if item.get("kind") != "tf":
        return None
    absolute = re.search(r"\b(every|all|always|never|none)\b", item["question"].lower()) is not None
    return tf_index(item, not absolute)


def tf_threshold_decimals(item: Item) -> int | None:
    """A true/false threshold written with two or more decimals is false; a whole or one-decimal one true."""
    if item.get("kind") != "tf":
        return None
    found = re.findall(r"(?:above|below|than|exceeds?) (-?\d+(?:\.(\d+))?)", item["question"])
    if not found:
        return None
    decimals = len(found[-1][1])
    return tf_index(item, decimals < 2)


def middle_value(item: Item) -> int | None:
    """The middle option by value (odd option counts only)."""
    values = option_numbers(item)
    if values is None or len(values) % 2 == 0:
        return None
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[len(values) // 2]


def option_in_context(item: Item) -> int | None:
    """The one option whose text appears verbatim in the context (or, without one, the question)."""
    text = item.get("context") or item["question"]
    hits = [i for i, o in enumerate(item["options"]) if o.strip() and o.strip() in text]
    return hits[0] if len(hits) == 1 else None


def stateless(rule: Answerer) -> Callable[[Sequence[Item]], Answerer]:
    def fit(train: Sequence[Item]) -> Answerer:
        del train
        return rule
    return fit


def memorize_by_question(train: Sequence[Item]) -> Answerer:
    """Remember the key text of every question seen in training; answer a repeated question with it."""
    memory: dict[str, str] = {}
    for item in train:
        memory[item_text(item)] = item["options"][item["answer_index"]]

    def answer(item: Item) -> int | None:
        remembered = memory.get(item_text(item))
        return item["options"].index(remembered) if remembered in item["options"] else None

    return answer


def _records(item: Item) -> set[str]:
    named = (item.get("metadata") or {}).get("record_ids")
    return {str(r) for r in (named if isinstance(named, list) else [named])} if named is not None else set()


def _without_records(item: Item) -> str:
    text = item_text(item)
    for record in _records(item):
        text = text.replace(record, "#")
    return text


def key_prior(train: Sequence[Item]) -> Answerer:
    """What the keys of other records say, never the item's own records: a choice item gets the option
    that was most often the key on records it does not name; a true/false item the truth most often
    given to its statement with the record names blanked out (the same wording and threshold about
    another year). An item that names no record abstains."""
    seen = [(_records(item), item) for item in train if _records(item)]

    def answer(item: Item) -> int | None:
        own = _records(item)
        if not own:
            return None
        others = [t for records, t in seen if not records & own]
        if item.get("kind") == "tf":
            wording = _without_records(item)
            votes = Counter(t["answer_index"] for t in others if _without_records(t) == wording)
        else:
            keys = Counter(t["options"][t["answer_index"]] for t in others)
            votes = Counter({i: keys[o] for i, o in enumerate(item["options"]) if keys[o]})
        if not votes:
            return None
        top = max(votes.values())
        best = [i for i, n in votes.items() if n == top]
        return best[0] if len(best) == 1 else None

    return answer


def item_text(item: Item) -> str:
    return " ".join(f"{item['question']} {item.get('context') or ''}".split())


# name -> trainer: takes training items (other seeds), returns the answerer for test items
BLIND_RULES: dict[str, Callable[[Sequence[Item]], Answerer]] = {
    "roundest_number": stateless(roundest_number),
    "odd_one_out_parity": stateless(odd_one_out_parity),
    "ratio_hub": stateless(ratio_hub),
    "weekday_in_question": stateless(weekday_in_question),
    "just_under_number": stateless(just_under_number),
    "tf_absolute_words": stateless(tf_absolute_words),
    "tf_threshold_decimals": stateless(tf_threshold_decimals),
    "memorize_by_question": memorize_by_question,
    "key_prior": key_prior,
    "middle_value": stateless(middle_value),
    "option_in_context": stateless(option_in_context),
}


class RuleScore(BaseModel):
    """A blind rule on a set of items; abstentions count as a uniform guess in `expected_accuracy`."""

    rule: str
    items: int
    answered: int
    correct: int
    expected_accuracy: float  # (correct + sum of 1/k over abstained items) / items
    chance: float  # mean of 1/k


def score_rule(rule: str, train: Sequence[Item], test: Sequence[Item]) -> RuleScore:
    answer = BLIND_RULES[rule](train)
    answered = correct = 0
    guessed = 0.0
    for item in test:
        pick = answer(item)
        if pick is None:
            guessed += 1 / len(item["options"])
            continue
        answered += 1
        correct += pick == item["answer_index"]
    n = len(test)
    chance = statistics.fmean(1 / len(i["options"]) for i in test) if test else 0.0
    return RuleScore(rule=rule, items=n, answered=answered, correct=correct,
                     expected_accuracy=(correct + guessed) / n if n else 0.0, chance=chance)


# --- running the CLI -------------------------------------------------------------------------------


def itemsmith_command() -> list[str]:
    """The itemsmith CLI of this interpreter's environment."""
    beside = Path(sys.executable).with_name("itemsmith")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("itemsmith")
    if found:
        return [found]
    return [sys.executable, "-c", "from itemsmith.cli.app import app; app()"]


def require_verify_command() -> None:
    """Exit with a clear message when this installation has no `itemsmith verify`."""
    probe = subprocess.run([*itemsmith_command(), "verify", "--help"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        lines = [line.strip(" │╭╰─╮╯") for line in (probe.stderr or probe.stdout).strip().splitlines()]
        said = next((line for line in lines if "no such command" in line.lower()), f"exit code {probe.returncode}")
        sys.exit(f"`itemsmith verify` is not available in this installation ({said}). "
                 "It is the verify command (accepted/stage/reasons/stages as JSON); install a build that "
                 "has it, or run --check-corpus, which needs only check-template and the sandbox.")


def last_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object the command printed (the whole stdout, else its last line that parses)."""
    for candidate in [text, *reversed(text.strip().splitlines())]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def stage_verdicts(stages: Any) -> dict[str, str]:
    """`stages` as {stage: verdict}, from a dict or a list of per-stage objects."""
    if isinstance(stages, dict):
        return {str(k): verdict_text(v) for k, v in stages.items()}
    verdicts: dict[str, str] = {}
    if isinstance(stages, list):
        for i, entry in enumerate(stages):
            if isinstance(entry, dict):
                name = entry.get("stage") or entry.get("name") or f"stage{i}"
                verdicts[str(name)] = verdict_text(entry)
    return verdicts


def verdict_text(value: Any) -> str:
    if isinstance(value, bool):
        return "passed" if value else "failed"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("verdict", "status", "result"):
            if isinstance(value.get(key), str):
                return str(value[key])
        if isinstance(value.get("passed"), bool):
            return "passed" if value["passed"] else "failed"
        if isinstance(value.get("accepted"), bool):
            return "passed" if value["accepted"] else "failed"
    return json.dumps(value)[:80]


class VerifyOutcome(BaseModel):
    """One corpus entry through `itemsmith verify`; `accepted` is None when no verdict came back."""

    file: str
    kind: str
    klass: str
    accepted: bool | None
    stage: str | None = None
    reasons: list[str] = Field(default_factory=list)
    stages: dict[str, str] = Field(default_factory=dict)
    error: str | None = None
    wall_s: float


def verify_entry(entry: CorpusEntry, *, with_models: bool, timeout: float) -> VerifyOutcome:
    command = [*itemsmith_command(), "verify", str(entry.path), "--handler", entry.handler, "--json"]
    if not with_models:
        command += ["--no-judges", "--no-students"]
    started = time.monotonic()
    base = {"file": entry.file, "kind": entry.kind, "klass": entry.klass}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return VerifyOutcome(**base, accepted=None, error=f"timed out after {timeout:.0f} s",
                             wall_s=time.monotonic() - started)
    wall = time.monotonic() - started
    payload = last_json_object(done.stdout)
    if payload is None or not isinstance(payload.get("accepted"), bool):
        tail = (done.stderr or done.stdout).strip()[-300:]
        return VerifyOutcome(**base, accepted=None, error=f"exit {done.returncode}, no verdict JSON: {tail}", wall_s=wall)
    if payload.get("errored"):  # a stage's model calls gave no usable reply: no verdict, not a rejection
        return VerifyOutcome(**base, accepted=None, stage=payload.get("stage"), wall_s=wall,
                             error=f"errored at {payload.get('stage')}: {'; '.join(map(str, payload.get('reasons') or []))}")
    if payload["accepted"] != (done.returncode == 0):
        return VerifyOutcome(**base, accepted=None, wall_s=wall,
                             error=f"accepted={payload['accepted']} but exit code {done.returncode}")
    reasons = payload.get("reasons") or []
    return VerifyOutcome(**base, accepted=payload["accepted"], stage=payload.get("stage"),
                         reasons=[str(r) for r in reasons] if isinstance(reasons, list) else [str(reasons)],
                         stages=stage_verdicts(payload.get("stages")), wall_s=wall)


def summarize_verify(outcomes: Sequence[VerifyOutcome]) -> dict[str, Any]:
    """Per class: templates, rejected, recall (flawed/gaming) or false rejections (good), by stage."""
    table: dict[str, Any] = {}
    by_class: dict[str, list[VerifyOutcome]] = defaultdict(list)
    for o in outcomes:
        by_class[o.klass].append(o)
    for klass, group in by_class.items():
        judged = [o for o in group if o.accepted is not None]
        rejected = [o for o in judged if not o.accepted]
        failed_stages: Counter[str] = Counter()
        for o in group:
            failed_stages.update(s for s, v in o.stages.items() if v.lower() not in ("passed", "ok", "skipped"))
        table[klass] = {
            "kind": group[0].kind,
            "templates": len(group),
            "errors": len(group) - len(judged),
            "rejected": len(rejected),
            "rate": len(rejected) / len(judged) if judged else None,  # recall, or false-rejection rate for good
            "rejected_by_stage": dict(Counter(o.stage or "?" for o in rejected)),
            "failed_stage_verdicts": dict(failed_stages),
            "missed": [o.file for o in judged if o.accepted and o.kind != "good"],
        }
    return table


def print_verify_table(table: dict[str, Any]) -> None:
    print("| class | kind | templates | rejected | recall / false-rejection rate | rejected by stage | errors |")
    print("|---|---|---|---|---|---|---|")
    order = ["good", *FLAW_CLASSES, *GAMING_CLASSES]
    for klass in sorted(table, key=lambda k: order.index(k) if k in order else len(order)):
        row = table[klass]
        rate = "n/a" if row["rate"] is None else f"{row['rate']:.2f}"
        stages = ", ".join(f"{s} {n}" for s, n in sorted(row["rejected_by_stage"].items())) or "-"
        print(f"| {klass} | {row['kind']} | {row['templates']} | {row['rejected']} | {rate} | {stages} | {row['errors']} |")
    for kind in ("flawed", "gaming"):
        rows = [r for r in table.values() if r["kind"] == kind]
        judged = sum(r["templates"] - r["errors"] for r in rows)
        if judged:
            print(f"{kind}: recall {sum(r['rejected'] for r in rows) / judged:.2f} over {judged} templates")


def run_verify(entries: Sequence[CorpusEntry], *, with_models: bool, timeout: float) -> dict[str, Any]:
    require_verify_command()
    outcomes = []
    for entry in entries:
        outcome = verify_entry(entry, with_models=with_models, timeout=timeout)
        verdict = "error" if outcome.accepted is None else ("accepted" if outcome.accepted else f"rejected ({outcome.stage})")
        print(f"{entry.file}: {verdict} in {outcome.wall_s:.1f} s" + (f": {outcome.error}" if outcome.error else ""),
              file=sys.stderr)
        outcomes.append(outcome)
    table = summarize_verify(outcomes)
    print_verify_table(table)
    return {"mode": "verify", "with_models": with_models, "classes": table,
            "templates": [o.model_dump() for o in outcomes]}


# --- --check-corpus: what exists without the new checks ---------------------------------------------


class RunCheck(BaseModel):
    file: str
    status: str
    items: int
    error: str | None = None


def check_template_run(entry: CorpusEntry, *, samples: int, timeout: float) -> RunCheck:
    command = [*itemsmith_command(), "check-template", str(entry.path), "--handler", entry.handler,
               "--samples", str(samples), "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return RunCheck(file=entry.file, status="timeout", items=0, error=f"timed out after {timeout:.0f} s")
    payload = last_json_object(done.stdout)
    if payload is None:
        return RunCheck(file=entry.file, status="no-json", items=0, error=(done.stderr or done.stdout)[-300:])
    return RunCheck(file=entry.file, status=str(payload.get("status")), items=len(payload.get("items") or []),
                    error=payload.get("error"))


def sample_items(entry: CorpusEntry, seeds: Sequence[int], samples: int, pools: dict[str, Any],
                 source: str | None = None) -> list[Item]:
    """Items of `entry` (or of `source` on its handler) on each seed, run in the sandbox (one warm pool
    per handler)."""
    from itemsmith.sandbox import SandboxPool

    pool = pools.get(entry.handler) or pools.setdefault(entry.handler, SandboxPool(entry.handler))
    source = entry.path.read_text() if source is None else source
    items: list[Item] = []
    for seed in seeds:
        result = pool.run(source, num_samples=samples, seed=seed)
        if result.status.value != "ok":
            raise RuntimeError(f"{entry.file} (seed {seed}): {result.status.value}: {result.error}")
        items.extend(result.items)
    return items


def item_identity(item: Item) -> str:
    """What an item is about (records, where and how long its first series is), not what it keys."""
    first = item["series"][0] if item["series"] else {}
    stamps = first.get("timestamps") or [""]
    return json.dumps([item.get("metadata", {}).get("record_ids"), stamps[0], len(first.get("values", []))])


def item_content(item: Item) -> str:
    """Everything a solver sees plus the key."""
    return json.dumps([item["question"], item.get("context"), item["options"][item["answer_index"]],
                       [(s["name"], s.get("unit"), s["values"]) for s in item["series"]]])


class Realization(BaseModel):
    """How often a flaw shows: items of the flawed template that differ from its fixed twin's item about
    the same data on the same seed (a twin's run can drift from the flawed one where a changed key makes
    one of them skip a draw, so items are matched by what they are about, not by position)."""

    num_samples: int
    matched: int
    differ: int

    @property
    def share(self) -> float | None:
        return self.differ / self.matched if self.matched else None


def realization(entry: CorpusEntry, seeds: Sequence[int], num_samples: int, pools: dict[str, Any]) -> Realization:
    matched = differ = 0
    for seed in seeds:
        flawed = sample_items(entry, [seed], num_samples, pools)
        fixed = sample_items(entry, [seed], num_samples, pools, source=entry.fixed_source())
        twins: dict[str, Item] = {}
        for item in fixed:
            twins.setdefault(item_identity(item), item)
        for item in flawed:
            twin = twins.get(item_identity(item))
            if twin is not None:
                matched += 1
                differ += item_content(item) != item_content(twin)
    return Realization(num_samples=num_samples, matched=matched, differ=differ)


def fresh_seeds(count: int, salt: int) -> list[int]:
    base = int(time.time_ns() // 1000) % 1_000_000_007
    return [(base + 7919 * (i + 1) + 104729 * salt) % 2**31 for i in range(count)]


def run_check_corpus(entries: Sequence[CorpusEntry], *, samples: int, train_seeds: int, test_seeds: int,
                     timeout: float, check_runs: bool = True) -> dict[str, Any]:
    runs = []
    for entry in entries if check_runs else []:
        check = check_template_run(entry, samples=5, timeout=timeout)
        runs.append(check)
        print(f"check-template {entry.file}: {check.status}, {check.items} items"
              + (f": {check.error}" if check.error else ""), file=sys.stderr)
    ok = [r for r in runs if r.status == "ok" and r.items > 0]
    if check_runs:
        print(f"check-template: {len(ok)} of {len(runs)} templates run and yield items")
    for r in runs:
        if r not in ok:
            print(f"  FAILED {r.file}: {r.status} {r.error}")

    pools: dict[str, Any] = {}
    sampled: dict[str, tuple[list[Item], list[Item]]] = {}
    realized: dict[str, list[Realization]] = {}
    wanted = [e for e in entries if e.kind in ("gaming", "good")]
    try:
        for n, entry in enumerate(wanted):
            train = sample_items(entry, fresh_seeds(train_seeds, 2 * n), samples, pools)
            test = sample_items(entry, fresh_seeds(test_seeds, 2 * n + 1), samples, pools)
            sampled[entry.file] = (train, test)
        for n, entry in enumerate(e for e in entries if e.fix):
            seeds = fresh_seeds(test_seeds, 1000 + n)
            realized[entry.file] = [realization(entry, seeds, size, pools) for size in REALIZATION_SIZES]
    finally:
        for pool in pools.values():
            pool.close()

    if realized:
        sizes = " | ".join(f"n={size}: differ / matched" for size in REALIZATION_SIZES)
        print(f"\n| flawed template (vs its fixed twin, same seeds) | class | {sizes} |")
        print("|---|---|" + "---|" * len(REALIZATION_SIZES))
        for entry in (e for e in entries if e.file in realized):
            cells = " | ".join(f"{r.differ}/{r.matched}" + (f" ({r.share:.0%})" if r.share is not None else "")
                               for r in realized[entry.file])
            print(f"| {entry.file} | {entry.klass} | {cells} |")

    gaming_scores = []
    print("\n| gaming template | class | blind rule | answered | accuracy (abstain = guess) | chance |")
    print("|---|---|---|---|---|---|")
    for entry in (e for e in entries if e.kind == "gaming"):
        assert entry.blind_rule is not None
        train, test = sampled[entry.file]
        score = score_rule(entry.blind_rule, train, test)
        gaming_scores.append({"file": entry.file, "class": entry.klass, **score.model_dump()})
        print(f"| {entry.file} | {entry.klass} | {entry.blind_rule} | {score.answered}/{score.items} "
              f"| {score.expected_accuracy:.2f} | {score.chance:.2f} |")

    controls = []
    good = [e for e in entries if e.kind == "good"]
    print("\n| blind rule on the good templates (control) | answered | accuracy (abstain = guess) | chance |")
    print("|---|---|---|---|")
    for rule in BLIND_RULES:
        scores = [score_rule(rule, *sampled[e.file]) for e in good]
        items = sum(s.items for s in scores)
        if not items:
            continue
        pooled = RuleScore(rule=rule, items=items, answered=sum(s.answered for s in scores),
                           correct=sum(s.correct for s in scores),
                           expected_accuracy=sum(s.expected_accuracy * s.items for s in scores) / items,
                           chance=sum(s.chance * s.items for s in scores) / items)
        controls.append(pooled.model_dump())
        print(f"| {rule} | {pooled.answered}/{pooled.items} | {pooled.expected_accuracy:.2f} | {pooled.chance:.2f} |")
    priors = []
    print("\n| good template: keys of other records (key_prior, never the item's own) | answered | accuracy "
          "(abstain = guess) | chance |")
    print("|---|---|---|---|")
    for entry in good:
        score = score_rule("key_prior", *sampled[entry.file])
        priors.append({"file": entry.file, **score.model_dump()})
        print(f"| {entry.file} | {score.answered}/{score.items} | {score.expected_accuracy:.2f} | {score.chance:.2f} |")
    return {"mode": "check-corpus", "runs": [r.model_dump() for r in runs], "key_prior": priors,
            "gaming": gaming_scores, "good_controls": controls,
            "flaw_realization": {f: [{**r.model_dump(), "share": r.share} for r in rs] for f, rs in realized.items()},
            "samples_per_seed": samples, "train_seeds": train_seeds, "test_seeds": test_seeds}


# --- entry point -----------------------------------------------------------------------------------


def select(entries: Sequence[CorpusEntry], only: Sequence[str]) -> list[CorpusEntry]:
    """Entries whose class or kind is in `only` (all when empty); an unknown name is an error."""
    if not only:
        return list(entries)
    known = {e.klass for e in entries} | {e.kind for e in entries}
    unknown = sorted(set(only) - known)
    if unknown:
        sys.exit(f"--only: unknown class or kind {unknown}; known: {sorted(known)}")
    return [e for e in entries if e.klass in only or e.kind in only]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="CLASS",
                        help="only this class or kind (good/flawed/gaming); repeatable")
    parser.add_argument("--with-models", action="store_true",
                        help="run verify with its judges and students (drops --no-judges --no-students)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per command (default 600)")
    parser.add_argument("--json-out", type=Path, help="write the table and every outcome to this JSON file")
    parser.add_argument("--check-corpus", action="store_true",
                        help="check the corpus with what exists: check-template runs and blind-rule accuracies")
    parser.add_argument("--samples", type=int, default=30, help="--check-corpus: items per seed (default 30)")
    parser.add_argument("--train-seeds", type=int, default=3, help="--check-corpus: seeds a rule may learn from")
    parser.add_argument("--test-seeds", type=int, default=2, help="--check-corpus: seeds a rule is scored on")
    parser.add_argument("--skip-check-template", action="store_true",
                        help="--check-corpus: skip the check-template runs (sandbox sampling only)")
    args = parser.parse_args(argv)
    entries = select(load_manifest(), args.only)
    if args.check_corpus:
        result = run_check_corpus(entries, samples=args.samples, train_seeds=args.train_seeds,
                                  test_seeds=args.test_seeds, timeout=args.timeout,
                                  check_runs=not args.skip_check_template)
    else:
        result = run_verify(entries, with_models=args.with_models, timeout=args.timeout)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(result, indent=1, default=str) + "\n")
        print(f"wrote {args.json_out}", file=sys.stderr)


if __name__ == "__main__":
    main()
