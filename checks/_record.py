"""Turn a gate result into a blocking check result and remember it in the warehouse."""

from __future__ import annotations

import dagster as dg

from assets._common import as_metadata
from curation.gates import GateResult, record_gate
from curation.warehouse import Warehouse

UPSTREAM = "upstream"


def to_check_result(
    context: dg.AssetCheckExecutionContext,
    warehouse: Warehouse,
    batch_id: str,
    result: GateResult,
    digest: str = UPSTREAM,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    """Record the gate (keyed by the content it judged) and report counts/rates only."""
    record_gate(warehouse, batch_id, digest, result, context.run.run_id)
    metadata = as_metadata({k: v for k, v in result.detail.items() if v is not None})
    if digest != UPSTREAM:
        metadata["content_digest"] = digest[:16]
    return dg.AssetCheckResult(passed=result.passed, severity=severity, metadata=metadata)
