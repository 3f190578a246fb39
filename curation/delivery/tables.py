"""The tables a release ships: the configured views (redacted, surrogate, training) keyed by public ids
instead of the batch's own document and scope ids."""

from __future__ import annotations

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import Warehouse
from curation.views.vault import RELEASE_ID_COLUMNS, public_id


def rekey_ids(frame: pl.DataFrame, key: bytes, batch_id: str) -> pl.DataFrame:
    """Replace record and scope ids by their public ids (an id may itself be private: an email, a
    ticket number), ordered by the public id so the original order does not show either."""
    out = frame
    for column, prefix in RELEASE_ID_COLUMNS.items():
        if column in out.columns:
            mapping = {v: public_id(key, batch_id, column, v, prefix) for v in out[column].drop_nulls().unique()}
            out = out.with_columns(pl.col(column).replace_strict(mapping, default=None, return_dtype=pl.String))
    return out.sort("doc_id") if "doc_id" in out.columns else out


def release_tables(config: CurationConfig, warehouse: Warehouse) -> dict[str, pl.DataFrame]:
    """The tables a release ships: the configured views with public ids (:func:`rekey_ids`, the run's
    HMAC key), never the vault or raw text by default."""
    from curation.views.vault import configured_key

    key = configured_key(config).key
    tables = internal_release_tables(config, warehouse)
    return {name: rekey_ids(frame, key, config.batch_id) for name, frame in tables.items()}


def internal_release_tables(config: CurationConfig, warehouse: Warehouse) -> dict[str, pl.DataFrame]:
    """The release tables with the warehouse's own ids (what the gates judged)."""
    batch = [config.batch_id]
    tables = {}
    if "surrogate" in config.release.views:
        tables["surrogate"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text FROM surrogate_view WHERE batch_id = ? ORDER BY doc_id", batch
        )
    if "redacted" in config.release.views:
        tables["redacted"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text FROM redacted_view WHERE batch_id = ? ORDER BY doc_id", batch
        )
    if config.release.include_training_view:
        tables["training"] = warehouse.query(
            "SELECT doc_id, scope_id, kind, text, loss_mask_spans FROM training_view "
            "WHERE batch_id = ? ORDER BY doc_id",
            batch,
        )
    return tables
