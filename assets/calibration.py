"""Threshold calibration on the labeled validation set (character-level pooled metrics)."""

import base64

import dagster as dg

from assets._common import GROUP, as_metadata
from curation.pipeline import VALIDATION, calibrate_stage, load_scored_docs
from curation.plots import save_calibration_plots
from resources import CurationSettings, ReferenceModel


@dg.asset(group_name=GROUP, kinds={"duckdb", "numpy"}, deps=["window_scores", "detector_spans", "validation_set"])
def threshold_calibration(settings: CurationSettings, reference_model: ReferenceModel) -> dg.MaterializeResult:
    """Joint search over masking policy (detectors / surprise / union / residual), window, consensus k and
    threshold on the calibration split, by character-level F1 within the collateral budget; per-kind
    thresholds; held-out metrics side by side; ROC, precision-recall and surprise-histogram plots."""
    config = settings.load()
    warehouse = settings.warehouse()
    model_key = reference_model.scorer().model_key
    outcome = calibrate_stage(config, warehouse, model_key)
    docs = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
    plots = save_calibration_plots(outcome.calibration, docs, config.path(f".curation/plots/{outcome.calibration_id}"))
    metadata = as_metadata(
        {
            "calibration_id": outcome.calibration_id,
            **outcome.calibration.to_dict(),
            "validation": outcome.validation,
            "heldout": outcome.heldout,
            "per_policy": outcome.per_policy,
        }
    )
    for name, path in plots.items():
        encoded = base64.b64encode(path.read_bytes()).decode()
        metadata[f"plot_{name}"] = dg.MetadataValue.md(f"![{name}](data:image/png;base64,{encoded})")
        metadata[f"plot_{name}_path"] = dg.MetadataValue.path(str(path))
    return dg.MaterializeResult(metadata=metadata)
