"""The whole curated bank through the sandbox: every template ok on several seeds, every item
valid, answer positions uniform over the set, no question text shared by two templates."""

from collections import Counter, defaultdict

import pytest
from scipy.stats import binomtest, chisquare

from itemsmith.items.schema import Item, ItemKind, RunStatus
from itemsmith.sandbox import run_template
from itemsmith.templates_bank.curated import load_curated

SEEDS = (0, 1, 2)
SAMPLES = 5
TEMPLATES = load_curated()


@pytest.fixture(scope="module")
def bank_items() -> dict[str, list[Item]]:
    items: dict[str, list[Item]] = {}
    failures = []
    for template in TEMPLATES.values():
        items[template.id] = []
        for seed in SEEDS:
            result = run_template(template.source, template.handler, num_samples=SAMPLES, seed=seed)
            if result.status is not RunStatus.ok:
                failures.append(f"{template.id} seed {seed}: {result.status.value}: {result.error}")
                continue
            items[template.id] += [Item.model_validate(raw) for raw in result.items]
    assert not failures, "\n".join(failures)
    return items


def test_bank_has_at_least_sixty_templates_covering_every_category():
    assert len(TEMPLATES) >= 60
    categories = Counter(t.category for t in TEMPLATES.values())
    for category in ("pattern_recognition", "noise_understanding", "similarity_analysis", "anomaly_detection",
                     "causality", "transformation", "temporal_relation"):
        assert categories[category] >= 2, categories


def test_every_template_has_its_metadata():
    for template in TEMPLATES.values():
        assert template.title and template.rationale and template.concepts and template.difficulty, template.id


def test_every_template_yields_the_requested_valid_items(bank_items):
    for template_id, items in bank_items.items():
        assert len(items) == SAMPLES * len(SEEDS), template_id
        assert all(item.rationale for item in items), f"{template_id}: an item has no rationale"


def test_answer_positions_are_uniform_over_the_bank(bank_items):
    by_option_count: dict[int, Counter] = defaultdict(Counter)
    for items in bank_items.values():
        for item in items:
            if item.kind is not ItemKind.tf:
                by_option_count[len(item.options)][item.answer_index] += 1
    tested = 0
    for n_options, counts in by_option_count.items():
        total = sum(counts.values())
        if total < 20 * n_options:
            continue
        observed = [counts[i] for i in range(n_options)]
        assert chisquare(observed).pvalue > 0.001, (n_options, observed)
        tested += total
    assert tested > 500


def test_true_false_answers_are_balanced(bank_items):
    answers = [item.answer_index for items in bank_items.values() for item in items if item.kind is ItemKind.tf]
    assert len(answers) > 50
    assert binomtest(sum(answers), len(answers), 0.5).pvalue > 0.001


def test_no_two_templates_share_a_question_text(bank_items):
    owner: dict[str, str] = {}
    for template_id, items in bank_items.items():
        for question in {item.question for item in items}:
            assert owner.setdefault(question, template_id) == template_id, (
                f"{template_id} and {owner[question]} both ask: {question[:80]}"
            )
