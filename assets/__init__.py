"""Software-defined assets: one module per stage, thin wrappers over ``curation.pipeline``.

The calibration group (validation data, its scores and detector spans, the thresholds) is shared by every
delivery batch; the delivery group is partitioned by batch (`delivery_batch`, a dynamic partition)."""

from assets.calibration import threshold_calibration
from assets.detection import detector_spans, validation_detections
from assets.ingestion import raw_documents, validation_set
from assets.masking import mask_spans, redacted_view, training_view
from assets.release import dataset_card, release
from assets.scoring import reference_scores, validation_scores, window_scores
from assets.surrogates import surrogate_view
from assets.tagger import pii_tagger, tagger_spans

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
