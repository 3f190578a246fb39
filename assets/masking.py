"""Masking: the calibrated policy applied to the batch, and the training and redacted views."""

import dagster as dg

from assets._common import GROUP, as_metadata
from curation.pipeline import mask_stage, redacted_view_stage, training_view_stage
from resources import CurationSettings, ReferenceModel


@dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=["threshold_calibration", "detector_spans", "window_scores"])
def mask_spans(settings: CurationSettings, reference_model: ReferenceModel) -> dg.MaterializeResult:
    """Character spans to mask in each document: detector spans plus surprise spans selected by the stored
    calibration, with duplicate propagation within the configured scope. No model call: policy only."""
    config = settings.load()
    summary = mask_stage(config, settings.warehouse(), reference_model.scorer().model_key)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=[mask_spans])
def training_view(settings: CurationSettings) -> dg.MaterializeResult:
    """Original text with loss-mask spans: masked tokens stay in context but carry no training loss."""
    return dg.MaterializeResult(metadata=as_metadata(training_view_stage(settings.load(), settings.warehouse())))


@dg.asset(group_name=GROUP, kinds={"duckdb"}, deps=[mask_spans])
def redacted_view(settings: CurationSettings) -> dg.MaterializeResult:
    """Text with every masked span replaced by a typed tag such as `[EMAIL_ADDRESS]`."""
    return dg.MaterializeResult(metadata=as_metadata(redacted_view_stage(settings.load(), settings.warehouse())))
