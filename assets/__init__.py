"""Software-defined assets: one module per stage, thin wrappers over ``curation.pipeline``."""

from assets.calibration import threshold_calibration
from assets.detection import detector_spans
from assets.ingestion import raw_documents, validation_set
from assets.masking import mask_spans, redacted_view, training_view
from assets.release import dataset_card, release
from assets.scoring import reference_scores, window_scores
from assets.surrogates import surrogate_view

ALL_ASSETS = [
    raw_documents,
    validation_set,
    reference_scores,
    window_scores,
    detector_spans,
    threshold_calibration,
    mask_spans,
    training_view,
    redacted_view,
    surrogate_view,
    dataset_card,
    release,
]
