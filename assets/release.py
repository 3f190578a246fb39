"""Dataset card and gated release."""

import json
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import polars as pl

from assets._common import DELIVERY_BATCHES, DELIVERY_GROUP, batch_config, markdown_table, one_connection
from checks._record import UPSTREAM
from curation.core.warehouse import CALIBRATION_BATCH
from curation.delivery.card import render_card
from curation.delivery.freshness import FINGERPRINT_TAG
from curation.delivery.stage import card_info, release_tables
from curation.delivery.writer import release_id_for, write_release
from curation.evaluation.leakage import card_evidence
from curation.gates import release_gates as gates
from curation.policy.stored import current_calibration
from resources import CurationSettings, Detectors, KeyVault, ReferenceModel

CARD_FILE = ".curation/cards/{batch}/README.md"


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


def _gate_status(warehouse, batch_id: str, digest: str, calibration_id: str) -> dict[str, dict]:
    """Gates the release rests on: the release-text gates for exactly this text (`digest`), the latest
    upstream gates of the batch, and the health of the calibration whose thresholds masked it."""
    status = gates.gate_status(warehouse, batch_id, UPSTREAM)
    status.update(gates.gate_status(warehouse, batch_id, digest))
    status.update(gates.gate_status(warehouse, CALIBRATION_BATCH, calibration_id))
    return status


def _record_fingerprint(context, warehouse, batch_id: str, release_id: str) -> None:
    """Remember the inputs' fingerprint `curation run` computed before launching this run (a run tag), so
    the next `curation run` over the same inputs knows this release is current (`curation.delivery.freshness`)."""
    fingerprint = context.run.tags.get(FINGERPRINT_TAG)
    if fingerprint:
        warehouse.append(
            "run_fingerprints",
            pl.DataFrame(
                {
                    "batch_id": [batch_id],
                    "fingerprint": [fingerprint],
                    "release_id": [release_id],
                    "run_id": [context.run.run_id],
                    "recorded_at": [datetime.now(UTC).replace(tzinfo=None)],
                }
            ),
        )


def _plots(config, calibration_id: str) -> dict[str, Path]:
    folder = config.path(f".curation/policy/plots/{calibration_id}")
    return {p.stem: p for p in sorted(folder.glob("*.png"))}


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
    status = _gate_status(warehouse, config.batch_id, digest, calibration_id)
    info = card_info(
        config,
        warehouse,
        model_key,
        versions=detectors.suite().versions,
        key_id=key.key_id,
        is_dev_key=key.is_dev,
        gates=status,
        convention_yaml=load_convention(config.surrogates.convention).to_yaml(),
        plots={name: f"plots/{path.name}" for name, path in _plots(config, calibration_id).items()},
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


def gate_table(status: dict[str, dict]) -> str:
    rows = [
        {"gate": name, "result": "passed" if s.get("passed") else "FAILED", "reason": s.get("reason") or ""}
        for name, s in sorted(status.items())
    ]
    return markdown_table(rows)


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
    model_key = reference_model.scorer().model_key
    calibration_id, _, _ = current_calibration(config, warehouse, model_key)
    digest = gates.content_digest(warehouse, config.batch_id)
    status = _gate_status(warehouse, config.batch_id, digest, calibration_id)
    problems = gates.missing_or_failed(status, gates.required_gates(config))
    upstream_failed = [n for n, s in status.items() if not s.get("passed") and not gates.is_advisory(n, s)]
    if problems or upstream_failed:
        blocked = {p.split(":")[0]: p.split(": ", 1)[1] for p in problems}
        blocked.update({n: status[n].get("reason") or "failed" for n in upstream_failed})
        context.log_event(
            dg.AssetObservation(
                asset_key="release",
                partition=config.batch_id,
                description="release blocked by " + ", ".join(sorted(blocked)),
                metadata={
                    "release_status": dg.MetadataValue.text("blocked"),
                    "blocked_by": dg.MetadataValue.text(", ".join(sorted(blocked))),
                    "gates": dg.MetadataValue.md(gate_table(status)),
                },
            )
        )
        raise dg.Failure(
            description="release blocked by " + "; ".join(f"{name} ({why})" for name, why in sorted(blocked.items())),
            metadata={"blocked_by": ", ".join(sorted(blocked)), "gates": dg.MetadataValue.md(gate_table(status))},
            allow_retries=False,
        )
    previous = warehouse.query(
        "SELECT release_id, path FROM deliveries WHERE content_digest = ? AND batch_ids = ? ORDER BY created_at DESC",
        [digest, config.batch_id],
    )
    for release_id, path in previous.iter_rows():
        if Path(path).exists():  # the same text was already delivered: releases are immutable, nothing to do
            context.log.info(f"release content unchanged; already delivered as {release_id}")
            _record_fingerprint(context, warehouse, config.batch_id, release_id)
            return dg.MaterializeResult(
                metadata={
                    "release_status": "released",
                    "release_id": release_id,
                    "path": dg.MetadataValue.path(path),
                    "reused": True,
                    "gates": dg.MetadataValue.md(gate_table(status)),
                }
            )
    tables = release_tables(config, warehouse)
    release_id = release_id_for([config.batch_id], f"{config.digest()}{digest[:16]}", datetime.now(UTC))
    card = config.path(CARD_FILE.format(batch=config.batch_id)).read_text(encoding="utf-8")
    plots = {f"plots/{p.name}": p for p in _plots(config, calibration_id).values()}
    plots.update(card_evidence(warehouse, config)[1])
    manifest_extra = {
        "batch_ids": [config.batch_id],
        "config": json.loads(json.dumps(config.to_dict(), default=str)),
        "versions": {"model_key": model_key},
        "gates": status,
    }
    signing_key = key_vault.key()  # signs the manifest; only its id is written into the release
    path = write_release(
        config.releases_path, release_id, tables, card, manifest_extra, extra_files=plots, signing_key=signing_key
    )
    warehouse.append(
        "deliveries",
        pl.DataFrame(
            {
                "release_id": [release_id],
                "created_at": [datetime.now(UTC).replace(tzinfo=None)],
                "path": [str(path)],
                "batch_ids": [config.batch_id],
                "n_documents": [max((t.height for t in tables.values()), default=0)],
                "gates": [json.dumps({k: v["passed"] for k, v in status.items()})],
                "content_digest": [digest],
            }
        ),
    )
    _record_fingerprint(context, warehouse, config.batch_id, release_id)
    context.log.info(f"release written to {path}")
    return dg.MaterializeResult(
        metadata={
            "release_status": "released",
            "release_id": release_id,
            "path": dg.MetadataValue.path(str(path)),
            "card": dg.MetadataValue.path(str(Path(path) / "README.md")),
            "rows": dg.MetadataValue.md(markdown_table([{"table": k, "rows": v.height} for k, v in tables.items()])),
            "gates_passed": len(status),
            "gates": dg.MetadataValue.md(gate_table(status)),
            "signed_with_key_id": signing_key.key_id,
        }
    )
