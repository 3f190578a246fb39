"""Release gates: blocking ERROR checks. A failed or raising gate stops every asset downstream,
so `release` is skipped; the release asset also re-verifies the recorded gates for its exact content."""

import dagster as dg

from checks._record import to_check_result
from curation import gates
from curation.pipeline import current_calibration
from resources import CurationSettings, Detectors, KeyVault, ReferenceModel


@dg.asset_check(asset="threshold_calibration", name=gates.CALIBRATION_HEALTH, blocking=True)
def calibration_health(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """Held-out coverage >= goal and collateral <= budget; surprise AUROC >= minimum."""
    config, warehouse = settings.load(), settings.warehouse()
    _, _, summary = current_calibration(config, warehouse, reference_model.scorer().model_key)
    return to_check_result(context, warehouse, config.batch_id, gates.calibration_health(summary, config))


@dg.asset_check(asset="mask_spans", name=gates.MASKED_FRACTION_BUDGET, blocking=True)
def masked_fraction_budget(context: dg.AssetCheckExecutionContext, settings: CurationSettings) -> dg.AssetCheckResult:
    """Masked fraction of the batch within [min, max]: catches masking everything or nothing."""
    config, warehouse = settings.load(), settings.warehouse()
    return to_check_result(context, warehouse, config.batch_id, gates.masked_fraction_budget(warehouse, config))


@dg.asset_check(asset="surrogate_view", name=gates.RESIDUAL_LEAK_SCAN, blocking=True)
def residual_leak_scan(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, key_vault: KeyVault
) -> dg.AssetCheckResult:
    """No masked or gold value survives in the release text (verbatim or case/space/punctuation-normalized).
    Findings are stored as keyed hashes and counts in `audit_findings`."""
    config, warehouse = settings.load(), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    result = gates.residual_leak_scan(warehouse, config.batch_id, key_vault.key().key, context.run.run_id)
    return to_check_result(context, warehouse, config.batch_id, result, digest)


@dg.asset_check(asset="surrogate_view", name=gates.RESIDUAL_DETECTOR_AUDIT, blocking=True)
def residual_detector_audit(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, detectors: Detectors
) -> dg.AssetCheckResult:
    """Detectors re-run on a sample of the redacted text; the residual rate's upper confidence bound
    (Clopper-Pearson) must stay under the budget."""
    config, warehouse = settings.load(), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    result = gates.residual_detector_audit(warehouse, config, detectors.suite())
    return to_check_result(context, warehouse, config.batch_id, result, digest)


@dg.asset_check(asset="surrogate_view", name=gates.SURROGATE_CONSISTENCY, blocking=True)
def surrogate_consistency(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, key_vault: KeyVault
) -> dg.AssetCheckResult:
    """One surrogate per (scope, type, value) and no original value reused as a surrogate."""
    config, warehouse = settings.load(), settings.warehouse()
    digest = gates.content_digest(warehouse, config.batch_id)
    with key_vault.open_vault() as vault:
        result = gates.surrogate_consistency(
            vault, key_vault.key().key, gates.original_values(warehouse, config.batch_id)
        )
    return to_check_result(context, warehouse, config.batch_id, result, digest)
