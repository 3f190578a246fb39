"""Windows, consensus, selection rules and metrics, checked against hand-computed values."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from curation.policy.calibration import Metrics, auroc, char_metrics, choose_point, sweep
from curation.score.scorer import TokenScores, plan_chunks
from curation.score.windows import (
    Windows,
    WindowSpec,
    build_windows,
    char_scores,
    consensus_token_scores,
    fixed_ranges,
    local_rank_token_scores,
)


def _scores(nll, widths=None):
    widths = widths or [1] * len(nll)
    ends = np.cumsum(widths)
    return TokenScores(ends - np.array(widths), ends, np.array(nll, dtype=np.float32))


@given(st.integers(0, 80), st.integers(1, 12), st.integers(1, 6))
def test_fixed_windows_cover_every_token(n, size, stride):
    stride = min(stride, size)  # a stride past the size leaves gaps by design (no selection there)
    starts, ends = fixed_ranges(n, size, stride)
    covered = np.zeros(n, bool)
    for a, b in zip(starts, ends, strict=True):
        assert 0 <= a < b <= n and b - a == min(size, n)
        covered[a:b] = True
    assert covered.all()


@given(st.integers(0, 3000), st.integers(8, 64))
def test_plan_chunks_tile_tokens_once_with_context(n, min_context):
    width = min_context * 3
    chunks = plan_chunks(n, width, min_context)
    emitted = [t for _, first, hi in chunks for t in range(first, hi)]
    assert emitted == list(range(n))
    for lo, first, hi in chunks:
        assert hi - lo <= width and first - lo == min(first, min_context)


def test_window_scores_mean_and_per_char():
    scores = _scores([1.0, 3.0, 5.0, float("nan")], widths=[1, 1, 2, 1])
    mean = build_windows(scores, WindowSpec("fixed", 2, 1, "mean_nll"))
    assert np.allclose(mean.score, [2.0, 4.0, 5.0])  # the NaN token does not count
    per_char = build_windows(scores, WindowSpec("fixed", 2, 1, "nll_per_char"))
    assert np.allclose(per_char.score, [2.0, 8 / 3, 5 / 2])


def test_all_nan_window_is_invalid_and_never_selected():
    scores = _scores([float("nan")] * 3)
    windows = build_windows(scores, WindowSpec("fixed", 2, 1))
    assert not windows.valid.any()
    assert np.all(consensus_token_scores(windows, 3, 1) == -np.inf)


def test_consensus_k_is_kth_largest_covering_score():
    windows = Windows(np.array([0, 1, 2]), np.array([2, 3, 4]), np.array([5.0, 1.0, 3.0]))
    assert list(consensus_token_scores(windows, 4, 1)) == [5.0, 5.0, 3.0, 3.0]
    k2 = consensus_token_scores(windows, 4, 2)
    assert k2[0] == -np.inf and k2[1] == 1.0 and k2[2] == 1.0 and k2[3] == -np.inf


def test_local_rank_ties_count_against_selection():
    # log-probs: -2, -1, -1 ; window 1 and 2 tie: each has rank 2 (itself counted against by the tie)
    windows = Windows(np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([2.0, 1.0, 1.0]))
    scores = local_rank_token_scores(windows, 3, neighbours=32)
    assert list(scores) == [0.0, -2.0, -2.0]


def test_char_scores_fill_gaps_with_lower_neighbour():
    chars = char_scores(np.array([2.0, 5.0]), np.array([0, 3]), np.array([2, 5]), 6)
    assert list(chars) == [2.0, 2.0, 2.0, 5.0, 5.0, -np.inf]


def test_auroc_ties_count_one_half():
    assert auroc(np.array([1.0, 1.0]), np.array([True, False])) == 0.5
    assert auroc(np.array([3.0, 2.0, 2.0, 1.0]), np.array([True, True, False, False])) == 0.875
    assert math.isnan(auroc(np.array([1.0]), np.array([True])))


def test_metrics_and_operating_points_by_hand():
    m = char_metrics(np.array([1, 1, 0, 0, 1], bool), np.array([1, 0, 1, 0, 1], bool))
    assert (m.tpr, m.fpr, m.precision) == (2 / 3, 0.5, 2 / 3)
    assert m == Metrics.from_counts(2, 1, 3, 2)
    s = sweep(np.array([0.9, 0.8, 0.7, 0.1]), np.array([True, False, True, False]))
    assert list(s.thresholds) == [0.9, 0.8, 0.7, 0.1]
    best_f1 = choose_point(s, "max_f1", collateral_budget=1.0)
    assert best_f1.threshold == 0.7  # tp=2, fp=1: F1 0.8
    strict = choose_point(s, "max_f1", collateral_budget=0.0)
    assert strict.threshold == 0.9
    cover = choose_point(s, "min_fpr_at_tpr", coverage_target=1.0)
    assert cover.threshold == 0.7 and cover.metrics.fpr == 0.5


def _policy_doc(i, gold, detected, surprising, n=40):
    """A document of one-character tokens: NLL 10 on ``surprising`` characters, 1 elsewhere."""
    from curation.core.spans import Span
    from curation.policy.calibration import ScoredDoc

    nll = np.ones(n, np.float32)
    for a, b in surprising:
        nll[a:b] = 10.0
    ends = np.arange(1, n + 1)
    return ScoredDoc(
        f"d{i}",
        "x" * n,
        "text",
        TokenScores(ends - 1, ends, nll),
        [Span(a, b, "PERSON") for a, b in gold],
        [Span(a, b, "PERSON", source="rules") for a, b in detected],
    )


def test_policy_rule_keeps_the_detectors_within_one_standard_error_of_the_best():
    """A surprise threshold fitted to one document's two missed characters (and one false alarm) is
    noise on ten documents: the detectors-only policy is kept. Where the detectors miss half of every
    span, the threshold policy is clearly better and is chosen."""
    from curation.policy.calibration import SurpriseParams, calibrate

    params = [SurpriseParams(WindowSpec("fixed", 1, 1, "mean_nll"), "global", 1)]
    noisy = [
        _policy_doc(0, [(5, 15)], [(5, 13)], [(13, 15)]),
        _policy_doc(1, [(5, 15)], [(5, 15)], [(30, 31)]),
        *(_policy_doc(i, [(5, 15)], [(5, 15)], []) for i in range(2, 10)),
    ]
    kept = calibrate(noisy, candidates=params)
    rule = kept.policy_rule
    assert rule["best"]["policy"] == "union" and rule["best"]["f1"] > rule["detectors"]["f1"]
    assert kept.policy == "detectors" and rule["chosen"] == "detectors"
    assert rule["best"]["f1"] - rule["detectors"]["f1"] <= rule["standard_error"]

    halves = [_policy_doc(i, [(5, 15)], [(5, 10)], [(10, 15)]) for i in range(10)]
    better = calibrate(halves, candidates=params)
    assert better.policy in ("union", "residual") and better.policy_rule["chosen"] == better.policy
    assert better.point.metrics.f1 == 1.0 and better.policy_rule["detectors"]["f1"] < 0.7

    # Detectors that find every span exactly, surprise only on clean text: they win outright, and the
    # record (the card's policy_rule row) says so rather than being left out.
    exact = [_policy_doc(i, [(5, 15)], [(5, 15)], [(30, 32)]) for i in range(10)]
    outright = calibrate(exact, candidates=params)
    assert outright.policy == "detectors" and outright.policy_rule["best"]["policy"] == "detectors"
    assert outright.policy_rule["chosen"] == "detectors" and outright.policy_rule["standard_error"] == 0.0
    assert outright.policy_rule["detectors"]["f1"] == 1.0


def test_a_surprise_threshold_that_does_not_carry_over_to_the_batch_falls_back_to_the_detectors():
    """Calibrated where surprise finds the detectors' misses and nothing else; a batch where the same
    threshold fires on a quarter of the clean text cannot have kept the collateral: detectors alone."""
    from curation.policy.calibration import SurpriseParams, calibrate
    from curation.policy.masking import checked_transfer, surprise_added_fraction

    params = [SurpriseParams(WindowSpec("fixed", 1, 1, "mean_nll"), "global", 1)]
    labeled = [_policy_doc(i, [(5, 15)], [(5, 10)], [(10, 15)]) for i in range(10)]
    calibration = calibrate(labeled, policies=("detectors", "union"), candidates=params)
    assert calibration.policy == "union"
    summary = {**calibration.to_dict(), "surprise_added_fraction": surprise_added_fraction(labeled, calibration)}
    applied = calibration.applied(calibration.to_dict())

    alike = [_policy_doc(i, [], [(5, 10)], [(10, 15)]) for i in range(10)]  # labels unknown: none passed
    kept, held = checked_transfer(applied, summary, alike, 0.03)
    assert kept.policy == "union" and held["held"] and held["applied_policy"] == "union"

    unlike = [_policy_doc(i, [], [(5, 10)], [(10, 15), (20, 30)]) for i in range(10)]
    fallback, failed = checked_transfer(applied, summary, unlike, 0.03)
    assert fallback.policy == "detectors" and not failed["held"]
    assert failed["batch_added_fraction"] > failed["limit"] and failed["calibrated_policy"] == "union"
