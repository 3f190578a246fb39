"""The calibration in force: the digest of everything a calibration depends on, and the stored calibration
made from exactly the current inputs (masking, the release card and the residual audit read it)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from curation.core.config import CurationConfig
from curation.core.warehouse import VALIDATION, Warehouse
from curation.policy.calibration import (
    SELECTION_RULES,
    AppliedCalibration,
    Calibration,
)


def calibration_input_digest(config: CurationConfig, warehouse: Warehouse, model_key: str) -> str:
    """Everything a calibration depends on; equal digests mean re-calibrating would change nothing."""
    import curation

    h = hashlib.sha256()
    h.update(
        json.dumps(
            [
                model_key,
                asdict(config.calibration),
                curation.__version__,
                config.calibration_domain,
                SELECTION_RULES,
            ],
            default=str,
        ).encode()
    )
    for row in warehouse.query("SELECT doc_id, sha256, split FROM validation_docs ORDER BY doc_id").iter_rows():
        h.update(repr(row).encode())
    spans = warehouse.query(
        'SELECT doc_id, "start", "end", label FROM detector_spans WHERE dataset = ? ORDER BY ALL', [VALIDATION]
    )
    for row in spans.iter_rows():
        h.update(repr(row).encode())
    return h.hexdigest()


def current_calibration(
    config: CurationConfig, warehouse: Warehouse, model_key: str
) -> tuple[str, AppliedCalibration, dict]:
    """The stored calibration made from exactly the current inputs (validation, scores, detectors)."""
    frame = warehouse.query(
        "SELECT calibration_id, summary FROM calibration WHERE model_key = ? AND input_digest = ? "
        "ORDER BY created_at DESC LIMIT 1",
        [model_key, calibration_input_digest(config, warehouse, model_key)],
    )
    if frame.height == 0:
        raise RuntimeError(
            f"no calibration matches the current validation data, detector spans and settings for {model_key}; "
            "materialize threshold_calibration first"
        )
    summary = json.loads(frame["summary"][0])
    return frame["calibration_id"][0], Calibration.applied(summary), summary
