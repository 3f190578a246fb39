"""Masking: the calibrated policy applied to the batch, and the training and redacted views."""

import dagster as dg

from assets._common import DELIVERY_BATCHES, DELIVERY_GROUP, as_metadata, batch_config, one_connection
from curation.policy.masking_stage import mask_stage, redacted_view_stage, training_view_stage
from resources import CurationSettings, ReferenceModel


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
