"""Template-level two-parameter logistic (2PL) calibration.

The model: student ``s`` has ability ``theta_s ~ N(0, 1)``; every instance of template ``t``
is answered correctly with probability ``sigmoid(a_t * (theta_s - b_t))``. A template is an
item whose instances are exchangeable replicates, so the data of one (template, student) pair
is a binomial count ``k`` correct of ``n`` answered, and a small student pool still gives the
estimator many observations per template.

Estimation is marginal maximum a posteriori (Bock-Aitkin EM) with *adaptive* Gauss-Hermite
quadrature (Schilling & Bock, 2005): each student's quadrature nodes are centred on their
current posterior mean and scaled by its standard deviation, so a sharply peaked posterior
(a student who answered thousands of instances) is still integrated accurately, which a
fixed grid cannot do. Priors make it well defined with few students and for templates that
every student gets right (or wrong): ``log a ~ N(0, 0.5^2)`` and ``b ~ N(0, 2^2)`` by default.
The M-step is one damped Fisher-scoring step in ``(log a, b)`` per EM iteration for all
templates at once (a generalized EM that never lowers a template's EM objective), and the EM
map is accelerated with SQUAREM (Varadhan & Roland, 2008), which backs off to plain EM steps
whenever the log posterior would drop. Every array operation is vectorized over students x
nodes x templates; 1000 templates x 20 students take a few seconds.

Standard errors come from the observed information of the marginal posterior, one 2x2 block
per template (Louis' formula: the posterior expectation of the complete-data Hessian plus the
posterior variance of the complete-data score), inverted per template; the SE of ``a`` is
the delta-method SE of ``log a`` times ``a``. Abilities are EAP estimates with their
posterior standard deviations.

`estimate_ability` scores one new respondent (a model under evaluation) against templates whose
parameters are already fixed: the EAP ability and its posterior SD on the same N(0, 1) scale.

For adaptive testing: `fisher_information` (of one instance of each template at an ability),
`AbilityPosterior` (the grid posterior of one respondent, updated one answer at a time: EAP and
posterior SD after every answer) and `expected_accuracy` (the accuracy a respondent is predicted
to reach on a set of templates, averaged over the ability posterior).

Flags (a template can carry several):

- ``all_correct`` / ``all_wrong``: every response to the template is correct (wrong); its
  parameters are then mostly prior.
- ``negative_discrimination``: abler students do worse on it, likely a mis-keyed answer. The
  lognormal prior keeps ``a`` positive, so this is decided by a Rao score test of a zero
  slope (the ``slope_z`` column; flagged when ``slope_z <= -negative_slope_z``).
- ``near_zero_discrimination``: ``a`` below ``near_zero_discrimination``: the template does
  not separate abler from weaker students.
- ``information_not_positive_definite``: the observed information could not be inverted, so
  the standard errors are NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.polynomial.hermite_e import hermegauss
from pydantic import BaseModel, ConfigDict, Field
from scipy.special import logsumexp

from itemsmith.items.schema import IRTParameters

__all__ = ["AbilityPosterior", "Calibration", "IRTConfig", "calibrate", "estimate_ability", "expected_accuracy",
           "fisher_information", "fit_2pl", "to_parameters"]

_FLAGS = ("negative_discrimination", "near_zero_discrimination", "all_correct", "all_wrong",
          "information_not_positive_definite")


class IRTConfig(BaseModel):
    """Priors, quadrature and stopping rule of the template-level 2PL, and the flag thresholds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quadrature_points: int = Field(11, ge=5, le=101, description="adaptive Gauss-Hermite nodes per student")
    log_discrimination_mean: float = 0.0
    log_discrimination_sd: float = Field(0.5, gt=0)
    difficulty_mean: float = 0.0
    difficulty_sd: float = Field(2.0, gt=0)
    max_iterations: int = Field(1000, ge=1, description="EM map evaluations, SQUAREM steps included")
    tolerance: float = Field(1e-4, gt=0, description="largest parameter change at convergence")
    max_step: float = Field(1.0, gt=0, description="cap on one Fisher-scoring step, per parameter")
    near_zero_discrimination: float = Field(0.5, ge=0)
    negative_slope_z: float = Field(1.645, gt=0, description="one-sided z of the score test for a < 0")


@dataclass(frozen=True)
class Calibration:
    """The fit: per-template parameters (see `calibrate`), per-student abilities (``ability``,
    ``ability_se``, ``n_responses``), whether EM converged, the EM map evaluations it took and
    the log posterior at the estimate."""

    templates: pd.DataFrame
    abilities: pd.DataFrame
    converged: bool
    iterations: int
    log_posterior: float


# --- data -------------------------------------------------------------------------------------


def _counts(responses: pd.DataFrame) -> tuple[pd.Index, pd.Index, np.ndarray, np.ndarray]:
    """Students x templates arrays of correct counts ``K`` and answered counts ``N``."""
    missing = {"template_id", "student", "correct"} - set(responses.columns)
    if missing:
        raise ValueError(f"responses lack column(s) {sorted(missing)}; need template_id, student, correct "
                         "and optionally instance")
    if responses.empty:
        raise ValueError("no responses to calibrate")
    correct = pd.to_numeric(responses["correct"], errors="coerce")
    if correct.isna().any() or not correct.isin([0, 1]).all():
        raise ValueError("'correct' must be 0/1 (or bool) for every response")
    if "instance" in responses.columns:
        keys = ["template_id", "student", "instance"]
        dupes = responses.duplicated(keys)
        if dupes.any():
            first = responses.loc[dupes, keys].iloc[0].to_dict()
            raise ValueError(f"{int(dupes.sum())} duplicate response(s), e.g. {first}")
    frame = pd.DataFrame({"template_id": responses["template_id"].astype(str),
                          "student": responses["student"].astype(str), "correct": correct.astype(float)})
    grouped = frame.groupby(["student", "template_id"])["correct"].agg(["sum", "count"])
    k = grouped["sum"].unstack("template_id", fill_value=0.0)
    n = grouped["count"].unstack("template_id", fill_value=0).reindex_like(k).fillna(0)
    return k.index, k.columns, k.to_numpy(dtype=float), n.to_numpy(dtype=float)


# --- the EM map -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Prior:
    alpha_mean: float
    alpha_sd: float
    b_mean: float
    b_sd: float

    def log_density(self, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (-0.5 * ((alpha - self.alpha_mean) / self.alpha_sd) ** 2
                - 0.5 * ((b - self.b_mean) / self.b_sd) ** 2)


@dataclass(frozen=True)
class _Data:
    """The counts, the quadrature rule, the prior, and students x nodes x templates work buffers
    that every EM iteration reuses: writing into freshly allocated arrays of this size costs
    several times the arithmetic (page faults), so the loop allocates none."""

    k: np.ndarray  # students x templates: correct counts
    n: np.ndarray  # students x templates: answered counts
    nodes: np.ndarray  # Gauss-Hermite nodes for N(0, 1)
    log_node_weights: np.ndarray
    prior: _Prior
    z: np.ndarray  # work buffers, students x nodes x templates
    softplus: np.ndarray
    p: np.ndarray
    scratch: np.ndarray

    @classmethod
    def build(cls, k: np.ndarray, n: np.ndarray, quadrature_points: int, prior: _Prior) -> _Data:
        nodes, node_weights = hermegauss(quadrature_points)
        shape = (k.shape[0], quadrature_points, k.shape[1])
        return cls(k, n, nodes, np.log(node_weights / np.sqrt(2 * np.pi)), prior,
                   *(np.empty(shape) for _ in range(4)))


@dataclass
class _Posterior:
    theta: np.ndarray  # students x nodes: the adaptive quadrature nodes
    weights: np.ndarray  # students x nodes: posterior weights, rows sum to 1
    p: np.ndarray  # students x nodes x templates: success probabilities at the nodes
    objective: np.ndarray  # templates: the EM objective (expected complete-data log posterior) here
    log_marginal: np.ndarray  # students: log marginal likelihood
    mean: np.ndarray  # students: EAP ability
    sd: np.ndarray  # students: posterior standard deviation


def _linear_predictor(data: _Data, theta: np.ndarray, alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z = a (theta - b) into ``data.z``."""
    np.subtract(theta[:, :, None], b, out=data.z)
    return np.multiply(data.z, np.exp(alpha), out=data.z)


def _softplus(data: _Data) -> np.ndarray:
    """log(1 + exp(z)) of ``data.z`` into ``data.softplus``, stable: max(z, 0) + log1p(exp(-|z|)).
    It is -log(1 - sigmoid(z)), the negative log-likelihood of a wrong answer."""
    out = data.softplus
    np.abs(data.z, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(data.z, 0.0, out=data.scratch)
    return out


def _expected_objective(data: _Data, weights: np.ndarray, mean: np.ndarray, softplus: np.ndarray,
                        alpha: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per template: sum over students and nodes of weight x (k z - n softplus(z)), plus the log prior.

    With z = a (theta - b), the posterior expectation of z is a (mean - b) in closed form."""
    expected_z = np.exp(alpha) * (mean[:, None] - b)
    expected_softplus = np.einsum("sq,sqt->st", weights, softplus)
    return np.sum(data.k * expected_z - data.n * expected_softplus, axis=0) + data.prior.log_density(alpha, b)


def _e_step(data: _Data, alpha: np.ndarray, b: np.ndarray, centre: np.ndarray, log_scale: np.ndarray) -> _Posterior:
    scale = np.exp(log_scale)
    theta = centre[:, None] + scale[:, None] * data.nodes[None, :]
    # log(N(0,1) prior / N(centre, scale) proposal) at each node, plus the Gauss-Hermite weight
    log_prior = data.log_node_weights[None, :] + log_scale[:, None] + 0.5 * data.nodes[None, :] ** 2 - 0.5 * theta**2
    z = _linear_predictor(data, theta, alpha, b)
    softplus = _softplus(data)
    # binomial log-likelihood: k log p + (n - k) log(1 - p) = k z - n softplus(z)
    joint = log_prior + np.einsum("st,sqt->sq", data.k, z) - np.einsum("st,sqt->sq", data.n, softplus)
    log_marginal = logsumexp(joint, axis=1)
    weights = np.exp(joint - log_marginal[:, None])
    mean = np.sum(weights * theta, axis=1)
    sd = np.sqrt(np.maximum(np.sum(weights * (theta - mean[:, None]) ** 2, axis=1), 1e-12))
    objective = _expected_objective(data, weights, mean, softplus, alpha, b)
    p = np.exp(np.subtract(z, softplus, out=data.p), out=data.p)  # sigmoid(z)
    return _Posterior(theta, weights, p, objective, log_marginal - 0.5 * np.log(2 * np.pi), mean, sd)


def _m_step(data: _Data, post: _Posterior, alpha: np.ndarray, b: np.ndarray,
            max_step: float) -> tuple[np.ndarray, np.ndarray]:
    """One damped Fisher-scoring step in (log a, b) for every template, at the E-step's nodes and
    weights: shortened to at most ``max_step`` per parameter, then halved (up to 8 times) while it
    would lower that template's EM objective.

    Sums over nodes are contracted first (students x templates moments of p and p(1 - p) against
    1, theta, theta^2), in the work buffers (the E-step's z and softplus are spent by now)."""
    prior, a, k, n, theta = data.prior, np.exp(alpha), data.k, data.n, post.theta
    u = np.multiply(post.p, post.weights[:, :, None], out=data.softplus)  # w p
    v = np.subtract(u, np.multiply(u, post.p, out=data.z), out=data.z)  # w p (1 - p)

    def moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return x.sum(axis=1), np.einsum("sq,sqt->st", theta, x), np.einsum("sq,sqt->st", theta**2, x)

    u0, u1, _ = moments(u)
    v0, v1, v2 = moments(v)
    # d = theta - b; dz/dalpha = a d, dz/db = -a; residual k - n p summed with the weights
    r0 = np.sum(k - n * u0, axis=0)
    r1 = np.sum(k * (post.mean[:, None] - b) - n * (u1 - b * u0), axis=0)
    i0 = np.sum(n * v0, axis=0)
    i1 = np.sum(n * (v1 - b * v0), axis=0)
    i2 = np.sum(n * (v2 - 2 * b * v1 + b**2 * v0), axis=0)
    g_alpha = a * r1 - (alpha - prior.alpha_mean) / prior.alpha_sd**2
    g_b = -a * r0 - (b - prior.b_mean) / prior.b_sd**2
    i_aa = a**2 * i2 + 1 / prior.alpha_sd**2
    i_ab = -(a**2) * i1
    i_bb = a**2 * i0 + 1 / prior.b_sd**2
    det = i_aa * i_bb - i_ab**2
    step_alpha = (i_bb * g_alpha - i_ab * g_b) / det
    step_b = (i_aa * g_b - i_ab * g_alpha) / det
    shrink = np.minimum(1.0, max_step / np.maximum(np.maximum(np.abs(step_alpha), np.abs(step_b)), 1e-300))
    step_alpha, step_b = shrink * step_alpha, shrink * step_b  # same direction, so still an ascent direction

    def objective(new_alpha: np.ndarray, new_b: np.ndarray) -> np.ndarray:
        _linear_predictor(data, theta, new_alpha, new_b)
        return _expected_objective(data, post.weights, post.mean, _softplus(data), new_alpha, new_b)

    scale = np.ones_like(alpha)
    for _ in range(8):
        worse = objective(alpha + scale * step_alpha, b + scale * step_b) < post.objective - 1e-10
        if not worse.any():
            break
        scale = np.where(worse, scale / 2, scale)
    else:
        scale = np.where(worse, 0.0, scale)
    return alpha + scale * step_alpha, b + scale * step_b


def _em_map(data: _Data, state: np.ndarray, max_step: float) -> tuple[np.ndarray, float]:
    """One EM iteration on the packed state (log a, b, ability centre, log ability scale);
    returns the next state and the log posterior at the given one."""
    alpha, b, centre, log_scale = _unpack(state, data.k.shape)
    post = _e_step(data, alpha, b, centre, log_scale)
    new_alpha, new_b = _m_step(data, post, alpha, b, max_step)
    log_posterior = float(post.log_marginal.sum() + data.prior.log_density(alpha, b).sum())
    return np.concatenate([new_alpha, new_b, post.mean, np.log(post.sd)]), log_posterior


def _unpack(state: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    students, templates = shape
    return (state[:templates], state[templates:2 * templates], state[2 * templates:2 * templates + students],
            state[2 * templates + students:])


def _squarem(data: _Data, state: np.ndarray, config: IRTConfig) -> tuple[np.ndarray, bool, int]:
    """Run the EM map to a fixed point with SQUAREM acceleration (Varadhan & Roland, 2008,
    scheme S3 with backtracking to the plain EM double step when the log posterior drops).
    Returns the state, whether it converged and the number of EM map evaluations."""
    evaluations = 0
    while evaluations < config.max_iterations:
        x1, obj0 = _em_map(data, state, config.max_step)
        evaluations += 1
        if np.max(np.abs(x1 - state)) < config.tolerance:
            return x1, True, evaluations
        x2, _ = _em_map(data, x1, config.max_step)
        evaluations += 1
        r, v = x1 - state, x2 - 2 * x1 + state
        norm_v = np.linalg.norm(v)
        step = -np.linalg.norm(r) / norm_v if norm_v > 0 else -1.0
        step = min(step, -1.0)
        while True:
            candidate = state - 2 * step * r + step**2 * v
            stabilized, obj = _em_map(data, candidate, config.max_step)
            evaluations += 1
            if step == -1.0 or (np.isfinite(obj) and obj >= obj0):
                state = stabilized
                break
            step = (step - 1.0) / 2 if step < -2.0 else -1.0
    return state, False, evaluations


# --- after convergence ------------------------------------------------------------------------


def _standard_errors(data: _Data, post: _Posterior, alpha: np.ndarray,
                     b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SE of a and b from the per-template observed information (Louis), and whether it inverted."""
    prior, a, p, w = data.prior, np.exp(alpha), post.p, post.weights[:, :, None]
    d = post.theta[:, :, None] - b
    r = data.k[:, None, :] - data.n[:, None, :] * p
    v = data.n[:, None, :] * p * (1 - p)
    ja, jb = a * d, -a  # dz/dalpha, dz/db; second derivatives: z_aa = a d, z_ab = -a, z_bb = 0
    # posterior expectation of the complete-data Hessian, per student
    h_aa = np.sum(w * (r * ja - v * ja**2), axis=1)
    h_ab = np.sum(w * (r * jb - v * ja * jb), axis=1)
    h_bb = np.sum(w * (-v * jb**2), axis=1)
    # posterior mean and second moment of the complete-data score, per student
    s_a, s_b = np.sum(w * r * ja, axis=1), np.sum(w * r * jb, axis=1)
    ss_aa = np.sum(w * (r * ja) ** 2, axis=1)
    ss_ab = np.sum(w * (r * ja) * (r * jb), axis=1)
    ss_bb = np.sum(w * (r * jb) ** 2, axis=1)
    info_aa = -np.sum(h_aa + ss_aa - s_a**2, axis=0) + 1 / prior.alpha_sd**2
    info_ab = -np.sum(h_ab + ss_ab - s_a * s_b, axis=0)
    info_bb = -np.sum(h_bb + ss_bb - s_b**2, axis=0) + 1 / prior.b_sd**2
    det = info_aa * info_bb - info_ab**2
    ok = (info_aa > 0) & (info_bb > 0) & (det > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        se_alpha = np.where(ok, np.sqrt(info_bb / det), np.nan)
        se_b = np.where(ok, np.sqrt(info_aa / det), np.nan)
    return a * se_alpha, se_b, ok


def _slope_z(k: np.ndarray, n: np.ndarray, post: _Posterior) -> np.ndarray:
    """Rao score statistic for a zero slope, intercept profiled out, at the fitted abilities.

    Positive when abler students do better on the template, negative when they do worse;
    NaN when every response is correct or every one wrong.
    """
    total_n = n.sum(axis=0)
    p0 = k.sum(axis=0) / np.maximum(total_n, 1)
    m, second = post.mean[:, None], (post.mean**2 + post.sd**2)[:, None]
    score = np.sum((k - n * p0) * m, axis=0)
    q = p0 * (1 - p0)
    info = q * (np.sum(n * second, axis=0) - np.sum(n * m, axis=0) ** 2 / np.maximum(total_n, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(info > 0, score / np.sqrt(info), np.nan)


def _flags(k: np.ndarray, n: np.ndarray, a: np.ndarray, slope_z: np.ndarray, invertible: np.ndarray,
           config: IRTConfig) -> list[list[str]]:
    conditions = {
        "negative_discrimination": slope_z <= -config.negative_slope_z,
        "near_zero_discrimination": a < config.near_zero_discrimination,
        "all_correct": k.sum(axis=0) == n.sum(axis=0),
        "all_wrong": k.sum(axis=0) == 0,
        "information_not_positive_definite": ~invertible,
    }
    return [[flag for flag in _FLAGS if conditions[flag][t]] for t in range(a.size)]


# --- public API -------------------------------------------------------------------------------


def fit_2pl(responses: pd.DataFrame, config: IRTConfig | None = None) -> Calibration:
    """Calibrate the template-level 2PL on responses with columns ``template_id``, ``student``,
    ``correct`` (0/1) and optionally ``instance``.

    Every response of a student to any instance of a template counts (binomial likelihood);
    pairs a student never answered contribute nothing. Returns per-template parameters (see
    `calibrate`) and per-student abilities (``ability``, ``ability_se``, ``n_responses``).
    """
    config = config or IRTConfig()
    students, templates, k, n = _counts(responses)
    data = _Data.build(k, n, config.quadrature_points,
                       _Prior(config.log_discrimination_mean, config.log_discrimination_sd,
                              config.difficulty_mean, config.difficulty_sd))

    # start: a at its prior median, b from the proportion correct (probit-style scaling)
    p_hat = (k.sum(axis=0) + 0.5) / (n.sum(axis=0) + 1.0)
    alpha = np.full(k.shape[1], config.log_discrimination_mean)
    a0 = np.exp(config.log_discrimination_mean)
    b = np.clip(-np.log(p_hat / (1 - p_hat)) * np.sqrt(1 + a0**2) / a0, -3.0, 3.0)
    state = np.concatenate([alpha, b, np.zeros(k.shape[0]), np.zeros(k.shape[0])])
    state, converged, evaluations = _squarem(data, state, config)

    alpha, b, centre, log_scale = _unpack(state, k.shape)
    post = _e_step(data, alpha, b, centre, log_scale)
    a = np.exp(alpha)
    se_a, se_b, invertible = _standard_errors(data, post, alpha, b)
    slope_z = _slope_z(k, n, post)
    total_n = n.sum(axis=0)
    table = pd.DataFrame({
        "discrimination": a, "difficulty": b, "discrimination_se": se_a, "difficulty_se": se_b,
        "slope_z": slope_z, "n_students": (n > 0).sum(axis=0), "n_responses": total_n.astype(int),
        "proportion_correct": k.sum(axis=0) / np.maximum(total_n, 1),
        "flags": _flags(k, n, a, slope_z, invertible, config),
    }, index=pd.Index(templates, name="template_id"))
    abilities = pd.DataFrame({"ability": post.mean, "ability_se": post.sd, "n_responses": n.sum(axis=1).astype(int)},
                             index=pd.Index(students, name="student"))
    log_posterior = float(post.log_marginal.sum() + data.prior.log_density(alpha, b).sum())
    return Calibration(table, abilities, converged, evaluations, log_posterior)


def calibrate(responses: pd.DataFrame, config: IRTConfig | None = None) -> pd.DataFrame:
    """Template-level 2PL parameters, one row per ``template_id``.

    Columns: ``discrimination``, ``difficulty``, ``discrimination_se``, ``difficulty_se``,
    ``slope_z`` (score test of a zero slope), ``n_students``, ``n_responses``,
    ``proportion_correct`` and ``flags`` (list of flag names, see the module docstring).
    Abilities and convergence details: `fit_2pl`.
    """
    return fit_2pl(responses, config).templates


def to_parameters(table: pd.DataFrame) -> dict[str, IRTParameters]:
    """The typed verdict records (`IRTParameters`) of a `calibrate` table, by template id."""
    return {
        str(template_id): IRTParameters(
            discrimination=float(row["discrimination"]), difficulty=float(row["difficulty"]),
            discrimination_se=float(row["discrimination_se"]), difficulty_se=float(row["difficulty_se"]),
            flags=list(row["flags"]),
        )
        for template_id, row in table.iterrows()
    }


# --- one new respondent, parameters fixed ----------------------------------------------------


def _grid_posterior(grid: np.ndarray, k: np.ndarray, n: np.ndarray, a: np.ndarray,
                    b: np.ndarray) -> tuple[float, float]:
    """Posterior mean and SD of theta on ``grid``: N(0, 1) prior times the binomial likelihood."""
    z = a * (grid[:, None] - b)
    softplus = np.logaddexp(0.0, z)
    log_posterior = (k * z - n * softplus).sum(axis=1) - 0.5 * grid**2
    weights = np.exp(log_posterior - log_posterior.max())
    weights /= weights.sum()
    mean = float(weights @ grid)
    return mean, float(np.sqrt(max(float(weights @ (grid - mean) ** 2), 0.0)))


def estimate_ability(responses: pd.DataFrame, parameters: Mapping[str, IRTParameters],
                     grid_points: int = 201) -> tuple[float, float]:
    """EAP ability of one respondent and its posterior SD, template parameters held fixed.

    ``responses`` has columns ``template_id`` and ``correct`` (0/1 or bool), one row per answered
    instance; a template's instances pool into one binomial count, as in `fit_2pl`, and the prior
    is the calibration's N(0, 1) ability scale. The posterior is integrated on a grid over
    [-8, 8], then twice more on grids spanning 8 posterior SDs (at least 4 steps of the previous
    grid) either side of the last mean, so a sharp posterior from thousands of responses is
    integrated as accurately as a wide one. Raises ValueError for a template without parameters.
    """
    missing_columns = {"template_id", "correct"} - set(responses.columns)
    if missing_columns:
        raise ValueError(f"responses lack column(s) {sorted(missing_columns)}; need template_id and correct")
    if responses.empty:
        raise ValueError("no responses to estimate an ability from")
    correct = pd.to_numeric(responses["correct"], errors="coerce")
    if correct.isna().any() or not correct.isin([0, 1]).all():
        raise ValueError("'correct' must be 0/1 (or bool) for every response")
    counts = correct.astype(float).groupby(responses["template_id"].astype(str)).agg(["sum", "count"])
    unknown = [t for t in counts.index if t not in parameters]
    if unknown:
        raise ValueError(f"no IRT parameters for template(s) {unknown[:5]}{' ...' if len(unknown) > 5 else ''}")
    a = np.array([parameters[t].discrimination for t in counts.index])
    b = np.array([parameters[t].difficulty for t in counts.index])
    k, n = counts["sum"].to_numpy(), counts["count"].to_numpy(dtype=float)
    grid = np.linspace(-8.0, 8.0, grid_points)
    mean, sd = _grid_posterior(grid, k, n, a, b)
    for _ in range(2):
        half_width = max(8 * sd, 4 * (grid[1] - grid[0]))
        grid = np.linspace(mean - half_width, mean + half_width, grid_points)
        mean, sd = _grid_posterior(grid, k, n, a, b)
    return mean, sd


# --- adaptive testing: information, one respondent's running posterior, predicted accuracy ----


def fisher_information(theta: float, discrimination: np.ndarray, difficulty: np.ndarray) -> np.ndarray:
    """Fisher information about the ability at ``theta`` of one instance of each template:
    ``a^2 p (1 - p)`` with ``p = sigmoid(a (theta - b))``."""
    a = np.asarray(discrimination, dtype=float)
    p = 1.0 / (1.0 + np.exp(-a * (theta - np.asarray(difficulty, dtype=float))))
    return a**2 * p * (1.0 - p)


class AbilityPosterior:
    """The ability posterior of one respondent on a fixed grid: the N(0, 1) prior times the 2PL
    likelihood of the answers given so far, updated one answer at a time (adaptive testing).

    The grid spans [-6, 6] with ``grid_points`` nodes (0.03 apart by default), fine enough for
    the tens of answers an adaptive run gives; `estimate_ability` refines its grid for
    thousands of answers.
    """

    def __init__(self, grid_points: int = 401) -> None:
        if grid_points < 11:
            raise ValueError("grid_points must be at least 11")
        self.grid = np.linspace(-6.0, 6.0, grid_points)
        self._log_density = -0.5 * self.grid**2
        self.answers = 0

    def update(self, discrimination: float, difficulty: float, correct: bool) -> None:
        """Multiply in the likelihood of one answer to an instance of a template (a, b)."""
        z = discrimination * (self.grid - difficulty)
        self._log_density = self._log_density - np.logaddexp(0.0, -z if correct else z)
        self.answers += 1

    def _weights(self) -> np.ndarray:
        weights = np.exp(self._log_density - self._log_density.max())
        return weights / weights.sum()

    @property
    def mean(self) -> float:
        """The EAP ability."""
        return float(self._weights() @ self.grid)

    @property
    def sd(self) -> float:
        """The posterior standard deviation (the SE of the EAP ability)."""
        weights, mean = self._weights(), self.mean
        return float(np.sqrt(max(float(weights @ (self.grid - mean) ** 2), 0.0)))


def expected_accuracy(theta: float, se: float, discrimination: np.ndarray, difficulty: np.ndarray,
                      weights: np.ndarray | None = None, quadrature_points: int = 41) -> float:
    """Predicted proportion correct over the templates (weighted, e.g. by their item counts) for
    a respondent with ability ~ N(theta, se^2): the success probability averaged over the
    templates and over the ability (Gauss-Hermite)."""
    a, b = np.asarray(discrimination, dtype=float), np.asarray(difficulty, dtype=float)
    if a.size == 0:
        raise ValueError("no templates to predict an accuracy on")
    w = np.ones_like(a) if weights is None else np.asarray(weights, dtype=float)
    nodes, node_weights = hermegauss(quadrature_points)
    thetas = theta + max(se, 0.0) * nodes
    p = 1.0 / (1.0 + np.exp(-a[None, :] * (thetas[:, None] - b[None, :])))
    per_node = p @ (w / w.sum())
    return float(per_node @ (node_weights / node_weights.sum()))
