"""Detectors: Presidio (offline spaCy model) plus validated credential and PII patterns."""

import dagster as dg

from assets._common import GROUP, as_metadata
from curation.pipeline import detect_stage
from resources import CurationSettings, Detectors


@dg.asset(group_name=GROUP, kinds={"presidio", "duckdb"}, deps=["raw_documents", "validation_set"])
def detector_spans(
    context: dg.AssetExecutionContext, settings: CurationSettings, detectors: Detectors
) -> dg.MaterializeResult:
    """Candidate entity spans (label, score, source) from the detector suite on the batch and on the
    validation set. Stored as facts: the masking policy decides later which of them are masked."""
    suite = detectors.suite()
    summary = detect_stage(settings.load(), settings.warehouse(), suite, progress=context.log.info)
    return dg.MaterializeResult(metadata=as_metadata({**summary, "versions": suite.versions}))
