"""Software-defined assets: one module per library package, each asset a thin wrapper over its package's
stage entry (``assets/score.py`` over ``curation.score.stage``, ``assets/policy.py`` over
``curation.policy.calibration_stage`` and ``masking_stage``, ...).

The calibration group (validation data, its scores and detector spans, the thresholds) is shared by every
delivery batch; the delivery group is partitioned by batch (`delivery_batch`, a dynamic partition).
The evaluation group (leakage report, canary probe) is kept out of `ALL_ASSETS`, so `curation_job` does
not pay for it; `evaluation_job` and `curation canary` run it."""

from assets.delivery import dataset_card, release
from assets.detect import detector_spans, validation_detections
from assets.evaluation import EVALUATION_ASSETS
from assets.ingest import raw_documents, validation_set
from assets.policy import mask_spans, redacted_view, threshold_calibration, training_view
from assets.score import reference_scores, validation_scores, window_scores
from assets.tagger import pii_tagger, tagger_spans
from assets.views import surrogate_view

ALL_ASSETS = [
    validation_set,
    validation_scores,
    validation_detections,
    pii_tagger,
    threshold_calibration,
    raw_documents,
    reference_scores,
    window_scores,
    detector_spans,
    tagger_spans,
    mask_spans,
    training_view,
    redacted_view,
    surrogate_view,
    dataset_card,
    release,
]

__all__ = ["ALL_ASSETS", "EVALUATION_ASSETS"]
