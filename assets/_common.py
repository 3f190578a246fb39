"""Helpers shared by the asset modules: metadata conversion and group names."""

from __future__ import annotations

import json

import dagster as dg

GROUP = "curation"


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
