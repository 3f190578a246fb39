"""Asset checks: the release gates (blocking, ERROR severity) and data contracts."""

from checks import _warnings  # noqa: F401  (before the checks are defined)
from checks.contracts import document_contract, mask_span_contract, token_score_contract
from checks.release_gates import (
    calibration_coverage,
    calibration_health,
    masked_fraction_budget,
    residual_detector_audit,
    residual_independent_audit,
    residual_leak_scan,
    score_drift,
    surrogate_consistency,
)

ALL_CHECKS = [
    document_contract,
    token_score_contract,
    mask_span_contract,
    calibration_health,
    masked_fraction_budget,
    residual_leak_scan,
    residual_detector_audit,
    residual_independent_audit,
    surrogate_consistency,
    score_drift,
    calibration_coverage,
]
