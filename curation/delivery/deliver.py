"""Delivering a batch: the gates a release rests on, the refusal when one is missing or failed, reuse of an
identical earlier delivery, the atomic write and its bookkeeping (``deliveries``, ``run_fingerprints``).

The Dagster ``release`` asset calls :func:`deliver` and nothing else; everything a release decides is here,
so a run without Dagster decides it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, Warehouse
from curation.delivery.tables import release_tables
from curation.delivery.writer import release_id_for, write_release
from curation.gates import release_gates as gates

UPSTREAM = "upstream"  # the digest key of gates that judged a batch's upstream assets, not its release text
CARD_FILE = ".curation/cards/{batch}/README.md"


class ReleaseBlocked(Exception):
    """The release is refused: ``blocked`` names each gate missing or failed and why (never a value)."""

    def __init__(self, blocked: dict[str, str], status: dict[str, dict]) -> None:
        self.blocked, self.status = blocked, status
        super().__init__("release blocked by " + "; ".join(f"{name} ({why})" for name, why in sorted(blocked.items())))


@dataclass
class Delivery:
    """What a delivery wrote (or found already written): where, the gates it rests on, rows per table."""

    release_id: str
    path: Path
    reused: bool
    status: dict[str, dict]
    rows: dict[str, int] = field(default_factory=dict)
    signed_with_key_id: str | None = None


def gate_status(warehouse: Warehouse, batch_id: str, digest: str, calibration_id: str) -> dict[str, dict]:
    """Gates the release rests on: the release-text gates for exactly this text (`digest`), the latest
    upstream gates of the batch, and the health of the calibration whose thresholds masked it."""
    status = gates.gate_status(warehouse, batch_id, UPSTREAM)
    status.update(gates.gate_status(warehouse, batch_id, digest))
    status.update(gates.gate_status(warehouse, CALIBRATION_BATCH, calibration_id))
    return status


def blocking_gates(config: CurationConfig, status: dict[str, dict]) -> dict[str, str]:
    """Gate name -> why it blocks the release: required gates with no result or a failed one, and any other
    failed gate that is not advisory. Empty when the release may go."""
    problems = gates.missing_or_failed(status, gates.required_gates(config))
    blocked = {p.split(":")[0]: p.split(": ", 1)[1] for p in problems}
    for name, detail in status.items():
        if not detail.get("passed") and not gates.is_advisory(name, detail):
            blocked[name] = detail.get("reason") or "failed"
    return blocked


def calibration_plots(config: CurationConfig, calibration_id: str) -> dict[str, Path]:
    """The calibration's PNG plots by name (the card links them, the release ships them)."""
    folder = config.path(f".curation/policy/plots/{calibration_id}")
    return {p.stem: p for p in sorted(folder.glob("*.png"))}


def record_fingerprint(
    warehouse: Warehouse, batch_id: str, release_id: str, fingerprint: str | None, run_id: str | None
) -> None:
    """Remember the inputs' fingerprint `curation run` computed before launching the run, so the next
    `curation run` over the same inputs knows this release is current (`curation.delivery.freshness`)."""
    if not fingerprint:
        return
    warehouse.append(
        "run_fingerprints",
        pl.DataFrame(
            {
                "batch_id": [batch_id],
                "fingerprint": [fingerprint],
                "release_id": [release_id],
                "run_id": [run_id],
                "recorded_at": [datetime.now(UTC).replace(tzinfo=None)],
            }
        ),
    )


def previous_delivery(warehouse: Warehouse, batch_id: str, digest: str) -> tuple[str, Path] | None:
    """An earlier delivery of exactly this text that is still on disk (releases are immutable)."""
    previous = warehouse.query(
        "SELECT release_id, path FROM deliveries WHERE content_digest = ? AND batch_ids = ? ORDER BY created_at DESC",
        [digest, batch_id],
    )
    for release_id, path in previous.iter_rows():
        if Path(path).exists():
            return release_id, Path(path)
    return None


def deliver(
    config: CurationConfig,
    warehouse: Warehouse,
    *,
    model_key: str,
    signing_key: Callable[[], object],
    fingerprint: str | None = None,
    run_id: str | None = None,
) -> Delivery:
    """Release the batch's current text: refuse (:class:`ReleaseBlocked`) unless every gate passed for this
    exact text, reuse an identical earlier delivery, else write Parquet shards + card + signed manifest
    atomically to `releases/<release_id>/` and record it. ``signing_key`` is read only once the gates pass."""
    from curation.evaluation.leakage import card_evidence
    from curation.policy.stored import current_calibration

    calibration_id, _, _ = current_calibration(config, warehouse, model_key)
    digest = gates.content_digest(warehouse, config.batch_id)
    status = gate_status(warehouse, config.batch_id, digest, calibration_id)
    blocked = blocking_gates(config, status)
    if blocked:
        raise ReleaseBlocked(blocked, status)
    earlier = previous_delivery(warehouse, config.batch_id, digest)
    if earlier is not None:  # the same text was already delivered: nothing to do
        record_fingerprint(warehouse, config.batch_id, earlier[0], fingerprint, run_id)
        return Delivery(earlier[0], earlier[1], reused=True, status=status)
    tables = release_tables(config, warehouse)
    release_id = release_id_for([config.batch_id], f"{config.digest()}{digest[:16]}", datetime.now(UTC))
    card = config.path(CARD_FILE.format(batch=config.batch_id)).read_text(encoding="utf-8")
    files: dict[str, object] = {f"plots/{p.name}": p for p in calibration_plots(config, calibration_id).values()}
    files.update(card_evidence(warehouse, config)[1])
    manifest_extra = {
        "batch_ids": [config.batch_id],
        "config": json.loads(json.dumps(config.to_dict(), default=str)),
        "versions": {"model_key": model_key},
        "gates": status,
    }
    key = signing_key()  # signs the manifest; only its id is written into the release
    path = write_release(
        config.releases_path, release_id, tables, card, manifest_extra, extra_files=files, signing_key=key
    )
    rows = {name: table.height for name, table in tables.items()}
    warehouse.append(
        "deliveries",
        pl.DataFrame(
            {
                "release_id": [release_id],
                "created_at": [datetime.now(UTC).replace(tzinfo=None)],
                "path": [str(path)],
                "batch_ids": [config.batch_id],
                "n_documents": [max(rows.values(), default=0)],
                "gates": [json.dumps({k: v["passed"] for k, v in status.items()})],
                "content_digest": [digest],
            }
        ),
    )
    record_fingerprint(warehouse, config.batch_id, release_id, fingerprint, run_id)
    return Delivery(release_id, Path(path), reused=False, status=status, rows=rows, signed_with_key_id=key.key_id)
