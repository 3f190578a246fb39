"""Release gates: blocking ERROR checks. A failed or raising gate stops every asset downstream,
so `release` is skipped; the release asset also re-verifies the recorded gates for its exact content."""

import dagster as dg

from assets._common import DELIVERY_BATCHES, batch_config, one_connection
from checks._record import to_check_result
from curation.core.warehouse import CALIBRATION_BATCH, stage_summary
from curation.gates import release_gates as gates
from curation.policy.stored import current_calibration
from resources import CurationSettings, Detectors, KeyVault, ReferenceModel


@dg.asset_check(asset="threshold_calibration", name=gates.CALIBRATION_HEALTH, blocking=True)
@one_connection
def calibration_health(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """Held-out coverage >= goal and collateral <= budget; surprise AUROC >= minimum. Recorded against the
    calibration id, since every batch masked with these thresholds rests on it."""
    config, warehouse = settings.load(), settings.warehouse()
    calibration_id, _, summary = current_calibration(config, warehouse, reference_model.scorer().model_key)
    result = gates.calibration_health(summary, config)
    return to_check_result(context, warehouse, CALIBRATION_BATCH, result, calibration_id)


@dg.asset_check(asset="window_scores", name=gates.SCORE_DRIFT, partitions_def=DELIVERY_BATCHES, blocking=False)
@one_connection
def score_drift(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """Warning (not a gate): population stability index of the batch's token surprise against the
    calibration data and the other batches. Above the limit, thresholds may no longer fit: recalibrate."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    result = gates.score_drift(warehouse, config, reference_model.scorer().model_key)
    return to_check_result(context, warehouse, config.batch_id, result, severity=dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset="mask_spans", name=gates.CALIBRATION_COVERAGE, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def calibration_coverage(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """Was the batch's domain calibrated on labeled data of its own? WARN when not (or too little of it):
    the calibration's collateral and recall were measured on other text. With `gates.require_domain_labels`
    it is an ERROR: blocking, so nothing downstream runs, and the release asset refuses the batch. (Blocking
    with a WARN result lets the run go on: Dagster stops downstream steps on ERROR failures only.)"""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    _, _, summary = current_calibration(config, warehouse, reference_model.scorer().model_key)
    result = gates.calibration_coverage(summary, config, stage_summary(warehouse, config.batch_id, "mask_spans"))
    required = config.gates.require_domain_labels
    severity = dg.AssetCheckSeverity.ERROR if required else dg.AssetCheckSeverity.WARN
    return to_check_result(context, warehouse, config.batch_id, result, severity=severity)


@dg.asset_check(asset="mask_spans", name=gates.MASKED_FRACTION_BUDGET, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def masked_fraction_budget(context: dg.AssetCheckExecutionContext, settings: CurationSettings) -> dg.AssetCheckResult:
    """Masked fraction of the batch within [min, max]: catches masking everything or nothing."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    return to_check_result(context, warehouse, config.batch_id, gates.masked_fraction_budget(warehouse, config))


@dg.asset_check(asset="surrogate_view", name=gates.RESIDUAL_LEAK_SCAN, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def residual_leak_scan(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, key_vault: KeyVault
) -> dg.AssetCheckResult:
    """No masked or gold value survives in the release text (verbatim or case/space/punctuation-normalized).
    Findings are stored as keyed hashes and counts in `audit_findings`."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    result = gates.residual_leak_scan(warehouse, config.batch_id, key_vault.key().key, context.run.run_id)
    return to_check_result(context, warehouse, config.batch_id, result, digest)


@dg.asset_check(
    asset="surrogate_view", name=gates.RESIDUAL_DETECTOR_AUDIT, partitions_def=DELIVERY_BATCHES, blocking=True
)
def residual_detector_audit(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, detectors: Detectors
) -> dg.AssetCheckResult:
    """Detectors re-run on the redacted text: every document of a batch no larger than the sample (judged on
    the measured residual rate), else a seeded sample whose Clopper-Pearson upper bound must stay under the
    budget. No shared connection: detection runs for seconds, and the other gates of the batch would wait
    for the warehouse's writer lock (measured: the independent audit took 8.9 s, 0.6 s of it its own)."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    result = gates.residual_detector_audit(warehouse, config, detectors.suite(), digest)
    return to_check_result(context, warehouse, config.batch_id, result, digest)


@dg.asset_check(
    asset="surrogate_view", name=gates.SURROGATE_CONSISTENCY, partitions_def=DELIVERY_BATCHES, blocking=True
)
def surrogate_consistency(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, key_vault: KeyVault
) -> dg.AssetCheckResult:
    """One surrogate per (scope, type, value) and no original value of this batch reused as a surrogate,
    judged on the surrogates this batch's text uses (not on other batches' history). No `one_connection`:
    it reads the warehouse, then the vault, never holding both (the lock order in docs/operations.md)."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    result, digest = gates.batch_surrogate_consistency(
        warehouse, key_vault.open_vault, key_vault.key().key, config.batch_id
    )
    return to_check_result(context, warehouse, config.batch_id, result, digest)


@dg.asset_check(
    asset="surrogate_view", name=gates.RESIDUAL_INDEPENDENT_AUDIT, partitions_def=DELIVERY_BATCHES, blocking=True
)
@one_connection
def residual_independent_audit(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """A signal independent of the detectors that made the masks: no word of a masked or supplied person's
    name is left in the release text of its scope (blocking); surprise at a recall-oriented threshold over
    the released characters, against its rate on clean text (reported, advisory)."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    result = gates.residual_independent_audit(warehouse, config, reference_model.scorer().model_key)
    return to_check_result(context, warehouse, config.batch_id, result, digest)
