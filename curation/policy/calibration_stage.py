"""Threshold calibration: policy, window, consensus and threshold chosen on the validation set's
calibration split (``calibration``, ``calibration_candidates``, ``roc_points``), reused while its inputs
are unchanged."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import VALIDATION, Warehouse
from curation.detect.combination import choose_detectors, select_sources
from curation.policy.calibration import (
    Calibration,
    calibrate,
    evaluate,
    finite_or_none,
)
from curation.policy.documents import load_scored_docs
from curation.policy.extents import honorific_evidence
from curation.policy.masking import detector_collateral, detector_masked_fraction, surprise_added_fraction
from curation.policy.stored import calibration_input_digest


@dataclass
class CalibrationOutcome:
    calibration_id: str
    summary: dict
    calibration: Calibration | None = None  # None when a stored calibration was reused
    reused: bool = False


def calibrate_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> CalibrationOutcome:
    """Choose policy, window, consensus and threshold on the calibration split; report held-out.

    A stored calibration with the same input digest is reused (scores, labels, detector spans and
    settings all unchanged), so a re-run does no calibration work.
    """
    digest = calibration_input_digest(config, warehouse, model_key)
    stored = warehouse.query(
        "SELECT calibration_id, summary FROM calibration WHERE input_digest = ? ORDER BY created_at DESC LIMIT 1",
        [digest],
    )
    if stored.height:
        return CalibrationOutcome(stored["calibration_id"][0], json.loads(stored["summary"][0]), reused=True)
    calib_docs = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
    heldout_docs = load_scored_docs(warehouse, model_key, VALIDATION, split="heldout")
    combination, combinations, recognizers = choose_detectors(
        calib_docs, collateral_budget=config.calibration.collateral_budget, objective=config.calibration.objective
    )
    for doc in calib_docs + heldout_docs:
        doc.detected = select_sources(len(doc.text), doc.detected, combination)
    cfg = config.calibration
    calibration = calibrate(
        calib_docs,
        policies=cfg.policies,
        objective=cfg.objective,
        collateral_budget=cfg.collateral_budget,
        coverage_target=cfg.coverage_target,
        min_kind_docs=cfg.min_kind_docs,
    )
    calibration_id = f"cal-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
    validation = evaluate(calib_docs, calibration)
    heldout = evaluate(heldout_docs, calibration)
    per_policy = best_per_policy(calibration)
    summary = {
        **calibration.to_dict(),
        "validation": validation,
        "heldout": heldout,
        "per_policy": per_policy,
        "model_key": model_key,
        "domain": config.calibration_domain,
        "detector_combination": list(combination),
        "detector_combinations": combinations,
        "detector_recognizers": recognizers,
        # what the surprise part masks beyond the detectors on the calibration documents: the label-free
        # yardstick each batch's masking compares its own against (masking.surprise_transfer)
        "surprise_added_fraction": round(surprise_added_fraction(calib_docs, calibration), 6),
        # the same for the chosen detectors: their share of the calibration documents and their collateral
        # there (masking.detector_transfer)
        "detector_masked_fraction": round(detector_masked_fraction(calib_docs), 6),
        "detector_fpr": round(detector_collateral(calib_docs), 6),
        # whether the domain's labels count a name's title as private (masking takes it in with the name)
        "honorifics": honorific_evidence((d.text, d.gold) for d in calib_docs),
    }
    _store(warehouse, calibration_id, model_key, digest, calibration, summary)
    return CalibrationOutcome(calibration_id, summary, calibration)


def _store(
    warehouse: Warehouse, calibration_id: str, model_key: str, digest: str, calibration: Calibration, summary: dict
) -> None:
    """The calibration row, every candidate weighed, and up to 400 points of the winner's ROC sweep."""
    point = calibration.point
    warehouse.append(
        "calibration",
        pl.DataFrame(
            {
                "calibration_id": [calibration_id],
                "created_at": [datetime.now(UTC).replace(tzinfo=None)],
                "model_key": [model_key],
                "policy": [calibration.policy],
                "params": [json.dumps(calibration.params.to_dict())],
                "threshold": [finite_or_none(point.threshold)],
                "objective": [point.objective],
                "summary": [json.dumps(summary, default=str)],
                "input_digest": [digest],
            }
        ),
    )
    rows = [c.to_row() for c in calibration.candidates]
    warehouse.append(
        "calibration_candidates",
        pl.DataFrame(
            [
                (
                    calibration_id,
                    r["policy"],
                    r["params"],
                    r["threshold"],
                    r["tpr"],
                    r["fpr"],
                    r["precision"],
                    r["f1"],
                    r["surprise_auroc"],
                )
                for r in rows
            ],
            schema=[
                "calibration_id",
                "policy",
                "params",
                "threshold",
                "tpr",
                "fpr",
                "precision",
                "f1",
                "surprise_auroc",
            ],
            orient="row",
        ),
    )
    s = calibration.best_sweep
    keep = np.unique(np.linspace(0, max(len(s.thresholds) - 1, 0), num=min(len(s.thresholds), 400)).astype(int))
    warehouse.append(
        "roc_points",
        pl.DataFrame(
            {
                "calibration_id": [calibration_id] * len(keep),
                "threshold": [finite_or_none(v) for v in s.thresholds[keep]],
                "tpr": s.tpr[keep],
                "fpr": s.fpr[keep],
                "precision": s.precision[keep],
            }
        ),
    )


def best_per_policy(calibration: Calibration) -> list[dict]:
    """The best candidate of each policy (for the 'where surprise helps' comparison)."""
    best: dict[str, dict] = {}
    for candidate in calibration.candidates:
        row = candidate.to_row()
        if candidate.policy not in best or row["f1"] > best[candidate.policy]["f1"]:
            best[candidate.policy] = row
    return [best[p] for p in sorted(best)]
