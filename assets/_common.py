"""Helpers shared by the asset and check modules: the delivery-batch partitions, the per-batch config,
metadata conversion and group names."""

from __future__ import annotations

import functools
import json
import math

import dagster as dg

from curation.core.config import CurationConfig

CALIBRATION_GROUP = "calibration"  # shared by every batch: validation data, its scores, the thresholds
DELIVERY_GROUP = "delivery"  # one partition per delivery batch

# One partition per delivery batch; the inbox sensor adds them, `curation run` adds its own batch id.
DELIVERY_BATCHES = dg.DynamicPartitionsDefinition(name="delivery_batch")
PARTITION_TAG = "dagster/partition"


def batch_config(context, settings) -> CurationConfig:
    """The run's config for the batch being materialized (the run's partition; the configured batch_id
    when the run is not partitioned). Works for asset and asset-check contexts alike."""
    return settings.for_partition(context.run.tags.get(PARTITION_TAG))


def significant(value, digits: int = 4):
    """Floats to `digits` significant digits, recursively (what a person reads; the warehouse keeps all)."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: significant(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [significant(v, digits) for v in value]
    return value


def _cell(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, dict | list):
        return json.dumps(significant(value), default=str)
    return str(significant(value)).replace("|", "\\|")


def markdown_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """A markdown table (rendered by the UI's metadata panel) with 4 significant digits."""
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def gate_table(status: dict[str, dict]) -> dg.MetadataValue:
    """Gate results as the UI's table: name, passed or FAILED, and the reason."""
    rows = [
        {"gate": name, "result": "passed" if s.get("passed") else "FAILED", "reason": s.get("reason") or ""}
        for name, s in sorted(status.items())
    ]
    return dg.MetadataValue.md(markdown_table(rows))


def release_blocked_observation(
    partition: str, blocked_by: dict[str, str], status: dict[str, dict] | None = None
) -> dg.AssetObservation:
    """The one observation that marks a batch's `release` partition blocked: by which gates and why (the
    partition's panel shows the latest), with every gate's result where the caller has them all."""
    if status is None:
        status = {name: {"passed": False, "reason": why} for name, why in blocked_by.items()}
    names = ", ".join(sorted(blocked_by))
    return dg.AssetObservation(
        asset_key="release",
        partition=partition,
        description="release blocked by " + names,
        metadata={
            "release_status": dg.MetadataValue.text("blocked"),
            "blocked_by": dg.MetadataValue.text(names),
            "gates": gate_table(status),
        },
    )


def _readable(value) -> dg.MetadataValue:
    """A nested value as a table: a mapping of mappings -> one row per key; a flat mapping -> key | value."""
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return dg.MetadataValue.md(markdown_table([{"": k, **v} for k, v in value.items()]))
    if isinstance(value, dict) and value:
        return dg.MetadataValue.md(markdown_table([{"item": k, "value": v} for k, v in value.items()]))
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return dg.MetadataValue.md(markdown_table(value))
    if isinstance(value, list):
        return dg.MetadataValue.text(", ".join(_cell(v) for v in value) or "none")
    return dg.MetadataValue.text("none")


def as_metadata(summary: dict) -> dict:
    """Flat metadata from a stage summary: counts, rates (4 significant digits) and tables for nested values."""
    out = {}
    for key, value in summary.items():
        if isinstance(value, dict | list):
            out[key] = _readable(json.loads(json.dumps(value, default=str)))
        elif value is None:
            out[key] = dg.MetadataValue.text("n/a")
        elif isinstance(value, float):
            out[key] = significant(value) if math.isfinite(value) else dg.MetadataValue.text(str(value))
        else:
            out[key] = value
    return out


def one_connection(step):
    """Run a short step on one warehouse connection (`Warehouse.session`): opening the DuckDB file costs
    ~25 ms and a step makes many small calls. Not for steps whose duration grows with the batch beyond the
    warehouse work itself (scoring, detection, reading input files, writing release files): they would hold
    the single-writer lock while parallel batch runs wait for it."""

    @functools.wraps(step)
    def in_session(*args, **kwargs):
        with kwargs["settings"].warehouse().session():
            return step(*args, **kwargs)

    return in_session
