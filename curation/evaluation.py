"""``curation eval``: calibrate on labeled data, predict spans on a gold set, write metrics.

Token scores are cached in a DuckDB file by (model key, text sha256), so evaluating again (another
policy, another split) does not run the model again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from curation.calibration import (
    POLICIES,
    Calibration,
    ScoredDoc,
    auroc,
    calibrate,
    evaluate,
    finite_or_none,
    pooled,
)
from curation.config import bundled
from curation.labeled import LabeledRecord, load_labeled
from curation.masking import combine, surprise_spans
from curation.pipeline import score_missing, sha256_text
from curation.scoring import ReferenceScorer, ScoringConfig
from curation.spans import Span, char_mask
from curation.warehouse import Warehouse, load_token_scores


def default_cache() -> Path:
    from curation.scoring import cache_root

    return cache_root() / "eval.duckdb"


def scored(records: list[LabeledRecord], scorer: ReferenceScorer, warehouse: Warehouse, suite) -> list[ScoredDoc]:
    """Attach cached (or freshly computed) token scores and detector spans to labeled records."""
    shas = [sha256_text(r.text) for r in records]
    score_missing(warehouse, scorer, list(zip(shas, [r.text for r in records], strict=True)))
    scores = load_token_scores(warehouse, scorer.model_key, shas)
    detected = suite.detect([r.text for r in records], [r.kind for r in records]) if suite else [[]] * len(records)
    return [
        ScoredDoc(r.id, r.text, r.kind, scores[s], list(r.spans), d)
        for r, s, d in zip(records, shas, detected, strict=True)
    ]


def predictions(docs: list[ScoredDoc], calibration: Calibration) -> dict[str, list[Span]]:
    return {d.doc_id: combine(calibration.policy, d.detected, surprise_spans(d, calibration)) for d in docs}


def per_label(docs: list[ScoredDoc], predicted: dict[str, list[Span]]) -> dict:
    """Recall per gold label and precision per predicted label (character level)."""
    recall_hit: dict[str, int] = {}
    recall_all: dict[str, int] = {}
    prec_hit: dict[str, int] = {}
    prec_all: dict[str, int] = {}
    for doc in docs:
        gold = np.array(char_mask(doc.gold, len(doc.text)), dtype=bool)
        pred = np.array(char_mask(predicted[doc.doc_id], len(doc.text)), dtype=bool)
        for s in doc.gold:
            recall_all[s.label] = recall_all.get(s.label, 0) + s.length
            recall_hit[s.label] = recall_hit.get(s.label, 0) + int(pred[s.start : s.end].sum())
        for s in predicted[doc.doc_id]:
            prec_all[s.label] = prec_all.get(s.label, 0) + s.length
            prec_hit[s.label] = prec_hit.get(s.label, 0) + int(gold[s.start : s.end].sum())
    return {
        "recall_by_gold_label": {k: round(recall_hit[k] / v, 4) for k, v in sorted(recall_all.items()) if v},
        "precision_by_predicted_label": {k: round(prec_hit[k] / v, 4) for k, v in sorted(prec_all.items()) if v},
    }


def run_eval(
    gold_path: Path,
    predictions_path: Path,
    metrics_path: Path,
    *,
    calibrate_on: Path | None = None,
    policy: str = "auto",
    warehouse_path: Path | None = None,
    scoring: ScoringConfig | None = None,
    collateral_budget: float = 0.03,
    use_detectors: bool = True,
) -> dict:
    """Calibrate on VAL, apply to GOLD, write predicted spans and metrics; returns the metrics."""
    started = time.perf_counter()
    gold_records = load_labeled(gold_path)
    val_records = load_labeled(calibrate_on or bundled("validation.jsonl"))
    scorer = ReferenceScorer(scoring or ScoringConfig())
    warehouse = Warehouse(warehouse_path or default_cache())
    suite = None
    if use_detectors:
        from curation.detectors import DetectorConfig, DetectorSuite

        suite = DetectorSuite(DetectorConfig())
    val_docs = scored(val_records, scorer, warehouse, suite)
    gold_docs = scored(gold_records, scorer, warehouse, suite)
    policies = POLICIES if policy == "auto" else (policy,)
    if not use_detectors:
        policies = ("surprise",)
    per_policy = {}
    chosen: Calibration | None = None
    for name in policies:
        cal = calibrate(val_docs, policies=(name,), collateral_budget=collateral_budget)
        per_policy[name] = {
            "params": cal.params.name,
            "surprise_auroc_gold": finite_or_none(auroc(*pooled(gold_docs, "surprise", cal.params))),
            "threshold": finite_or_none(cal.point.threshold),
            "surprise_auroc_validation": finite_or_none(cal.surprise_auroc),
            "validation": evaluate(val_docs, cal),
            "gold": evaluate(gold_docs, cal),
        }
        if chosen is None or cal.point.metrics.f1 > chosen.point.metrics.f1:
            chosen = cal
    assert chosen is not None
    predicted = predictions(gold_docs, chosen)
    predictions_path.parent.mkdir(parents=True, exist_ok=True)
    with predictions_path.open("w", encoding="utf-8") as f:
        for doc in gold_docs:
            spans = [
                {"start": s.start, "end": s.end, "label": s.label, "score": s.score, "source": s.source or "detector"}
                for s in predicted[doc.doc_id]
            ]
            f.write(json.dumps({"id": doc.doc_id, "spans": spans}) + "\n")
    chosen_gold = per_policy[chosen.policy]["gold"]
    metrics = {
        "summary": {
            "gold": str(gold_path),
            "calibrated_on": str(calibrate_on or "bundled validation.jsonl"),
            "records": len(gold_docs),
            "policy": chosen.policy,
            "params": chosen.params.name,
            "threshold": finite_or_none(chosen.point.threshold),
            "collateral_budget": collateral_budget,
            **{k: round(v, 4) for k, v in (chosen_gold["metrics"] or {}).items() if isinstance(v, float)},
            "surprise_auroc_gold": finite_or_none(auroc(*pooled(gold_docs, "surprise", chosen.params))),
            "seconds": round(time.perf_counter() - started, 1),
        },
        "per_policy": per_policy,
        "per_label": per_label(gold_docs, predicted),
        "model": scorer.description,
    }
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    metrics_path.write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
    return metrics
