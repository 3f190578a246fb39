"""Batch registry: where each delivery batch's data and config come from.

`curation run` (and the inbox sensor) record a batch's source when they add its partition: the input path
(file, folder or inbox entry), the config file, the base folder and digests of both. A run of that
partition launched later from anywhere, the Dagster UI included, resolves its inputs from this record, so
it reads the same data with the same settings as the run that added the batch.

Also here: whether the shared calibration is current for a run, so a batch run includes the calibration
assets only when their inputs changed.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from curation.core.config import ConfigError, CurationConfig, load_config
from curation.core.warehouse import Warehouse

REGISTRY_TABLE = "delivery_batches"


@dataclasses.dataclass(frozen=True, slots=True)
class BatchSource:
    """One delivery batch's source: enough to rebuild its exact config in another process."""

    batch_id: str
    input: str  # absolute path of the input file / folder (the bundled sample when none was given)
    config_path: str | None  # absolute path of the YAML config, None = defaults
    base_dir: str  # folder the config's relative paths (warehouse, vault, releases) resolve against
    input_digest: str  # sha256 of the input bytes when registered
    config_digest: str  # digest of the resolved config (`CurationConfig.digest`)
    origin: str  # "cli", "inbox" or "ui"
    registered_at: datetime | None = None
    domain: str | None = None  # the batch's domain (its calibration's, or reported unverified)
    language: str | None = None  # the batch's language as given (--language); None = resolved by the config

    def load(self) -> CurationConfig:
        """The batch's config exactly as when it was registered (paths from the record)."""
        return load_config(
            self.config_path,
            base_dir=self.base_dir,
            input=self.input,
            batch_id=self.batch_id,
            domain=self.domain,
            language=self.language,
        )


def source_for(config: CurationConfig, config_path: str | None, origin: str) -> BatchSource:
    """The registry record of `config`'s batch (digests computed now)."""
    from curation.delivery.freshness import digest_path

    return BatchSource(
        batch_id=config.batch_id,
        input=str(config.input_path.resolve()),
        config_path=str(Path(config_path).resolve()) if config_path else None,
        base_dir=str(Path(config.base_dir).resolve()),
        input_digest=digest_path(config.input_path),
        config_digest=config.digest(),
        origin=origin,
        domain=config.domain,  # as given (--domain, the key, an inbox folder); None = the config's default
        language=config.language,
    )


def register(warehouse: Warehouse, source: BatchSource) -> None:
    """Record (or replace) the source of `source.batch_id`: the latest registration wins."""
    frame = pl.DataFrame(
        {
            "batch_id": [source.batch_id],
            "input": [source.input],
            "config_path": [source.config_path],
            "base_dir": [source.base_dir],
            "input_digest": [source.input_digest],
            "config_digest": [source.config_digest],
            "origin": [source.origin],
            "registered_at": [datetime.now(UTC).replace(tzinfo=None)],
            "domain": [source.domain],
            "language": [source.language],
        },
        schema_overrides={"config_path": pl.String, "domain": pl.String, "language": pl.String},
    )
    warehouse.replace(REGISTRY_TABLE, frame, "batch_id = ?", [source.batch_id])


def lookup(warehouse: Warehouse, batch_id: str) -> BatchSource | None:
    """The registered source of a batch, None when the batch was never registered in this warehouse."""
    if not warehouse.path.exists():
        return None
    frame = warehouse.query(f"SELECT * FROM {REGISTRY_TABLE} WHERE batch_id = ?", [batch_id])
    if frame.height == 0:
        return None
    row = frame.row(0, named=True)
    return BatchSource(**{f.name: row[f.name] for f in dataclasses.fields(BatchSource)})


def registered(warehouse: Warehouse) -> list[BatchSource]:
    if not warehouse.path.exists():
        return []
    frame = warehouse.query(f"SELECT batch_id FROM {REGISTRY_TABLE} ORDER BY registered_at")
    return [s for s in (lookup(warehouse, b) for b in frame["batch_id"].to_list()) if s is not None]


def resolve(config: CurationConfig, batch_id: str) -> CurationConfig:
    """The config of delivery batch `batch_id` given the launching process's config: that config when it is
    the configured batch, else the registered source, else the inbox entry of that name."""
    if batch_id == config.batch_id:
        return config
    source = lookup(Warehouse(config.warehouse_path), batch_id)
    if source is not None:
        if not Path(source.input).exists():
            raise ConfigError(
                f"delivery batch {batch_id!r}: its registered input {source.input} no longer exists; "
                f"restore it or register the batch again with `curation run --batch-id {batch_id} --input PATH`"
            )
        return source.load()
    try:
        return config.for_batch(batch_id)
    except ConfigError as exc:
        raise ConfigError(
            f"delivery batch {batch_id!r} is not registered in {config.warehouse_path.resolve()} and is not the "
            f"configured batch_id ({config.batch_id!r}) or an entry of the inbox folder {config.inbox_path.resolve()}: "
            f"run `curation run --batch-id {batch_id} --input PATH` once, or add {batch_id}.jsonl "
            f"(or .parquet/.csv, or a folder {batch_id}/) to that folder"
        ) from exc


def source_summary(source: BatchSource) -> dict:
    """The record as metadata: paths and digests (no content)."""
    out = dataclasses.asdict(source)
    out["registered_at"] = str(source.registered_at) if source.registered_at else None
    out["input_digest"] = source.input_digest[:16]
    return json.loads(json.dumps(out))


# -- does a batch run need the calibration assets? ---------------------------------------------
def calibration_is_current(config: CurationConfig, warehouse: Warehouse, model_key: str, detector_key: str) -> bool:
    """True when the stored calibration was made from exactly the current validation file, its scores under
    `model_key` and its detector spans under `detector_key`: re-materializing the calibration group would
    change nothing, so a batch run leaves it alone."""
    from curation.core.warehouse import CALIBRATION_BATCH, LABELED, VALIDATION, stage_summary
    from curation.ingest.validation import validation_rows
    from curation.policy.stored import current_calibration
    from curation.tagger.store import current_tagger_path, tagger_config

    if not warehouse.path.exists() or not config.validation_path.exists():
        return False
    rows, gold, _ = validation_rows(config)
    # Every labeled set the calibration group loads (the validation file and the tagger's sets), as the
    # validation stage would write them now; the stored rows must be exactly these.
    expected = {(dataset, doc_id, sha, split) for dataset, doc_id, _, _, _, sha, _, split, _ in rows}
    stored = set(warehouse.query("SELECT dataset, doc_id, sha256, split FROM validation_docs").iter_rows())
    if not expected or stored != expected:
        return False
    stored_gold = warehouse.query(
        'SELECT dataset, batch_id, doc_id, "start", "end", label FROM gold_spans WHERE dataset IN (?, ?)',
        [VALIDATION, LABELED],
    ).iter_rows()
    if sorted(stored_gold) != sorted(gold):  # a label edited in place changes the calibration too
        return False
    shas = {sha for _, _, sha, _ in expected}
    scored = warehouse.query(
        "SELECT count(DISTINCT doc_sha256) FROM token_scores WHERE model_key = ? AND doc_sha256 IN "
        "(SELECT sha256 FROM validation_docs)",
        [model_key],
    ).item()
    detected = warehouse.query(
        "SELECT count(*) FROM (SELECT DISTINCT doc_id, sha256 FROM detector_runs WHERE dataset = ? AND "
        "detector_key = ?) r JOIN validation_docs v USING (doc_id, sha256)",
        [VALIDATION, detector_key],
    ).item()
    if scored < len(shas) or detected < sum(1 for dataset, *_ in expected if dataset == VALIDATION):
        return False
    try:
        current_calibration(config, warehouse, model_key)
        saved = current_tagger_path(warehouse)
    except RuntimeError:
        return False
    if config.tagger.enabled != (saved is not None):
        return False
    if saved is None:
        return True
    from curation.tagger.model import Tagger, TaggerConfig

    # its data is the labeled sets above; the metadata line says its config without loading torch
    meta = Tagger.read_meta(saved)
    augmented_as_now = meta["report"].get("augment_variants", 0) == config.tagger.augment_variants
    summary = stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger")
    label_policy_as_now = ("label_thresholds" in summary) == config.tagger.label_thresholds
    return TaggerConfig(**meta["config"]) == tagger_config(config) and augmented_as_now and label_policy_as_now
