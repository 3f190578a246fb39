"""Helpers shared by the asset and check modules: the delivery-batch partitions, the per-batch config,
metadata conversion and group names."""

from __future__ import annotations

import functools
import json

import dagster as dg

from curation.config import CurationConfig

CALIBRATION_GROUP = "calibration"  # shared by every batch: validation data, its scores, the thresholds
DELIVERY_GROUP = "delivery"  # one partition per delivery batch

# One partition per delivery batch; the inbox sensor adds them, `curation run` adds its own batch id.
DELIVERY_BATCHES = dg.DynamicPartitionsDefinition(name="delivery_batch")
PARTITION_TAG = "dagster/partition"


def batch_config(context, settings) -> CurationConfig:
    """The run's config for the batch being materialized (the run's partition; the configured batch_id
    when the run is not partitioned). Works for asset and asset-check contexts alike."""
    from curation.batches import resolve

    config = settings.load()
    key = context.run.tags.get(PARTITION_TAG)
    return resolve(config, key) if key else config


def as_metadata(summary: dict) -> dict:
    """Flat metadata from a stage summary (counts and rates only; nested values become JSON)."""
    out = {}
    for key, value in summary.items():
        if isinstance(value, dict | list):
            out[key] = dg.MetadataValue.json(json.loads(json.dumps(value, default=str)))
        elif value is None:
            out[key] = dg.MetadataValue.text("n/a")
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
