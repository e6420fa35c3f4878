"""The planner: N distinct template briefs that cover the task broadly.

Each slot is handed a category in coverage order (arithmetic, temporal relation, anomaly, pattern,
...), so N briefs span N kinds of reasoning before one repeats; the model fills in the concept,
the question and how the answer is computed, from the task, the handler's description, its
columns and a peek at its series, plus the context the question gives its reader (what a record
is, the unit, in the description's words; the description's first sentence when the model gives
none). Replies are parsed leniently (any JSON objects in the text), validated, checked (does
`answer_from` compute what the question asks, from data the handler has: `agents.authoring.brief_check`),
and de-duplicated. A brief's category is what the blocks its `answer_from` names compute, whatever
its label says, and a slot asked for a category gets a brief of it: a brief of a category the plan
does not need again is set aside. A short plan gets one follow-up naming each rejected object's
problem and the categories still needed; what is still missing is filled with deterministic
fallback briefs built from the data's real columns (counted in the report), or the planner raises
`PlanningError` when fallbacks are off.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from itemsmith.agents.authoring.brief_check import brief_problems
from itemsmith.agents.authoring.models import Brief, PlanInfo
from itemsmith.agents.authoring.prompts import (
    PLANNER_SYSTEM,
    describe_profile,
    numeric_channel,
    planner_example,
    planner_retry,
    planner_task,
)
from itemsmith.agents.authoring.taxonomy import CATEGORIES, CATEGORY_HINTS, coverage_plan, task_concepts
from itemsmith.agents.authoring.template_kind import blocks_kind, named_blocks
from itemsmith.agents.errors import EmptyReplyError, PlanningError, ProviderCallError
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy, complete, reply_text
from itemsmith.agents.llm.usage import UsageLedger
from itemsmith.agents.profile import ColumnInfo, HandlerProfile
from itemsmith.items.reasoning_blocks import uses_for


def json_objects(text: str) -> list[dict[str, object]]:
    """Every JSON object in a text (inside arrays, fences or prose), outermost first."""
    decoder = json.JSONDecoder()
    found: list[dict[str, object]] = []
    position = 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end
    return found


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _clean_title(title: str, question: str) -> str:
    """Small models copy category names and descriptions into titles: strip them, or use the question."""
    head, sep, rest = title.partition(":")
    if sep and _normal(head).replace(" ", "_") in set(CATEGORIES):
        title = rest.strip()
    if not title or any(_normal(title) == _normal(hint) or _normal(hint).startswith(_normal(title))
                        for hint in CATEGORY_HINTS.values()):
        title = re.sub(r"\s+", " ", question).strip().rstrip("?")[:80]
    return title


def parse_briefs(text: str, profile: HandlerProfile, categories: Sequence[str]) -> tuple[list[Brief], list[str]]:
    """Valid briefs in a reply, and one error line per invalid object (a field, or an `answer_from`
    that does not compute what the brief asks)."""
    known = set(profile.record_columns) | set(profile.channels)
    briefs: list[Brief] = []
    errors: list[str] = []
    objects = json_objects(text)
    if not objects:
        errors.append("the reply held no JSON objects")
    for index, raw in enumerate(objects):
        raw = dict(raw)
        category = str(raw.get("category", "")).strip().lower().replace(" ", "_")
        computed, _ = blocks_kind(named_blocks(str(raw.get("answer_from", ""))))
        if computed is not None:  # what the blocks it names compute, whatever the label says
            raw["category"] = computed
        elif category not in CATEGORIES:  # a near miss ("temp_relation") or none: the closest, else the slot's
            close = difflib.get_close_matches(category, CATEGORIES, n=1, cutoff=0.6)
            raw["category"] = close[0] if close else categories[min(index, len(categories) - 1)]
        raw.pop("origin", None)
        raw["title"] = _clean_title(str(raw.get("title", "")), str(raw.get("question", "")))
        try:
            brief = Brief.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            errors.append(f"object {index + 1}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
            continue
        brief = brief.model_copy(update={"columns": [c for c in brief.columns if c in known],
                                         "context": brief.context or profile.context})
        problems = brief_problems(brief, profile)
        if problems:
            errors.append(f"object {index + 1} ({brief.title!r}): {'; '.join(problems)}")
            continue
        briefs.append(brief)
    return briefs, errors


def _dedupe(briefs: Sequence[Brief], taken: Sequence[Brief] = (), banned: Sequence[str] = ()) -> list[Brief]:
    """Briefs whose title and question are new (not in `taken`, not one of the `banned` texts)."""
    seen = {_normal(b.title) for b in taken} | {_normal(b.question) for b in taken} | {_normal(t) for t in banned}
    kept: list[Brief] = []
    for brief in briefs:
        keys = {_normal(brief.title), _normal(brief.question)}
        if keys & seen:
            continue
        seen |= keys
        kept.append(brief)
    return kept


def _numeric(columns: Sequence[ColumnInfo]) -> list[str]:
    return [c.name for c in columns if c.min is not None and c.name != "record_id"]


def _reasoning_brief(profile: HandlerProfile, category: str, turn: int, channel: str, second: str | None,
                     concepts: set[str]) -> Brief | None:
    """The `turn`-th reasoning block of a category (cycling; those of the task's `concepts` first) as a
    brief on `channel` (and `second`)."""
    uses = sorted(uses_for(category, pairs=second is not None), key=lambda use: use.concept not in concepts)
    if not uses:
        return None
    use = uses[turn % len(uses)]
    call = use.written(second)
    needed = [channel, second] if use.pair and second else [channel]
    words = {"channel": channel, "second": second or channel}
    return Brief(title=use.title.format(**words), category=category, concept=use.concept, kind="mc",
                 question=use.question.format(**words),
                 answer_from=f"{call} of {channel} over a random window (take_window): {use.asks}",
                 context=profile.context, columns=needed, origin="fallback")


def fallback_briefs(profile: HandlerProfile, categories: Sequence[str], task: str = "") -> list[Brief]:
    """Deterministic briefs from the data's real columns, one per category; where a reasoning block
    answers the category, the brief names its call (a category that comes again, its next block; the
    blocks of the concepts the task names first),
    else where a statistics block does, that one with literal arguments (a count's threshold drawn for
    each item, `t`), so its slot starts from a skeleton that computes it."""
    columns = profile.series[0].columns if profile.series else []
    # a channel whose least value is 0 first (rain) keys many items alike: it comes last
    channels = sorted(_numeric(columns), key=lambda name: any(c.name == name and c.min == 0 for c in columns))
    # the channels the task names ("how temperature and wind correlate") before the others
    channels.sort(key=lambda name: not re.search(rf"\b{re.escape(name.replace('_', ' '))}\b", task.lower()))
    channel = channels[0] if channels else (profile.channels[0] if profile.channels else "value")
    second = channels[1] if len(channels) > 1 else channel
    labels = [c.name for c in profile.columns if c.name != "record_id" and c.values]
    label = labels[0] if labels else None
    ideas: dict[str, tuple[str, str, str, str, list[str]]] = {
        "arithmetic": ("mc", f"Mean {channel} over a window", f"What is the mean {channel} in the window of "
                       "<record> shown?", f"channel_stat(win, 'mean') of {channel} over a random window (take_window)",
                       [channel]),
        "temporal_relation": ("mc", f"Change of {channel} over a week", f"By how much did {channel} change from the "
                              "first date of the window of <record> shown to a week later?",
                              f"change_between(win, 0, 7) of {channel} over a random window (take_window)",
                              [channel]),
        "anomaly_detection": ("mc", f"Days of {channel} above a threshold", f"How many values of {channel} are above "
                              "the threshold in the window of <record> shown?",
                              f"count_beyond(win, above=t) of {channel} over a random window (take_window), "
                              "t drawn for each item from the record's values", [channel]),
        "pattern_recognition": ("mc", f"Change of {channel} over a window", f"By how much did {channel} change from "
                                "the first to the last date of the window of <record> shown?",
                                f"change_between(win, 0, -1) of {channel} over a random window (take_window)",
                                [channel]),
        "retrieval": ("mc", f"Value of {channel} at a given time", f"What was {channel} at <time> in <record>?",
                      f"series(<record>)['{channel}'] at a random index position", [channel]),
        "domain_reasoning": ("mc", f"Label {label or 'class'} of a record" if label else f"Mean {channel} band",
                             f"Which {label} does <record> have?" if label else f"In which band is the mean {channel}?",
                             f"records() column {label}" if label else f"mean of {channel}, binned",
                             [label] if label else [channel]),
        "similarity_analysis": ("mc", f"Record with the highest mean {channel}", f"Which of these records has the "
                                f"highest mean {channel}?", f"mean of {channel} for 3-4 records drawn with rng",
                                [channel]),
        "noise_understanding": ("mc", f"Spread of {channel} in a window", f"What is the standard deviation of "
                                f"{channel} in the window of <record> shown?",
                                f"channel_stat(win, 'std') of {channel} over a random window (take_window)",
                                [channel]),
        "causality": ("tf", f"{channel} and {second} move together", f"True or false: {channel} and {second} are "
                      "positively correlated in <record>.", f"sign of the correlation of {channel} and {second}",
                      [channel, second]),
        "transformation": ("mc", f"First difference of {channel}", f"Which series is the day-to-day change of "
                           f"{channel} in <record>?", f"np.diff of {channel}; distractors are other records' diffs",
                           [channel]),
    }
    briefs = []
    turns: dict[str, int] = {}
    concepts = task_concepts(task)
    for category in categories:
        turn = turns[category] = turns.get(category, -1) + 1
        reasoning = _reasoning_brief(profile, category, turn, channel, second if second != channel else None,
                                     concepts)
        if reasoning is not None:
            briefs.append(reasoning)
            continue
        kind, title, question, answer_from, needed = ideas[category]
        briefs.append(Brief(title=title, category=category, kind=kind, question=question, answer_from=answer_from,
                            context=profile.context, columns=[c for c in needed if c], origin="fallback"))
    return briefs


def _on_plan(briefs: Sequence[Brief], categories: Sequence[str], taken: Sequence[Brief]) -> tuple[list[Brief], list[Brief]]:
    """The briefs whose category the plan still needs once `taken` hold theirs (in order, one per
    category the plan lists), and the rest: a slot asked for a category gets a brief of it."""
    needed = Counter(_uncovered(categories, taken))
    kept: list[Brief] = []
    off: list[Brief] = []
    for brief in briefs:
        if needed[brief.category] > 0:
            needed[brief.category] -= 1
            kept.append(brief)
        else:
            off.append(brief)
    return kept, off


def _uncovered(categories: Sequence[str], briefs: Sequence[Brief]) -> list[str]:
    """The categories of the plan that no brief took (in the plan's order, each brief taking one of its
    own category): a planner that skipped a category leaves that one, not the plan's last."""
    taken = Counter(brief.category for brief in briefs)
    missing = []
    for category in categories:
        if taken[category] > 0:
            taken[category] -= 1
        else:
            missing.append(category)
    return missing


async def plan_briefs(handle: ModelHandle, *, profile: HandlerProfile, task: str, n: int, retry: RetryPolicy,
                      ledger: UsageLedger | None = None, follow_ups: int = 1,
                      allow_fallback: bool = True) -> tuple[list[Brief], PlanInfo]:
    """N briefs for the task; see the module docstring."""
    if n < 1:
        raise PlanningError("plan at least one template")
    categories = coverage_plan(n, multichannel=len(profile.channels) >= 2, task=task)
    messages: list[BaseMessage] = [
        SystemMessage(PLANNER_SYSTEM),
        HumanMessage(planner_task(profile_text=describe_profile(profile), task=task, categories=categories,
                                  profile=profile)),
    ]
    example = planner_example(numeric_channel(profile), profile.context)
    banned = [str(example["title"]), str(example["question"])]  # small models copy the example
    local = UsageLedger()
    briefs: list[Brief] = []
    errors: list[str] = []
    for attempt in range(follow_ups + 1):
        try:
            reply, _ = await complete(handle, messages, retry=retry, ledger=local, role="planner")
        except (ProviderCallError, EmptyReplyError) as exc:
            errors.append(str(exc))
            if isinstance(exc, ProviderCallError) and not exc.transient:
                raise
            break
        text = reply_text(reply)
        found, problems = parse_briefs(text, profile, _uncovered(categories, briefs) or categories)
        errors += problems
        fresh = _dedupe(found, briefs, banned)
        if len(fresh) < len(found):
            problems = [*problems, f"{len(found) - len(fresh)} object(s) repeated another one or the example"]
            errors.append(problems[-1])
        fresh, off = _on_plan(fresh, categories, briefs)
        if off:
            problems = [*problems, f"{len(off)} object(s) of a category the plan does not need again "
                                   f"({', '.join(sorted({b.category for b in off}))})"]
            errors.append(problems[-1])
        briefs += fresh
        if len(briefs) >= n or attempt == follow_ups:
            break
        missing = _uncovered(categories, briefs)
        messages += [AIMessage(text), HumanMessage(planner_retry(problems or ["duplicates"], missing))]
    if ledger is not None:
        for call in local.calls:
            ledger.record(call)
    briefs = briefs[:n]
    from_planner = len(briefs)
    if len(briefs) < n:
        if not allow_fallback:
            raise PlanningError(f"the planner gave {len(briefs)} usable brief(s) of {n}: {'; '.join(errors[:3])}")
        missing = _uncovered(categories, briefs)[:n - len(briefs)]
        extra = fallback_briefs(profile, missing, task)
        fresh = _dedupe(extra, briefs)
        briefs += fresh
        for number, brief in enumerate((b for b in extra if b not in fresh), start=2):
            briefs.append(brief.model_copy(update={"title": f"{brief.title} ({number})"}))
        briefs = briefs[:n]
    info = PlanInfo(requested=n, from_planner=from_planner, fallback=len(briefs) - from_planner,
                    usage=local.totals(), errors=errors[:20])
    return briefs, info

