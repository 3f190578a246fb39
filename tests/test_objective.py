"""The calibration objective (issue 34): f1, f2, and recall_at_budget, the most recall whose collateral's upper
bound over documents stays within the budget, in both places calibration chooses (the threshold and the
detector combination), the config key and ``curation eval --objective``."""

from __future__ import annotations

import numpy as np
import pytest

from curation.cli import OBJECTIVE_CHOICES, build_parser
from curation.core.config import ConfigError, config_from_dict
from curation.core.spans import Span
from curation.detect.combination import choose_combination
from curation.policy.calibration import OBJECTIVES, choose_point, f_beta, sweep

BUDGET = 0.03


def _docs_with_one_noisy(n_docs: int = 20, size: int = 200) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Every document: 20 private characters scored 0.9; 180 clean ones at 0.1. One document also has 60
    clean characters scored 0.5, a second group of 20 private ones 0.5 too. Masking at 0.5 finds everything
    at pooled collateral 60 / 3600 = 0.017 (inside the budget), but that collateral sits in one document:
    resampling documents puts it well above the budget."""
    scores, gold = [], []
    for d in range(n_docs):
        s = np.full(size, 0.1)
        g = np.zeros(size, bool)
        s[:20], g[:20] = 0.9, True
        if d == 0:
            s[20:80] = 0.5  # clean, but scores like the second group
        s[180:200], g[180:200] = 0.5, True
        scores.append(s)
        gold.append(g)
    return np.concatenate(scores), np.concatenate(gold), [size] * n_docs


def test_recall_at_budget_bounds_collateral_over_documents() -> None:
    scores, gold, sizes = _docs_with_one_noisy()
    result = sweep(scores, gold, sizes)
    pointwise = choose_point(result, "max_tpr_at_fpr", BUDGET)
    assert pointwise.threshold == 0.5 and pointwise.metrics.tpr == 1.0 and pointwise.metrics.fpr < BUDGET
    bounded = choose_point(result, "recall_at_budget", BUDGET)
    assert bounded.threshold == 0.9 and bounded.metrics.tpr == 0.5  # the bound does not hold at 0.5
    assert bounded.fpr_upper is not None and bounded.fpr_upper <= BUDGET
    assert result.fpr_upper(np.array([list(result.thresholds).index(0.5)]))[0] > BUDGET
    assert bounded.to_dict()["fpr_upper"] == round(bounded.fpr_upper, 6)
    # collateral spread over every document bounds tightly: the same pooled rate is then accepted
    spread = sweep(np.where((scores == 0.5) & ~gold, 0.1, scores), gold, sizes)
    assert choose_point(spread, "recall_at_budget", BUDGET).metrics.tpr == 1.0


def test_f2_trades_precision_for_recall_where_f1_does_not() -> None:
    # 10 private characters at 0.9; at 0.5, 10 more private and 25 clean ones (of 1,000)
    scores = np.r_[np.full(10, 0.9), np.full(10, 0.5), np.full(25, 0.5), np.full(955, 0.1)]
    gold = np.r_[np.ones(20, bool), np.zeros(980, bool)]
    result = sweep(scores, gold)
    assert choose_point(result, "f1", BUDGET).threshold == 0.9
    assert choose_point(result, "f2", BUDGET).threshold == 0.5
    assert f_beta(0.5, 1.0, 2.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1))


class _Doc:
    def __init__(self, text: str, gold: list[Span], detected: list[Span]) -> None:
        self.text, self.gold, self.detected = text, gold, detected


def _tagger_or_union_docs() -> list[_Doc]:
    """12 documents of 400 characters, two 10-character names each: the tagger finds 15 of the 20 name
    characters and nothing else; the rules find both names and 10 clean characters (of 380)."""
    docs = []
    for _ in range(12):
        gold = [Span(10, 20, "PERSON"), Span(100, 110, "PERSON")]
        rules = [Span(10, 20, "PERSON", source="pattern:x"), Span(100, 110, "PERSON", source="pattern:x")]
        rules.append(Span(200, 210, "PERSON", source="pattern:x"))
        tagger = [Span(10, 20, "PERSON", source="tagger"), Span(100, 105, "PERSON", source="tagger")]
        docs.append(_Doc("x" * 400, gold, rules + tagger))
    return docs


def test_combination_choice_follows_the_objective() -> None:
    """The tagger finds three quarters of the names and nothing else (F1 0.857); with the rules added every
    name is found, plus 10 clean characters of 380 in every document (F1 0.8, collateral 0.026, evenly
    spread, so its bound holds). F1 keeps the tagger alone; recall_at_budget buys the recall."""
    docs, combos = _tagger_or_union_docs(), (("tagger",), ("rules", "tagger"))
    assert choose_combination(docs, combos, BUDGET, "f1")[0] == ("tagger",)
    by_recall, table = choose_combination(docs, combos, BUDGET, "recall_at_budget")
    assert by_recall == ("rules", "tagger")
    assert [row["fpr_upper"] for row in table] == [0.0, round(10 / 380, 4)]
    assert [row["chosen"] for row in table] == [False, True]
    # a budget below the rules' collateral: the tagger alone is the only combination within it
    assert choose_combination(docs, combos, 0.02, "recall_at_budget")[0] == ("tagger",)


def test_objective_is_a_config_key_and_an_eval_flag() -> None:
    assert OBJECTIVE_CHOICES == OBJECTIVES
    assert config_from_dict({"calibration": {"objective": "recall_at_budget"}}).calibration.objective == (
        "recall_at_budget"
    )
    with pytest.raises(ConfigError, match=r"calibration\.objective must be one of"):
        config_from_dict({"calibration": {"objective": "recall"}})
    args = build_parser().parse_args(["eval", "g.jsonl", "--predictions", "p", "--metrics", "m", "--objective", "f2"])
    assert args.objective == "f2"
    assert build_parser().parse_args(["eval", "g.jsonl", "--predictions", "p", "--metrics", "m"]).objective == "f1"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "g.jsonl", "--predictions", "p", "--metrics", "m", "--objective", "recall"])


def test_the_card_says_what_the_objective_bought() -> None:
    from curation.delivery.stage import _objective_line

    bounded = _objective_line({"tpr": 0.912, "fpr": 0.0183, "fpr_upper": 0.0291}, 0.03)
    assert bounded == (
        "recall 0.912 at collateral 0.0183 on the calibration labels (95% upper bound over documents 0.0291, "
        "budget 0.03)"
    )
    assert _objective_line({"tpr": 0.9, "fpr": 0.01}, 0.03).endswith("(measured, budget 0.03)")


def test_f2_does_not_buy_recall_past_the_budget() -> None:
    """With the rules' collateral at 10 / 380 clean characters (0.026) F2 takes the union; with a budget
    below it, the tagger alone, however much more F2 the union scores."""
    docs, combos = _tagger_or_union_docs(), (("tagger",), ("rules", "tagger"))
    assert choose_combination(docs, combos, BUDGET, "f2")[0] == ("rules", "tagger")
    assert choose_combination(docs, combos, 0.02, "f2")[0] == ("tagger",)
