"""The learned PII tagger: trained from labeled sets on the validation scoring pass's hidden states,
then applied to each batch from its own scoring pass (no second model pass)."""

import dagster as dg

from assets._common import CALIBRATION_GROUP, DELIVERY_BATCHES, DELIVERY_GROUP, as_metadata, batch_config
from curation.tagger.stage import tagger_spans_stage, tagger_stage
from resources import CurationSettings, ReferenceModel


@dg.asset(
    group_name=CALIBRATION_GROUP, kinds={"pytorch", "duckdb"}, deps=["validation_scores", "validation_detections"]
)
def pii_tagger(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """A small head over the reference model's hidden states (tokens t..t+2) predicting the convention's
    entity labels, trained on the labeled sets' calibration splits (bundled public sets + validation);
    cached by the digest of its training data, the model key and its config. Thresholds per domain are
    chosen on out-of-fold predictions; training and held-out metrics per domain are its metadata."""
    config = settings.load()
    summary = tagger_stage(config, settings.warehouse(), reference_model.scorer().model_key, context.log.info)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(
    group_name=DELIVERY_GROUP,
    kinds={"pytorch", "duckdb"},
    deps=["reference_scores", "detector_spans", pii_tagger],
    partitions_def=DELIVERY_BATCHES,
)
def tagger_spans(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Per-token tagger probabilities of the batch (from the hidden states its scoring pass cached) and
    the spans they decode to, plus CredSweeper's spans on code, config and logs: facts beside the
    detectors' spans; calibration's chosen combination decides which are masked."""
    config = batch_config(context, settings)
    summary = tagger_spans_stage(config, settings.warehouse(), reference_model.scorer().model_key)
    return dg.MaterializeResult(metadata=as_metadata(summary))
