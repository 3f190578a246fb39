"""Dataset card and gated release."""


import dagster as dg

from assets._common import (
    DELIVERY_BATCHES,
    DELIVERY_GROUP,
    batch_config,
    gate_table,
    markdown_table,
    one_connection,
    release_blocked_observation,
)
from curation.delivery.card import render_card
from curation.delivery.deliver import CARD_FILE, ReleaseBlocked, calibration_plots, deliver, gate_status
from curation.delivery.freshness import FINGERPRINT_TAG
from curation.delivery.stage import card_info
from curation.evaluation.leakage import card_evidence
from curation.gates import release_gates as gates
from curation.policy.stored import current_calibration
from resources import CurationSettings, Detectors, KeyVault, ReferenceModel

# A release follows only a full set of passed blocking gates: never in a run whose audit failed (blocking
# checks stop the run), and never automatically after such a run (this condition). Checks are partitioned
# like the assets they guard, so each batch's results are its own; the release asset still re-verifies the
# recorded gates of its own batch and exact content before writing anything.
# The shared calibration is an input but not a trigger: every batch run may re-materialize it, and a
# re-release of an earlier batch whose masks and views did not change has nothing to do (it would find its
# text already delivered). A new calibration reaches a batch through its masks, when that batch is re-run.
RELEASE_AUTOMATION = dg.AutomationCondition.eager().ignore(
    dg.AssetSelection.assets("threshold_calibration")
) & dg.AutomationCondition.all_deps_blocking_checks_passed()


@dg.asset(group_name=DELIVERY_GROUP, kinds={"markdown"}, deps=["surrogate_view"], partitions_def=DELIVERY_BATCHES)
@one_connection
def dataset_card(
    context: dg.AssetExecutionContext,
    settings: CurationSettings,
    reference_model: ReferenceModel,
    detectors: Detectors,
    key_vault: KeyVault,
) -> dg.MaterializeResult:
    """Hugging Face-style dataset card: counts, the redaction convention, models and thresholds, validation
    and held-out metrics with plots, residual audit with its confidence bound, gates, limitations."""
    from curation.views.convention import load_convention

    config, warehouse = batch_config(context, settings), settings.warehouse()
    model_key = reference_model.scorer().model_key
    key = key_vault.key()
    calibration_id, _, _ = current_calibration(config, warehouse, model_key)
    digest = gates.content_digest(warehouse, config.batch_id)
    status = gate_status(warehouse, config.batch_id, digest, calibration_id)
    info = card_info(
        config,
        warehouse,
        model_key,
        versions=detectors.suite().versions,
        key_id=key.key_id,
        is_dev_key=key.is_dev,
        gates=status,
        convention_yaml=load_convention(config.surrogates.convention).to_yaml(),
        plots={name: f"plots/{path.name}" for name, path in calibration_plots(config, calibration_id).items()},
    )
    info.privacy_evidence, _ = card_evidence(warehouse, config)  # leakage report / canary probe, when they ran
    card = render_card(info)
    path = config.path(CARD_FILE.format(batch=config.batch_id))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(card, encoding="utf-8")
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(str(path)), "card": dg.MetadataValue.md(card_for_ui(card))}
    )


def card_for_ui(card: str) -> str:
    """The whole card, summary first: its YAML front matter (Hugging Face metadata) moved to the end as a
    code block, since the UI would render it as a bullet list."""
    if card.startswith("---\n") and "\n---\n" in card[4:]:
        front, body = card[4:].split("\n---\n", 1)
        return f"{body.lstrip()}\n\n## Card front matter (YAML)\n\n```yaml\n{front}\n```\n"
    return card


@dg.asset(
    group_name=DELIVERY_GROUP,
    kinds={"parquet"},
    # Direct edges to the gated assets, so the automation condition sees their blocking checks.
    deps=[dataset_card, "surrogate_view", "mask_spans", "threshold_calibration"],
    partitions_def=DELIVERY_BATCHES,
    automation_condition=RELEASE_AUTOMATION,
)
def release(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel, key_vault: KeyVault
) -> dg.MaterializeResult:
    """Parquet shards + card + manifest (sha256 per file, counts, config, versions, every gate result),
    written atomically to `releases/<release_id>/`. Refuses unless every gate passed for this exact text."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    try:
        delivery = deliver(
            config,
            warehouse,
            model_key=reference_model.scorer().model_key,
            signing_key=key_vault.key,
            fingerprint=context.run.tags.get(FINGERPRINT_TAG),
            run_id=context.run.run_id,
        )
    except ReleaseBlocked as refused:
        context.log_event(release_blocked_observation(config.batch_id, refused.blocked, refused.status))
        raise dg.Failure(
            description=str(refused),
            metadata={"blocked_by": ", ".join(sorted(refused.blocked)), "gates": gate_table(refused.status)},
            allow_retries=False,
        ) from None
    metadata = {
        "release_status": "released",
        "release_id": delivery.release_id,
        "path": dg.MetadataValue.path(str(delivery.path)),
        "gates": gate_table(delivery.status),
    }
    if delivery.reused:
        context.log.info(f"release content unchanged; already delivered as {delivery.release_id}")
        return dg.MaterializeResult(metadata={**metadata, "reused": True})
    context.log.info(f"release written to {delivery.path}")
    rows = [{"table": name, "rows": n} for name, n in delivery.rows.items()]
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "card": dg.MetadataValue.path(str(delivery.path / "README.md")),
            "rows": dg.MetadataValue.md(markdown_table(rows)),
            "gates_passed": len(delivery.status),
            "signed_with_key_id": delivery.signed_with_key_id,
        }
    )
