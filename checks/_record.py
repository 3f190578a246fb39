"""Turn a gate result into a blocking check result and remember it in the warehouse."""

from __future__ import annotations

import dagster as dg

from assets._common import PARTITION_TAG, as_metadata, release_blocked_observation
from curation.core.warehouse import Warehouse
from curation.delivery.deliver import UPSTREAM
from curation.gates.release_gates import GateResult, record_gate, run_blocking_failures


def to_check_result(
    context: dg.AssetCheckExecutionContext,
    warehouse: Warehouse,
    batch_id: str,
    result: GateResult,
    digest: str = UPSTREAM,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    """Record the gate (keyed by the content it judged) and report it as a person reads it: the reason,
    what was measured, the limit, then the counts/rates as a table. A failed blocking gate also marks the
    batch's release partition as blocked (an observation naming the gate and its reason)."""
    record_gate(warehouse, batch_id, digest, result, context.run.run_id)
    explanation = {k: result.detail.get(k) for k in ("reason", "measured", "limit")}
    rest = {k: v for k, v in result.detail.items() if v is not None and k not in explanation}
    metadata = {k: dg.MetadataValue.text(str(v or "n/a")) for k, v in explanation.items()}
    metadata.update(as_metadata(rest))
    if digest != UPSTREAM:
        metadata["content_digest"] = digest[:16]
    warns = severity == dg.AssetCheckSeverity.WARN
    verdict = "passed" if result.passed else "WARN" if warns else "FAILED"
    line = f"{'check' if warns else 'gate'} {result.name} {verdict}: {explanation['reason'] or 'no reason given'} "
    line += f"(measured: {explanation['measured'] or 'n/a'}; limit: {explanation['limit'] or 'n/a'})"
    log = context.log.info if result.passed else context.log.warning if warns else context.log.error
    log(line)
    if not result.passed and severity == dg.AssetCheckSeverity.ERROR:
        blocked_by = run_blocking_failures(warehouse, batch_id, context.run.run_id)
        blocked_by.setdefault(result.name, explanation["reason"] or "failed")
        mark_release_blocked(context, blocked_by)
    return dg.AssetCheckResult(
        passed=result.passed, severity=severity, metadata=metadata, description=explanation["reason"] or None
    )


def mark_release_blocked(context, blocked_by: dict[str, str]) -> None:
    """Mark the run's `release` partition blocked by every gate that failed in this run so far (so the
    latest observation, which the partition's panel shows, names every one)."""
    partition = context.run.tags.get(PARTITION_TAG)
    if partition:
        context.op_execution_context.log_event(release_blocked_observation(partition, blocked_by))
