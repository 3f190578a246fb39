"""Detectors: Presidio (offline spaCy model) plus validated credential and PII patterns."""

import dagster as dg

from assets._common import CALIBRATION_GROUP, DELIVERY_BATCHES, DELIVERY_GROUP, as_metadata, batch_config
from curation.core.warehouse import CORPUS, VALIDATION
from curation.detect.stage import detect_stage
from resources import CurationSettings, Detectors


@dg.asset(group_name=CALIBRATION_GROUP, kinds={"presidio", "duckdb"}, deps=["validation_set"])
def validation_detections(
    context: dg.AssetExecutionContext, settings: CurationSettings, detectors: Detectors
) -> dg.MaterializeResult:
    """Detector spans on the validation set: the detector side of every calibrated policy."""
    suite = detectors.suite()
    summary = detect_stage(
        settings.load(), settings.warehouse(), suite, progress=context.log.info, datasets=(VALIDATION,)
    )
    return dg.MaterializeResult(metadata=as_metadata({**summary, "versions": suite.versions}))


@dg.asset(
    group_name=DELIVERY_GROUP, kinds={"presidio", "duckdb"}, deps=["raw_documents"], partitions_def=DELIVERY_BATCHES
)
def detector_spans(
    context: dg.AssetExecutionContext, settings: CurationSettings, detectors: Detectors
) -> dg.MaterializeResult:
    """Candidate entity spans (label, score, source) from the detector suite on the batch. Stored as
    facts: the masking policy decides later which of them are masked."""
    suite = detectors.suite()
    config = batch_config(context, settings)
    summary = detect_stage(config, settings.warehouse(), suite, progress=context.log.info, datasets=(CORPUS,))
    return dg.MaterializeResult(metadata=as_metadata({**summary, "versions": suite.versions}))
