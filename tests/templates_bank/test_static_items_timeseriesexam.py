"""The public TimeSeriesExam files (data/timeseriesexam: every round published with a
``qa_dataset.json``) import as they are: options mixing text and numbers, a ``tid`` reused across
categories. The counts and the audit's findings (duplicate questions per category, key balance)
are recomputed here from the raw JSON, independently of the importer and the audit."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.items.static import parse_static_source
from itemsmith.templates_bank.static_items import read_groups
from itemsmith.templates_bank.storage import get_bank, list_versions, open_session
from itemsmith.verification.audit.static import StaticGroup, audit_static

DATA = Path(__file__).parent / "data" / "timeseriesexam"
# round -> (rows, groups (category, tid), distinct tids): what the published files hold
PUBLISHED = {1: (763, 108, 105), 2: (763, 108, 105), 3: (763, 110, 105)}


def unpacked(round_: int, tmp_path: Path) -> Path:
    target = tmp_path / "qa_dataset.json"
    target.write_bytes(gzip.decompress((DATA / f"round_{round_}_qa_dataset.json.gz").read_bytes()))
    return target


def shown(option: Any) -> str:
    return option if isinstance(option, str) else repr(option)


def series(row: dict[str, Any]) -> list[list[float]]:
    return [row["ts"]] if "ts" in row else [row["ts1"], row["ts2"]]


def by_group(rows: list[dict[str, Any]]) -> dict[tuple[str, Any], list[dict[str, Any]]]:
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["category"], row["tid"]), []).append(row)
    return groups


def duplicates_per_category(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Items repeating an earlier item exactly (question, options in any order, series): groups in file order."""
    seen: set[str] = set()
    repeats: Counter[str] = Counter()
    for (category, _), members in by_group(rows).items():
        keys = [json.dumps([r["question"], sorted(shown(o) for o in r["options"]), series(r)]) for r in members]
        repeats[category] += sum(1 for k in keys if k in seen) + len(keys) - len(set(keys))
        seen.update(keys)
    return dict(repeats)


def key_position(row: dict[str, Any]) -> int:
    options = [shown(o) for o in row["options"]]
    answer = shown(row["answer"])
    return next(i for i, o in enumerate(options) if o.strip() == answer.strip())


def position_prior(rows: list[dict[str, Any]], pick: str) -> tuple[int, int, float]:
    """(right, answered, chance expected): each item answered by the position keyed most (least)
    often among the other items of its group with as many options; ties by the item's text."""
    right = answered = 0
    expected = 0.0
    for members in by_group(rows).values():
        by_count: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in members:
            by_count[len(row["options"])].append(row)
        for k, same in by_count.items():
            if len(same) < 2:
                continue
            keys = [key_position(r) for r in same]
            for i, row in enumerate(same):
                counts = Counter(keys[:i] + keys[i + 1:])
                tally = [counts.get(p, 0) for p in range(k)]
                target = max(tally) if pick == "most" else min(tally)
                options = [shown(o) for o in row["options"]]
                tied = sorted((p for p in range(k) if tally[p] == target), key=options.__getitem__)
                digest = hashlib.sha1((row["question"] + "\x00" + "\x00".join(sorted(options))).encode()).digest()
                chosen = tied[int.from_bytes(digest[:4], "big") % len(tied)]
                right += chosen == keys[i]
            answered += len(same)
            expected += len(same) / k
    return right, answered, expected


@pytest.mark.parametrize("round_", sorted(PUBLISHED))
def test_each_published_round_reads_whole_with_its_audit_findings(round_: int, tmp_path: Path) -> None:
    source = unpacked(round_, tmp_path)
    raw = json.loads(source.read_text())
    rows, groups = read_groups(str(source), "tse", {})
    expected_rows, expected_groups, tids = PUBLISHED[round_]
    assert (rows, len(groups), len({r["tid"] for r in raw})) == (expected_rows, expected_groups, tids)
    assert (len(raw), len(by_group(raw))) == (rows, len(groups))
    assert sum(1 for r in raw for o in r["options"] if not isinstance(o, str)) > 200  # numbers among the options
    items = {item.metadata["source_row"]: item for g in groups for item in g.item_models()}
    for number, row in enumerate(raw, start=1):
        assert items[number].options == [shown(o) for o in row["options"]]
        assert items[number].answer_index == key_position(row)
    audit = audit_static([StaticGroup(g.group, g.category, g.item_models()) for g in groups])
    categories = {c.scope: c for c in audit.categories}
    duplicates = duplicates_per_category(raw)
    assert {scope: c.duplicates for scope, c in categories.items()} == duplicates
    assert audit.overall.duplicates == sum(duplicates.values()) > 0
    for pick, solver in (("most", "position"), ("least", "least_keyed")):
        for scope, pooled in [*categories.items(), ("all", audit.overall)]:
            chosen = raw if scope == "all" else [r for r in raw if r["category"] == scope]
            right, answered, expected = position_prior(chosen, pick)
            result = next(s for s in pooled.solvers if s.solver == solver)
            assert (result.correct, result.applicable) == (right, answered), (scope, solver)
            assert result.chance == pytest.approx(expected / answered)
            assert not result.shortcut  # the keys carry no position cue in any category


def test_round_3_imports_with_the_cli_as_published(bank_url: str, tmp_path: Path) -> None:
    source = unpacked(3, tmp_path)
    raw = json.loads(source.read_text())
    done = CliRunner().invoke(app, ["bank", "import-items", "tse", str(source), "--format", "tse", "--db", bank_url])
    assert done.exit_code == 0, done.output
    assert "763 items in 110 groups" in done.output and "110 new versions" in done.output
    reused = {tid for tid, n in Counter(t for _, t in by_group(raw)).items() if n > 1}
    assert 50 in reused
    with open_session(bank_url) as session:
        versions = {v.template_key: v for v in list_versions(session, get_bank(session, "tse").id)}
    assert len(versions) == 110
    fifty = sorted(k for k in versions if k.endswith("-50"))
    assert fifty == ["tse-noise-understanding-50", "tse-pattern-recognition-50"]
    mixed = next(i for i, r in enumerate(raw, start=1)
                 if {type(o) for o in r["options"]} == {str, float} and not isinstance(r["answer"], str))
    row = raw[mixed - 1]
    stored = [item for v in versions.values() for item in parse_static_source(v.source)
              if item.metadata["source_row"] == mixed]
    assert len(stored) == 1
    assert stored[0].options == [shown(o) for o in row["options"]]
    assert stored[0].answer == repr(row["answer"])
