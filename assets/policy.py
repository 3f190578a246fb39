"""Policy: threshold calibration on the labeled validation set (shared by every batch), then the calibrated
policy applied to each batch (mask spans) and the training and redacted views made from it."""

import base64

import dagster as dg

from assets._common import (
    CALIBRATION_GROUP,
    DELIVERY_BATCHES,
    DELIVERY_GROUP,
    as_metadata,
    batch_config,
    markdown_table,
    one_connection,
)
from curation.core.warehouse import VALIDATION
from curation.policy.calibration_stage import calibrate_stage
from curation.policy.documents import load_scored_docs
from curation.policy.masking_stage import mask_stage, redacted_view_stage, training_view_stage
from curation.policy.plots import save_calibration_plots
from resources import CurationSettings, ReferenceModel


@dg.asset(
    group_name=CALIBRATION_GROUP,
    kinds={"duckdb", "numpy"},
    deps=["validation_set", "validation_scores", "validation_detections", "pii_tagger"],
)
def threshold_calibration(settings: CurationSettings, reference_model: ReferenceModel) -> dg.MaterializeResult:
    """Joint search over masking policy (detectors / surprise / union / residual), window, consensus k and
    threshold on the calibration split, by character-level F1 within the collateral budget; per-kind
    thresholds; held-out metrics side by side; ROC, precision-recall and surprise-histogram plots. Shared by
    every delivery batch; the recalibration schedule re-runs it."""
    config = settings.load()
    warehouse = settings.warehouse()
    model_key = reference_model.scorer().model_key
    outcome = calibrate_stage(config, warehouse, model_key)
    plot_dir = config.path(f".curation/policy/plots/{outcome.calibration_id}")
    if outcome.calibration is not None:
        docs = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
        save_calibration_plots(outcome.calibration, docs, plot_dir)
    summary = {key: value for key, value in outcome.summary.items() if key != "model_key"}
    metadata = {"metrics": dg.MetadataValue.md(_metrics_table(summary))}
    metadata.update(as_metadata({"calibration_id": outcome.calibration_id, "reused_stored": outcome.reused, **summary}))
    images = []
    for path in sorted(plot_dir.glob("*.png")):
        encoded = base64.b64encode(path.read_bytes()).decode()
        images.append(f"### {path.stem}\n\n![{path.stem}](data:image/png;base64,{encoded})\n")
        metadata[f"plot_{path.stem}_path"] = dg.MetadataValue.path(str(path))
    if images:
        metadata["plots"] = dg.MetadataValue.md("\n".join(images))
    # The same calibration (same inputs) is the same data: batches masked with it stay in sync.
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(outcome.calibration_id))


def _metrics_table(summary: dict) -> str:
    """Validation next to held-out (character-level pooled), 4 significant digits."""
    val = (summary.get("validation") or {}).get("metrics") or {}
    held = (summary.get("heldout") or {}).get("metrics") or {}
    rows = [{"metric": k, "validation": val.get(k), "held-out": held.get(k)} for k in ("tpr", "fpr", "precision", "f1")]
    rows.append({"metric": "surprise AUROC", "validation": summary.get("surprise_auroc"), "held-out": None})
    return markdown_table(rows)


@dg.asset(
    group_name=DELIVERY_GROUP,
    kinds={"duckdb"},
    deps=["threshold_calibration", "detector_spans", "tagger_spans", "window_scores"],
    partitions_def=DELIVERY_BATCHES,
)
@one_connection
def mask_spans(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Character spans to mask in each document: detector spans plus surprise spans selected by the stored
    calibration, with duplicate propagation within the configured scope. No model call: policy only."""
    config = batch_config(context, settings)
    summary = mask_stage(config, settings.warehouse(), reference_model.scorer().model_key)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(group_name=DELIVERY_GROUP, kinds={"duckdb"}, deps=[mask_spans], partitions_def=DELIVERY_BATCHES)
@one_connection
def training_view(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Original text with loss-mask spans: masked tokens stay in context but carry no training loss."""
    summary = training_view_stage(batch_config(context, settings), settings.warehouse())
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(group_name=DELIVERY_GROUP, kinds={"duckdb"}, deps=[mask_spans], partitions_def=DELIVERY_BATCHES)
@one_connection
def redacted_view(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Text with every masked span replaced by a typed tag such as `[EMAIL_ADDRESS]`."""
    summary = redacted_view_stage(batch_config(context, settings), settings.warehouse())
    return dg.MaterializeResult(metadata=as_metadata(summary))
