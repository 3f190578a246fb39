"""Threshold calibration on labeled validation data, with character-level pooled metrics.

Every candidate (policy, window spec, selection rule, consensus k) induces one score per
character; a threshold tau masks the characters scoring >= tau. Sweeping tau is therefore an
ROC sweep over pooled characters, and choosing an operating point is a search along it.
Detector spans enter as +inf (always masked), so "union" and "residual" are swept the same way.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from curation.core.spans import Span, char_mask
from curation.score.scorer import TokenScores
from curation.score.windows import (
    WindowSpec,
    build_windows,
    char_scores,
    consensus_token_scores,
    local_rank_token_scores,
)

POLICIES = ("detectors", "surprise", "union", "residual")
# f1 / f2: the best F-score (F2 weighs recall four times precision) whose measured collateral is within the
# budget; recall_at_budget: the most recall whose collateral, as a one-sided 95% upper bound over document
# resamples, is within the budget (the SM paper's "most coverage at an acceptable collateral rate").
# max_f1 is f1's earlier name; max_tpr_at_fpr (point estimate) and min_fpr_at_tpr stay for configs using them.
OBJECTIVES = ("f1", "f2", "recall_at_budget", "max_f1", "max_tpr_at_fpr", "min_fpr_at_tpr")
UPPER_BOUND_CONFIDENCE = 0.95
_UPPER_BOUND_GRID = 256  # operating points at which the upper bound is computed


def canonical_objective(objective: str) -> str:
    """The objective's current name (``max_f1`` is ``f1``); an unknown one is an error naming the choices."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r} is not one of {OBJECTIVES}")
    return "f1" if objective == "max_f1" else objective


def objective_metric(objective: str) -> str:
    """The metric an objective maximises (a key of :func:`bootstrap_metrics` and of :class:`Metrics`)."""
    return {"f1": "f1", "f2": "f2", "recall_at_budget": "tpr", "max_tpr_at_fpr": "tpr", "min_fpr_at_tpr": "tpr"}[
        canonical_objective(objective)
    ]


# How calibration chooses among its candidates; part of a stored calibration's input digest, so a rule
# change recalibrates instead of reusing a choice the old rule made.
SELECTION_RULES = "combination:one-se-max-recall;policy:one-se-detectors;surprise-transfer-measured"


@dataclass(frozen=True)
class SurpriseParams:
    """How surprise becomes a per-character score: windows, selection rule and consensus level."""

    window: WindowSpec = field(default_factory=WindowSpec)
    selection: str = "global"  # global | local
    k: int = 1
    neighbours: int = 32

    @property
    def name(self) -> str:
        rule = "global" if self.selection == "global" else f"local{self.neighbours}"
        return f"{self.window.name}/{rule}/k{self.k}"

    def to_dict(self) -> dict:
        return {**asdict(self), "name": self.name}

    @classmethod
    def from_dict(cls, data: dict) -> SurpriseParams:
        return cls(
            window=WindowSpec(**data["window"]),
            selection=data.get("selection", "global"),
            k=int(data.get("k", 1)),
            neighbours=int(data.get("neighbours", 32)),
        )


@dataclass
class ScoredDoc:
    """One labeled (or unlabeled) document with everything calibration needs; no model calls."""

    doc_id: str
    text: str
    kind: str
    scores: TokenScores
    gold: list[Span] = field(default_factory=list)
    detected: list[Span] = field(default_factory=list)


@dataclass(frozen=True)
class Metrics:
    """Pooled character-level metrics of one mask against gold."""

    tpr: float
    fpr: float
    precision: float
    f1: float
    preservation: float
    target_chars: int
    nontarget_chars: int
    masked_chars: int

    @classmethod
    def from_counts(cls, tp: int, fp: int, positives: int, negatives: int) -> Metrics:
        tpr = tp / positives if positives else 0.0
        fpr = fp / negatives if negatives else 0.0
        precision = tp / (tp + fp) if tp + fp else 0.0
        f1 = 2 * precision * tpr / (precision + tpr) if precision + tpr else 0.0
        return cls(tpr, fpr, precision, f1, 1.0 - fpr, positives, negatives, tp + fp)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def f2(self) -> float:
        return f_beta(self.precision, self.tpr, 2.0)


def f_beta(precision, recall, beta: float):
    """F-beta of arrays or floats (0 where both are 0): beta 2 weighs recall four times precision."""
    b2 = beta * beta
    num = (1 + b2) * np.asarray(precision) * np.asarray(recall)
    den = b2 * np.asarray(precision) + np.asarray(recall)
    out = np.divide(num, den, out=np.zeros(np.shape(num)), where=den > 0)
    return float(out) if np.ndim(out) == 0 else out


BOOTSTRAP_RESAMPLES = 1000


def doc_counts(predicted: np.ndarray, gold: np.ndarray) -> tuple[int, int, int, int]:
    """(tp, fp, positives, negatives) of one document's character mask: the unit the bootstrap resamples."""
    predicted, gold = predicted.astype(bool), gold.astype(bool)
    return int(np.sum(predicted & gold)), int(np.sum(predicted & ~gold)), int(gold.sum()), int((~gold).sum())


def bootstrap_metrics(counts: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> dict[str, np.ndarray]:
    """Pooled precision, recall, F1 and FPR over ``resamples`` resamplings of the documents (rows of
    ``counts``: tp, fp, positives, negatives), with replacement: documents, not characters, are the
    independent units (the characters of one document share its template, author and kind)."""
    counts = np.asarray(counts, dtype=np.float64).reshape(-1, 4)
    if not len(counts):
        return {k: np.zeros(0) for k in ("precision", "tpr", "f1", "f2", "fpr")}
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(counts), size=(resamples, len(counts)))
    tp, fp, pos, neg = (counts[:, i][picks].sum(axis=1) for i in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        tpr = np.where(pos > 0, tp / pos, 0.0)
        f1 = np.where(precision + tpr > 0, 2 * precision * tpr / (precision + tpr), 0.0)
        fpr = np.where(neg > 0, fp / neg, 0.0)
    return {"precision": precision, "tpr": tpr, "f1": f1, "f2": f_beta(precision, tpr, 2.0), "fpr": fpr}


def upper_bound(resampled: np.ndarray, measured: float, confidence: float = UPPER_BOUND_CONFIDENCE) -> float:
    """One-sided upper bound of a resampled metric (its ``confidence`` percentile); the measured value
    when there are no resamples."""
    return float(np.percentile(resampled, 100 * confidence)) if len(resampled) else float(measured)


def bootstrap_intervals(counts: np.ndarray, confidence: float = 0.95, seed: int = 0) -> dict[str, list[float]]:
    """Percentile intervals of the pooled metrics over document resamples."""
    tail = (1 - confidence) / 2 * 100
    return {
        name: [round(float(np.percentile(v, tail)), 4), round(float(np.percentile(v, 100 - tail)), 4)]
        for name, v in bootstrap_metrics(counts, seed=seed).items()
        if len(v)
    }


def char_metrics(predicted: np.ndarray, gold: np.ndarray) -> Metrics:
    predicted, gold = predicted.astype(bool), gold.astype(bool)
    tp = int(np.sum(predicted & gold))
    fp = int(np.sum(predicted & ~gold))
    return Metrics.from_counts(tp, fp, int(gold.sum()), int((~gold).sum()))


@dataclass
class Sweep:
    """Cumulative counts when masking every character scoring >= thresholds[i] (descending)."""

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    positives: int
    negatives: int
    # each document's clean characters' scores, sorted (for the collateral's upper bound over documents)
    negatives_by_doc: list[np.ndarray] | None = None

    def fpr_upper(self, indices: np.ndarray, confidence: float = UPPER_BOUND_CONFIDENCE, seed: int = 0) -> np.ndarray:
        """One-sided upper bound of the pooled collateral at ``thresholds[indices]``: its ``confidence``
        percentile over resamples of the documents (the same resamples at every threshold). Without
        per-document data (or with one document) the measured collateral itself."""
        indices = np.asarray(indices, dtype=np.int64)
        if not self.negatives_by_doc or len(self.negatives_by_doc) < 2:
            return self.fpr[indices]
        thresholds = self.thresholds[indices]
        # clean characters of each document at or above each threshold: (documents, thresholds)
        fp = np.array([len(neg) - np.searchsorted(neg, thresholds, side="left") for neg in self.negatives_by_doc])
        neg = np.array([len(n) for n in self.negatives_by_doc], dtype=np.float64)
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, len(neg), size=(BOOTSTRAP_RESAMPLES, len(neg)))
        weights = np.zeros((BOOTSTRAP_RESAMPLES, len(neg)))
        np.add.at(weights, (np.repeat(np.arange(BOOTSTRAP_RESAMPLES), len(neg)), picks.ravel()), 1.0)
        boot_neg = weights @ neg
        boot_fpr = np.divide(
            weights @ fp,
            boot_neg[:, None],
            out=np.zeros((BOOTSTRAP_RESAMPLES, len(indices))),
            where=boot_neg[:, None] > 0,
        )
        return np.percentile(boot_fpr, 100 * confidence, axis=0)

    def metrics_at(self, i: int) -> Metrics:
        return Metrics.from_counts(int(self.tp[i]), int(self.fp[i]), self.positives, self.negatives)

    @property
    def tpr(self) -> np.ndarray:
        return self.tp / max(self.positives, 1)

    @property
    def fpr(self) -> np.ndarray:
        return self.fp / max(self.negatives, 1)

    @property
    def precision(self) -> np.ndarray:
        return np.divide(self.tp, self.tp + self.fp, out=np.zeros(len(self.tp)), where=(self.tp + self.fp) > 0)

    @property
    def f1(self) -> np.ndarray:
        p, r = self.precision, self.tpr
        return np.divide(2 * p * r, p + r, out=np.zeros(len(p)), where=(p + r) > 0)


def sweep(scores: np.ndarray, gold: np.ndarray, doc_sizes: Sequence[int] | None = None) -> Sweep:
    """All operating points of ``scores >= tau`` over the distinct finite-or-inf score values; with
    ``doc_sizes`` (characters per document, in pooled order) the sweep can bound collateral over documents."""
    order = np.argsort(-scores, kind="stable")
    s, g = scores[order], gold[order].astype(bool)
    tp_cum, fp_cum = np.cumsum(g), np.cumsum(~g)
    last_of_group = np.r_[s[1:] != s[:-1], True]
    keep = last_of_group & (s > -np.inf)
    by_doc = None
    if doc_sizes is not None:
        bounds = np.cumsum([0, *doc_sizes])
        gold_b = gold.astype(bool)
        by_doc = [np.sort(scores[a:b][~gold_b[a:b]]) for a, b in itertools.pairwise(bounds)]
    return Sweep(s[keep], tp_cum[keep], fp_cum[keep], int(g.sum()), int((~g).sum()), by_doc)


def auroc(scores: np.ndarray, gold: np.ndarray) -> float:
    """Area under the ROC of per-character scores; tied scores count one half (trapezoids)."""
    gold = gold.astype(bool)
    positives, negatives = int(gold.sum()), int((~gold).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    s, g = scores[order], gold[order]
    last_of_group = np.r_[s[1:] != s[:-1], True]
    tpr = np.r_[0.0, np.cumsum(g)[last_of_group] / positives]
    fpr = np.r_[0.0, np.cumsum(~g)[last_of_group] / negatives]
    return float(np.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1]) / 2))


@dataclass(frozen=True)
class OperatingPoint:
    """A threshold and what it achieves on the data it was chosen on."""

    threshold: float
    metrics: Metrics
    objective: str
    fpr_upper: float | None = None  # recall_at_budget: the collateral's upper bound at this threshold

    def to_dict(self) -> dict:
        out = {"threshold": finite_or_none(self.threshold), "objective": self.objective, **self.metrics.to_dict()}
        if self.fpr_upper is not None:
            out["fpr_upper"] = round(float(self.fpr_upper), 6)
        return out


def choose_point(
    result: Sweep, objective: str = "max_f1", collateral_budget: float = 0.03, coverage_target: float = 0.9
) -> OperatingPoint:
    """Pick a threshold: the best F1 / F2 or recall within the collateral budget (recall_at_budget: the
    collateral's upper bound over documents within it), or the least collateral at the coverage target."""
    objective = canonical_objective(objective)
    if len(result.thresholds) == 0:
        return OperatingPoint(math.inf, Metrics.from_counts(0, 0, result.positives, result.negatives), objective)
    fpr, tpr = result.fpr, result.tpr
    within = fpr <= collateral_budget
    if objective == "recall_at_budget":
        grid = np.unique(np.linspace(0, len(result.thresholds) - 1, _UPPER_BOUND_GRID).round().astype(np.int64))
        # the point-estimate choice is a candidate too, so the grid never hides the budget's edge
        edge = np.flatnonzero(within)
        grid = np.union1d(grid, edge[[-1]] if len(edge) else np.zeros(0, np.int64))
        upper = result.fpr_upper(grid)
        ok = upper <= collateral_budget
        j = int(np.flatnonzero(ok)[np.argmax(tpr[grid][ok])]) if ok.any() else int(np.argmin(upper))
        i = int(grid[j])
        return OperatingPoint(float(result.thresholds[i]), result.metrics_at(i), objective, float(upper[j]))
    if objective == "min_fpr_at_tpr":
        ok = np.flatnonzero(tpr >= coverage_target)
        i = int(ok[np.argmin(fpr[ok])]) if len(ok) else int(np.argmax(tpr))
    else:
        key = {"f1": result.f1, "f2": f_beta(result.precision, tpr, 2.0), "max_tpr_at_fpr": tpr}[objective]
        candidates = np.flatnonzero(within) if within.any() else np.array([int(np.argmin(fpr))])
        i = int(candidates[np.argmax(key[candidates])])
    return OperatingPoint(float(result.thresholds[i]), result.metrics_at(i), objective)


def surprise_token_scores(doc: ScoredDoc, params: SurpriseParams, exclude: np.ndarray | None = None) -> np.ndarray:
    windows = build_windows(doc.scores, params.window, doc.text, exclude=exclude)
    if params.selection == "local":
        return local_rank_token_scores(windows, doc.scores.n_tokens, params.neighbours)
    return consensus_token_scores(windows, doc.scores.n_tokens, params.k)


def tokens_inside(doc: ScoredDoc, spans: Sequence[Span]) -> np.ndarray:
    """Tokens whose characters all lie inside ``spans`` (used to exclude detected tokens)."""
    covered = np.array([*char_mask(spans, len(doc.text)), False], dtype=bool)
    cum = np.concatenate([[0], np.cumsum(covered[:-1])])
    widths = doc.scores.char_end - doc.scores.char_start
    inside = cum[doc.scores.char_end] - cum[doc.scores.char_start]
    return (widths > 0) & (inside == widths)


def doc_char_scores(doc: ScoredDoc, policy: str, params: SurpriseParams) -> np.ndarray:
    """The per-character score a (policy, params) pair gives one document."""
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r} is not one of {POLICIES}")
    n = len(doc.text)
    detected = np.array(char_mask(doc.detected, n), dtype=bool)
    if policy == "detectors":
        return np.where(detected, np.inf, -np.inf)
    exclude = tokens_inside(doc, doc.detected) if policy == "residual" else None
    token_score = surprise_token_scores(doc, params, exclude)
    chars = char_scores(token_score, doc.scores.char_start, doc.scores.char_end, n)
    if policy == "surprise":
        return chars
    return np.where(detected, np.inf, chars)


def pooled(docs: Sequence[ScoredDoc], policy: str, params: SurpriseParams) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated per-character scores and gold flags over documents."""
    if not docs:
        return np.zeros(0), np.zeros(0, dtype=bool)
    scores = np.concatenate([doc_char_scores(d, policy, params) for d in docs])
    gold = np.concatenate([np.array(char_mask(d.gold, len(d.text)), dtype=bool) for d in docs])
    return scores, gold


@dataclass
class CandidateResult:
    policy: str
    params: SurpriseParams
    point: OperatingPoint
    surprise_auroc: float

    def to_row(self) -> dict:
        return {
            "policy": self.policy,
            "params": self.params.name,
            "surprise_auroc": finite_or_none(self.surprise_auroc),
            **self.point.to_dict(),
        }


@dataclass
class Calibration:
    """The chosen operating point plus everything needed to explain and re-apply it."""

    policy: str
    params: SurpriseParams
    point: OperatingPoint
    per_kind_thresholds: dict[str, float]
    candidates: list[CandidateResult]
    best_sweep: Sweep
    surprise_auroc: float
    policy_rule: dict | None = None

    def threshold_for(self, kind: str) -> float:
        return self.per_kind_thresholds.get(kind, self.point.threshold)

    def to_dict(self) -> dict:
        return {
            "policy": self.policy,
            "params": self.params.to_dict(),
            "operating_point": self.point.to_dict(),
            "per_kind_thresholds": {k: finite_or_none(v) for k, v in self.per_kind_thresholds.items()},
            "surprise_auroc": finite_or_none(self.surprise_auroc),
            "policy_rule": self.policy_rule,
        }

    @classmethod
    def applied(cls, data: dict) -> AppliedCalibration:
        """What application needs from a stored calibration (no sweep, no candidate table)."""
        thresholds = {k: none_to_inf(v) for k, v in data.get("per_kind_thresholds", {}).items()}
        return AppliedCalibration(
            data["policy"],
            SurpriseParams.from_dict(data["params"]),
            none_to_inf(data["operating_point"]["threshold"]),
            thresholds,
        )


@dataclass(frozen=True)
class AppliedCalibration:
    policy: str
    params: SurpriseParams
    threshold: float
    per_kind_thresholds: dict[str, float]

    def threshold_for(self, kind: str) -> float:
        return self.per_kind_thresholds.get(kind, self.threshold)


def default_candidates() -> list[SurpriseParams]:
    """The joint search space: window size/kind, score type, selection rule and consensus."""
    out = []
    for score_type in ("nll_per_char", "mean_nll"):
        for size in (4, 8, 16):
            for k in sorted({1, max(1, size // 4), max(1, size // 2)}):
                out.append(SurpriseParams(WindowSpec("fixed", size, 1, score_type), "global", k))
        out.append(SurpriseParams(WindowSpec("line", score_type=score_type), "global", 1))
    out.append(SurpriseParams(WindowSpec("fixed", 8, 1, "mean_nll"), "local", 1))
    return out


def calibrate(
    docs: Sequence[ScoredDoc],
    *,
    policies: Sequence[str] = POLICIES,
    candidates: Sequence[SurpriseParams] | None = None,
    objective: str = "f1",
    collateral_budget: float = 0.03,
    coverage_target: float = 0.9,
    min_kind_docs: int = 20,
) -> Calibration:
    """Joint search over policy and surprise parameters, then per-kind thresholds for the winner.

    The winner is the best candidate unless the detectors-only policy is within one bootstrap standard
    error of it (:func:`choose_policy`): a threshold fitted on few documents is the part that does not
    carry over to unseen ones."""
    if not docs:
        raise ValueError("calibration needs at least one labeled validation document")
    objective = canonical_objective(objective)
    doc_sizes = [len(d.text) for d in docs] if objective == "recall_at_budget" else None
    results: list[CandidateResult] = []
    best: tuple[float, CandidateResult, Sweep] | None = None
    detectors: tuple[CandidateResult, Sweep] | None = None
    for params in candidates or default_candidates():
        surprise_scores, gold = pooled(docs, "surprise", params)
        surprise_auc = auroc(surprise_scores, gold)
        for policy in policies:
            if policy == "detectors" and detectors is not None:
                continue
            scores = surprise_scores if policy == "surprise" else pooled(docs, policy, params)[0]
            result = sweep(scores, gold, doc_sizes)
            point = choose_point(result, objective, collateral_budget, coverage_target)
            candidate = CandidateResult(policy, params, point, surprise_auc)
            results.append(candidate)
            if policy == "detectors":
                detectors = (candidate, result)
            rank = _rank_value(point, objective, collateral_budget)
            if best is None or rank > best[0]:
                best = (rank, candidate, result)
    assert best is not None
    _, winner, winner_sweep = best
    rule = None
    if detectors is not None and winner is not detectors[0]:
        rule = choose_policy(docs, winner, detectors[0], objective, collateral_budget)
        if rule["chosen"] == "detectors":
            winner, winner_sweep = detectors
    elif detectors is not None:  # the detectors won outright: the record says so, with what they reached
        rule = _outright_rule(detectors[0], objective)
    per_kind = _per_kind_thresholds(docs, winner, objective, collateral_budget, coverage_target, min_kind_docs)
    return Calibration(
        winner.policy,
        winner.params,
        winner.point,
        per_kind,
        results,
        winner_sweep,
        winner.surprise_auroc,
        policy_rule=rule,
    )


def candidate_doc_counts(docs: Sequence[ScoredDoc], candidate: CandidateResult) -> np.ndarray:
    """Per-document (tp, fp, positives, negatives) of a candidate at its own threshold."""
    rows = []
    for doc in docs:
        mask = doc_char_scores(doc, candidate.policy, candidate.params) >= candidate.point.threshold
        rows.append(doc_counts(mask, np.array(char_mask(doc.gold, len(doc.text)), dtype=bool)))
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def choose_policy(
    docs: Sequence[ScoredDoc],
    best: CandidateResult,
    detectors: CandidateResult,
    objective: str,
    collateral_budget: float,
) -> dict:
    """One-standard-error rule between the best candidate and the detectors-only policy.

    The detectors policy fits nothing on the labels; every other policy fits a surprise threshold and
    window. The detectors are kept when their objective is no more than one standard error of the paired
    difference (the same document resamples for both) below the best's and their collateral no more
    than one such error above it or within the budget. Measured on learning curves: with 10 labeled
    documents the best-F1 rule chose "union" and masked a quarter of the unseen documents' other text."""
    key = objective_metric(objective)
    best_boot = bootstrap_metrics(candidate_doc_counts(docs, best))
    det_boot = bootstrap_metrics(candidate_doc_counts(docs, detectors))
    se_key = float(np.std(det_boot[key] - best_boot[key])) if len(best_boot[key]) else 0.0
    se_fpr = float(np.std(det_boot["fpr"] - best_boot["fpr"])) if len(best_boot["fpr"]) else 0.0
    best_m, det_m = best.point.metrics, detectors.point.metrics
    best_value, det_value = getattr(best_m, key), getattr(det_m, key)
    if objective == "min_fpr_at_tpr":
        # the objective is the collateral; the detectors must still reach the coverage the best reached
        value_ok = det_value >= best_value - se_key - 1e-9 and det_m.fpr <= best_m.fpr + se_fpr + 1e-12
        collateral_ok = True
    else:
        value_ok = det_value >= best_value - se_key - 1e-9
        collateral_ok = det_m.fpr <= best_m.fpr + se_fpr + 1e-12 or det_m.fpr <= collateral_budget
        if objective == "recall_at_budget":  # the detectors' collateral bound must be within the budget too
            det_upper = upper_bound(det_boot["fpr"], det_m.fpr)
            collateral_ok = det_upper <= collateral_budget or det_m.fpr <= best_m.fpr + 1e-12
    chosen = "detectors" if value_ok and collateral_ok else best.policy
    return {
        "rule": "one_standard_error",
        "metric": key,
        "best": {
            "policy": best.policy,
            "params": best.params.name,
            key: round(best_value, 4),
            "fpr": round(best_m.fpr, 4),
        },
        "detectors": {key: round(det_value, 4), "fpr": round(det_m.fpr, 4)},
        "standard_error": round(se_key, 4),
        "chosen": chosen,
    }


def _outright_rule(detectors: CandidateResult, objective: str) -> dict:
    """The policy rule's record when no threshold policy beat the detectors on calibration at all."""
    key = objective_metric(objective)
    m = detectors.point.metrics
    value = {key: round(getattr(m, key), 4), "fpr": round(m.fpr, 4)}
    return {
        "rule": "one_standard_error",
        "metric": key,
        "best": {"policy": "detectors", "params": detectors.params.name, **value},
        "detectors": value,
        "standard_error": 0.0,
        "chosen": "detectors",
    }


def _rank_value(point: OperatingPoint, objective: str, collateral_budget: float = 0.03) -> float:
    m = point.metrics
    objective = canonical_objective(objective)
    if objective == "f1":
        return m.f1
    if objective == "f2":
        return m.f2
    if objective == "max_tpr_at_fpr":
        return m.tpr
    if objective == "recall_at_budget":  # a candidate whose bound is over the budget ranks below any within it
        upper = point.fpr_upper if point.fpr_upper is not None else m.fpr
        return m.tpr if upper <= collateral_budget else -upper
    return -m.fpr


def _per_kind_thresholds(
    docs: Sequence[ScoredDoc],
    winner: CandidateResult,
    objective: str,
    collateral_budget: float,
    coverage_target: float,
    min_kind_docs: int,
) -> dict[str, float]:
    """Thresholds per document kind (text/code/chat: known at run time), where data suffices."""
    out: dict[str, float] = {}
    if winner.policy == "detectors":
        return out
    for kind in sorted({d.kind for d in docs}):
        subset = [d for d in docs if d.kind == kind]
        if len(subset) < min_kind_docs:
            continue
        scores, gold = pooled(subset, winner.policy, winner.params)
        if gold.sum() == 0:
            continue
        sizes = [len(d.text) for d in subset] if canonical_objective(objective) == "recall_at_budget" else None
        result = sweep(scores, gold, sizes)
        out[kind] = choose_point(result, objective, collateral_budget, coverage_target).threshold
    return out


def evaluate(docs: Sequence[ScoredDoc], calibration: Calibration | AppliedCalibration) -> dict:
    """Apply a calibration to labeled documents: pooled metrics, per-label recall, AUROC."""
    scores, gold, predicted, counts = [], [], [], []
    per_label_total: dict[str, int] = {}
    per_label_hit: dict[str, int] = {}
    for doc in docs:
        chars = doc_char_scores(doc, calibration.policy, calibration.params)
        mask = chars >= calibration.threshold_for(doc.kind)
        scores.append(chars)
        predicted.append(mask)
        gold.append(np.array(char_mask(doc.gold, len(doc.text)), dtype=bool))
        counts.append(doc_counts(mask, gold[-1]))
        for span in doc.gold:
            per_label_total[span.label] = per_label_total.get(span.label, 0) + span.length
            per_label_hit[span.label] = per_label_hit.get(span.label, 0) + int(mask[span.start : span.end].sum())
    if not docs:
        return {"metrics": None, "auroc": None, "per_label_recall": {}, "documents": 0}
    all_scores, all_gold = np.concatenate(scores), np.concatenate(gold)
    metrics = char_metrics(np.concatenate(predicted), all_gold)
    return {
        "metrics": metrics.to_dict(),
        "auroc": finite_or_none(auroc(all_scores, all_gold)),
        "per_label_recall": {k: per_label_hit[k] / v for k, v in sorted(per_label_total.items()) if v},
        "documents": len(docs),
        # 95% percentile intervals over 1,000 resamples of the documents (what the card prints)
        "intervals": bootstrap_intervals(np.array(counts)),
    }


def finite_or_none(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def none_to_inf(value: float | None) -> float:
    return math.inf if value is None else float(value)
