"""Before/after of the one-standard-error rules on a pipeline warehouse's own validation split: the detector
combination and the masking policy the best calibration F1 alone picks against the ones the rules pick,
each measured on the held-out split (the bundled ``support`` calibration after ``make run``).

    .venv/bin/python scripts/selection_rules_warehouse.py .curation/warehouse.duckdb

Reads the latest calibration's model key and collateral budget, recomputes both choices on the calibration
split (no model calls) and prints a markdown table.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from curation.core.config import CalibrationConfig
from curation.core.spans import char_mask
from curation.core.warehouse import VALIDATION, Warehouse
from curation.detect.combination import COMBINATIONS, choose_combination, select_sources
from curation.policy.calibration import calibrate, char_metrics, evaluate
from curation.policy.documents import load_scored_docs


def _detector_metrics(docs, combination: tuple[str, ...]) -> str:
    predicted = np.concatenate(
        [np.array(char_mask(select_sources(len(d.text), d.detected, combination), len(d.text)), bool) for d in docs]
    )
    gold = np.concatenate([np.array(char_mask(d.gold, len(d.text)), bool) for d in docs])
    return _fmt(char_metrics(predicted, gold).to_dict())


def _fmt(m: dict) -> str:
    return f"{m['f1']:.3f} ({m['precision']:.3f} / {m['tpr']:.3f}), {m['fpr']:.4f}"


def main(path: Path) -> None:
    warehouse = Warehouse(path)
    latest = warehouse.query("SELECT summary FROM calibration ORDER BY created_at DESC LIMIT 1")
    if not latest.height:
        sys.exit(f"{path}: no calibration yet; run `make run` (or `curation run`) first")
    summary = json.loads(latest["summary"][0])
    model_key, budget = summary["model_key"], CalibrationConfig().collateral_budget  # the bundled config's
    calib = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
    heldout = load_scored_docs(warehouse, model_key, VALIDATION, split="heldout")
    chosen, table = choose_combination(calib, collateral_budget=budget)
    by_name = {"+".join(c): c for c in COMBINATIONS}
    best = by_name[next(r["combination"] for r in table if r["best_f1"])]
    held = "held-out F1 (P / R), FPR"
    print(
        f"| choice ({len(calib)} calibration / {len(heldout)} held-out documents) | best calibration F1 picks "
        f"| {held} | one-SE rule picks | {held} |"
    )
    print("|---|---|---|---|---|")
    print(
        f"| detector combination | `{'+'.join(best)}` | {_detector_metrics(heldout, best)} "
        f"| `{'+'.join(chosen)}` | {_detector_metrics(heldout, chosen)} |"
    )
    for doc in calib + heldout:
        doc.detected = select_sources(len(doc.text), doc.detected, chosen)
    calibration = calibrate(calib, collateral_budget=budget)
    rule = calibration.policy_rule or {"best": {"policy": calibration.policy}}
    best_policy = rule["best"]["policy"]
    before = (
        calibration
        if best_policy == calibration.policy
        else calibrate(calib, policies=(best_policy,), collateral_budget=budget)
    )
    print(
        f"| masking policy | `{best_policy}` | {_fmt(evaluate(heldout, before)['metrics'])} "
        f"| `{calibration.policy}` | {_fmt(evaluate(heldout, calibration)['metrics'])} |"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else ".curation/warehouse.duckdb"))
