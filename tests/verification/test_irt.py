"""Template-level 2PL: recovery on simulated data, comparison with girth, SEs, flags, input checks.

The full recovery grid (50/200/1000 templates x 5/10/20 students x 5 instances) with timings
is `benchmarks/irt_vs_girth.py`; here a smaller grid with thresholds well below what it shows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemsmith.items.schema import IRTParameters
from itemsmith.verification.irt import IRTConfig, calibrate, estimate_ability, fit_2pl, to_parameters


def simulate(a: np.ndarray, b: np.ndarray, students: int, instances: int, seed: int):
    """Responses frame, true abilities and the students x templates x instances array."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, students)
    p = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    correct = rng.random((students, a.size, instances)) < p[:, :, None]
    s, t, r = np.meshgrid(np.arange(students), np.arange(a.size), np.arange(instances), indexing="ij")
    frame = pd.DataFrame({"template_id": [f"t{j:04d}" for j in t.ravel()], "student": [f"s{i:02d}" for i in s.ravel()],
                          "instance": r.ravel(), "correct": correct.ravel().astype(int)})
    return frame, theta, correct


def true_parameters(templates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.lognormal(0.0, 0.4, templates), rng.normal(0.0, 1.0, templates)


def corr(x, y) -> float:
    return float(np.corrcoef(np.asarray(x, dtype=float), np.asarray(y, dtype=float))[0, 1])


@pytest.mark.parametrize(("templates", "students", "min_r_a", "min_r_b"), [
    (50, 5, 0.2, 0.8),
    (200, 10, 0.4, 0.85),
    (1000, 20, 0.6, 0.9),
])
def test_recovers_simulated_parameters(templates, students, min_r_a, min_r_b):
    a, b = true_parameters(templates, seed=templates + students)
    frame, theta, _ = simulate(a, b, students, instances=5, seed=1)
    fit = fit_2pl(frame)
    table = fit.templates.sort_index()
    assert fit.converged
    assert list(table.columns[:4]) == ["discrimination", "difficulty", "discrimination_se", "difficulty_se"]
    assert table.index.name == "template_id" and len(table) == templates
    assert corr(table["discrimination"], a) >= min_r_a
    assert corr(table["difficulty"], b) >= min_r_b
    abilities = fit.abilities.sort_index()
    assert corr(abilities["ability"], theta) >= 0.95
    assert (abilities["ability_se"] > 0).all() and (table["difficulty_se"] > 0).all()


def test_standard_errors_cover_the_true_values():
    a, b = true_parameters(300, seed=5)
    frame, _, _ = simulate(a, b, students=10, instances=5, seed=6)
    table = calibrate(frame).sort_index()
    cover_b = np.mean(np.abs(table["difficulty"] - b) < 1.96 * table["difficulty_se"])
    cover_a = np.mean(np.abs(table["discrimination"] - a) < 1.96 * table["discrimination_se"])
    assert 0.85 <= cover_b <= 1.0
    assert 0.85 <= cover_a <= 1.0


def test_ability_standard_error_shrinks_with_more_templates():
    a, b = true_parameters(400, seed=2)
    frame, _, _ = simulate(a, b, students=8, instances=5, seed=3)
    few = fit_2pl(frame[frame["template_id"] < "t0040"]).abilities["ability_se"]
    many = fit_2pl(frame).abilities["ability_se"]
    assert (many < few).all()


def _girth_recovery(correct: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """girth 2PL on each instance as an item; a template's estimate is the mean over its instances."""
    girth = pytest.importorskip("girth")
    students, templates, instances = correct.shape
    items = correct.transpose(1, 2, 0).reshape(templates * instances, students).astype(int)
    result = girth.twopl_mml(items)
    a_hat = np.asarray(result["Discrimination"], dtype=float).reshape(templates, instances).mean(axis=1)
    b_hat = np.asarray(result["Difficulty"], dtype=float).reshape(templates, instances).mean(axis=1)
    return corr(a_hat, a), corr(b_hat, b), float(np.sqrt(np.mean((b_hat - b) ** 2)))


@pytest.mark.parametrize(("templates", "students", "instances", "seeds"), [
    (60, 20, 1, (0, 1)),  # one instance: a template is exactly one girth item
    (20, 6, 4, (0,)),  # instances expanded to girth items
])
def test_at_least_as_accurate_as_girth(templates, students, instances, seeds):
    ours, theirs = [], []
    for seed in seeds:
        a, b = true_parameters(templates, seed=100 + seed)
        frame, _, correct = simulate(a, b, students, instances, seed=seed)
        table = calibrate(frame).sort_index()
        ours.append((corr(table["discrimination"], a), corr(table["difficulty"], b),
                     float(np.sqrt(np.mean((table["difficulty"].to_numpy() - b) ** 2)))))
        theirs.append(_girth_recovery(correct, a, b))
    ours_mean, theirs_mean = np.mean(ours, axis=0), np.mean(theirs, axis=0)
    assert ours_mean[0] >= theirs_mean[0] - 0.02  # discrimination correlation
    assert ours_mean[1] >= theirs_mean[1]  # difficulty correlation
    assert ours_mean[2] <= theirs_mean[2]  # difficulty RMSE


def test_instances_are_pooled_per_template_and_the_column_is_optional():
    a, b = true_parameters(30, seed=9)
    frame, _, _ = simulate(a, b, students=6, instances=3, seed=9)
    with_instance = calibrate(frame)
    without = calibrate(frame.drop(columns="instance"))
    pd.testing.assert_frame_equal(with_instance, without)
    assert (with_instance["n_responses"] == 18).all() and (with_instance["n_students"] == 6).all()


def test_missing_pairs_and_bool_answers_are_accepted():
    a, b = true_parameters(40, seed=4)
    frame, _, _ = simulate(a, b, students=6, instances=2, seed=4)
    frame = frame[~((frame["student"] == "s00") & (frame["template_id"] < "t0010"))]
    frame = frame.assign(correct=frame["correct"].astype(bool))
    fit = fit_2pl(frame)
    assert fit.converged and np.isfinite(fit.templates[["discrimination", "difficulty"]].to_numpy()).all()
    assert fit.templates.loc["t0000", "n_students"] == 5
    assert fit.abilities.loc["s00", "n_responses"] == 60


def test_two_students_and_a_handful_of_templates_still_give_finite_estimates():
    frame = pd.DataFrame({"template_id": ["t1", "t1", "t2", "t2", "t3", "t3"],
                          "student": ["weak", "strong"] * 3, "correct": [0, 1, 1, 1, 0, 0]})
    table = calibrate(frame)
    assert np.isfinite(table[["discrimination", "difficulty", "discrimination_se", "difficulty_se"]].to_numpy()).all()
    assert table.loc["t2", "flags"] == ["all_correct"]
    assert table.loc["t3", "flags"] == ["all_wrong"]
    assert table.loc["t2", "difficulty"] < table.loc["t1", "difficulty"] < table.loc["t3", "difficulty"]


def test_flags_mis_keyed_and_saturated_templates():
    a, b = true_parameters(120, seed=12)
    a[:6], b[:6] = -1.5, 0.0  # mis-keyed: abler students do worse
    frame, _, _ = simulate(a, b, students=20, instances=5, seed=13)
    frame.loc[frame["template_id"] == "t0100", "correct"] = 1
    frame.loc[frame["template_id"] == "t0101", "correct"] = 0
    table = calibrate(frame).sort_index()
    flags = table["flags"]
    assert all("negative_discrimination" in f for f in flags.iloc[:6])
    assert all("near_zero_discrimination" in f for f in flags.iloc[:6])
    assert (table["slope_z"].iloc[:6] < -1.645).all()
    assert "all_correct" in flags.loc["t0100"] and "all_wrong" in flags.loc["t0101"]
    assert np.isnan(table.loc["t0100", "slope_z"])
    flagged_by_mistake = sum(bool(set(f) & {"negative_discrimination", "near_zero_discrimination"})
                             for f in flags.iloc[6:100])
    assert flagged_by_mistake <= 3


def test_to_parameters_gives_the_schema_records():
    a, b = true_parameters(10, seed=1)
    frame, _, _ = simulate(a, b, students=5, instances=3, seed=1)
    records = to_parameters(calibrate(frame))
    assert set(records) == {f"t{j:04d}" for j in range(10)}
    assert all(isinstance(r, IRTParameters) and r.discrimination > 0 for r in records.values())


def test_config_is_strict():
    with pytest.raises(ValueError):
        IRTConfig(quadrature_pts=11)
    with pytest.raises(ValueError):
        IRTConfig(difficulty_sd=0)


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"template_id": ["t"], "correct": [1]}), "lack column"),
    (pd.DataFrame({"template_id": ["t"], "student": ["s"], "correct": [2]}), "0/1"),
    (pd.DataFrame({"template_id": ["t"], "student": ["s"], "correct": ["yes"]}), "0/1"),
    (pd.DataFrame({"template_id": ["t", "t"], "student": ["s", "s"], "instance": [0, 0], "correct": [1, 0]}),
     "duplicate"),
    (pd.DataFrame({"template_id": [], "student": [], "correct": []}), "no responses"),
])
def test_bad_input_is_rejected_with_a_reason(frame, message):
    with pytest.raises(ValueError, match=message):
        calibrate(frame)


# --- ability of one new respondent, parameters fixed -----------------------------------------


def one_respondent(theta: float, a: np.ndarray, b: np.ndarray, instances: int, seed: int):
    """Responses of one respondent of ability ``theta`` and the parameters as schema records."""
    rng = np.random.default_rng(seed)
    p = 1.0 / (1.0 + np.exp(-a * (theta - b)))
    correct = rng.random((instances, a.size)) < p
    ids = [f"t{j:04d}" for j in range(a.size)]
    frame = pd.DataFrame({"template_id": ids * instances, "correct": correct.ravel().astype(int)})
    parameters = {t: IRTParameters(discrimination=float(a_), difficulty=float(b_), discrimination_se=0.1,
                                   difficulty_se=0.1) for t, a_, b_ in zip(ids, a, b)}
    return frame, parameters


def brute_force_posterior(frame: pd.DataFrame, parameters: dict[str, IRTParameters]) -> tuple[float, float]:
    """Posterior mean and SD on one dense fixed grid (no refinement)."""
    grid = np.linspace(-8, 8, 160_001)
    log_post = -0.5 * grid**2
    for template_id, correct in frame.groupby("template_id")["correct"]:
        par = parameters[str(template_id)]
        z = par.discrimination * (grid - par.difficulty)
        k, n = int(correct.sum()), len(correct)
        log_post += -k * np.logaddexp(0.0, -z) - (n - k) * np.logaddexp(0.0, z)
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    mean = float(w @ grid)
    return mean, float(np.sqrt(w @ (grid - mean) ** 2))


@pytest.mark.parametrize(("templates", "instances"), [(3, 2), (40, 5), (300, 30)])
def test_estimate_ability_matches_the_exact_posterior(templates, instances):
    a, b = true_parameters(templates, seed=templates)
    frame, parameters = one_respondent(0.7, a, b, instances, seed=1)
    theta, se = estimate_ability(frame, parameters)
    exact_theta, exact_se = brute_force_posterior(frame, parameters)
    assert theta == pytest.approx(exact_theta, abs=1e-4 + 1e-3 * exact_se)
    assert se == pytest.approx(exact_se, rel=1e-3)


def test_estimate_ability_recovers_the_respondent_and_orders_respondents():
    a, b = true_parameters(200, seed=3)
    estimates = []
    for theta in (-1.0, 0.0, 1.5):
        frame, parameters = one_respondent(theta, a, b, instances=5, seed=4)
        estimate, se = estimate_ability(frame.assign(correct=frame["correct"].astype(bool)), parameters)
        assert abs(estimate - theta) < 3 * se and 0 < se < 0.2
        estimates.append(estimate)
    assert estimates == sorted(estimates)


def test_estimate_ability_of_a_perfect_respondent_is_finite_and_above_an_imperfect_one():
    a, b = true_parameters(20, seed=5)
    frame, parameters = one_respondent(0.0, a, b, instances=3, seed=5)
    perfect = estimate_ability(frame.assign(correct=1), parameters)
    assert np.isfinite(perfect).all() and perfect[0] > estimate_ability(frame, parameters)[0]


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"template_id": ["t0000"]}), "lack column"),
    (pd.DataFrame({"template_id": ["t0000"], "correct": [2]}), "0/1"),
    (pd.DataFrame({"template_id": [], "correct": []}), "no responses"),
    (pd.DataFrame({"template_id": ["elsewhere"], "correct": [1]}), "no IRT parameters"),
])
def test_estimate_ability_rejects_bad_input_with_a_reason(frame, message):
    _, parameters = one_respondent(0.0, *true_parameters(2, seed=0), instances=1, seed=0)
    with pytest.raises(ValueError, match=message):
        estimate_ability(frame, parameters)


# --- adaptive testing: information, running posterior, predicted accuracy ------------------------


def test_fisher_information_peaks_at_the_difficulty_and_grows_with_discrimination():
    from itemsmith.verification.irt import fisher_information

    a, b = np.array([0.5, 1.0, 2.0, 2.0]), np.array([0.0, 0.0, 0.0, 1.5])
    info = fisher_information(0.0, a, b)
    assert np.allclose(info[:3], a[:3] ** 2 / 4)  # p = 1/2 at theta = b
    assert info[3] < info[2]  # same a, off its difficulty
    grid = np.linspace(-3, 3, 601)
    assert abs(grid[np.argmax([fisher_information(t, a[3:], b[3:])[0] for t in grid])] - 1.5) < 0.011


def test_running_posterior_matches_the_batch_estimate():
    from itemsmith.verification.irt import AbilityPosterior

    a, b = true_parameters(30, seed=3)
    rng = np.random.default_rng(4)
    correct = rng.random(30) < 1 / (1 + np.exp(-a * (0.7 - b)))
    posterior = AbilityPosterior()
    assert abs(posterior.mean) < 1e-9 and abs(posterior.sd - 1.0) < 1e-3  # the N(0, 1) prior
    sds = []
    for j in range(30):
        posterior.update(float(a[j]), float(b[j]), bool(correct[j]))
        sds.append(posterior.sd)
    frame = pd.DataFrame({"template_id": [f"t{j}" for j in range(30)], "correct": correct.astype(int)})
    parameters = {f"t{j}": IRTParameters(discrimination=float(a[j]), difficulty=float(b[j]), discrimination_se=0.1,
                                         difficulty_se=0.1) for j in range(30)}
    theta, se = estimate_ability(frame, parameters)
    assert abs(posterior.mean - theta) < 1e-3 and abs(posterior.sd - se) < 1e-3
    assert posterior.answers == 30 and sds[-1] < sds[0] < 1.0


def test_a_wrong_answer_lowers_and_a_right_one_raises_the_ability():
    from itemsmith.verification.irt import AbilityPosterior

    up, down = AbilityPosterior(), AbilityPosterior()
    up.update(1.5, 0.0, True)
    down.update(1.5, 0.0, False)
    assert up.mean > 0 > down.mean and abs(up.mean + down.mean) < 1e-9


def test_expected_accuracy_is_the_mean_success_probability():
    from itemsmith.verification.irt import expected_accuracy

    a, b = np.array([1.0, 2.0, 0.5]), np.array([-1.0, 0.0, 2.0])
    exact = float(np.mean(1 / (1 + np.exp(-a * (0.3 - b)))))
    assert abs(expected_accuracy(0.3, 0.0, a, b) - exact) < 1e-12
    weighted = float(np.average(1 / (1 + np.exp(-a * (0.3 - b))), weights=[1, 0, 3]))
    assert abs(expected_accuracy(0.3, 0.0, a, b, np.array([1.0, 0.0, 3.0])) - weighted) < 1e-12
    # uncertainty about the ability pulls the prediction towards the middle
    assert expected_accuracy(3.0, 1.0, a, b) < expected_accuracy(3.0, 0.0, a, b)
    with pytest.raises(ValueError, match="no templates"):
        expected_accuracy(0.0, 1.0, np.array([]), np.array([]))
