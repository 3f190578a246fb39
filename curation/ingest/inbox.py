"""Delivery inbox: each file or folder dropped into the inbox is one delivery batch.

A batch's key is its name without the extension (`acme-2026-11.jsonl` -> `acme-2026-11`). A batch is
picked up once it is complete: a folder holding a `_READY` marker, or an entry nothing inside of which
changed for `settle_seconds` (so a half-copied file is not ingested). Pure functions; the Dagster sensor
only adds partitions for what this module reports.

A folder `inbox/<domain>/` holds batches of one domain (calibrated on that domain's labels, or reported
unverified): a folder whose name is a domain the config knows (one with labeled sets, or the configured
one), or any folder holding a `_DOMAIN` marker. Batch keys stay unique across the whole inbox.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from curation.ingest.formats import EXPECTED_INPUT, record_suffix

READY_MARKER = "_READY"
DOMAIN_MARKER = "_DOMAIN"
KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


@dataclass(frozen=True)
class InboxBatch:
    key: str
    path: Path
    newest_mtime: float
    has_marker: bool
    domain: str | None = None  # the `inbox/<domain>/` folder it was dropped in, if any

    def is_ready(self, now: float, settle_seconds: float) -> bool:
        return self.has_marker or now - self.newest_mtime >= settle_seconds


@dataclass(frozen=True)
class InboxScan:
    batches: list[InboxBatch]
    skipped: list[str]  # entries that can never become a batch, with the reason (names only)

    def new(self, seen: Iterable[str]) -> list[InboxBatch]:
        known = set(seen)
        return [b for b in self.batches if b.key not in known]

    def ready(self, seen: Iterable[str], now: float, settle_seconds: float) -> list[InboxBatch]:
        """New batches that are complete (already-seen keys are never re-added)."""
        return [b for b in self.new(seen) if b.is_ready(now, settle_seconds)]


def _batch_suffix(path: Path) -> str | None:
    """The suffix that makes a file a batch (``.jsonl.gz`` counts as one: the record files ingest reads)."""
    return record_suffix(path)


def batch_key(path: Path) -> str:
    if path.is_dir():
        return path.name
    suffix = _batch_suffix(path) or path.suffix
    return path.name[: -len(suffix)] if suffix else path.name


def _newest_mtime(path: Path) -> float:
    if path.is_file():
        return path.stat().st_mtime
    times = [p.stat().st_mtime for p in path.rglob("*") if p.is_file()]
    return max(times, default=path.stat().st_mtime)


def is_domain_folder(entry: Path, domains: Iterable[str] = ()) -> bool:
    return entry.is_dir() and (entry.name in set(domains) or (entry / DOMAIN_MARKER).exists())


def scan_inbox(inbox: Path, domains: Iterable[str] = ()) -> InboxScan:
    """Every candidate batch in the inbox (ready or not), and the entries that are not batches; the
    entries of domain folders are batches of that domain."""
    if not inbox.is_dir():
        return InboxScan([], [])
    domains = set(domains)
    batches: dict[str, InboxBatch] = {}
    skipped: list[str] = []
    entries = []
    for entry in sorted(inbox.iterdir()):
        if is_domain_folder(entry, domains):
            entries += [(child, entry.name) for child in sorted(entry.iterdir())]
        else:
            entries.append((entry, None))
    for entry, domain in entries:
        name = f"{domain}/{entry.name}" if domain else entry.name
        if entry.name.startswith((".", "_")):
            continue  # hidden files, markers and partial uploads (`_tmp...`) are never batches
        if entry.is_file() and _batch_suffix(entry) is None:
            skipped.append(f"{name}: not a batch (expected {EXPECTED_INPUT})")
            continue
        key = batch_key(entry)
        if not KEY_PATTERN.match(key):
            skipped.append(f"{name}: batch names may use letters, digits, '_', '.', '-' (max 128)")
            continue
        if key in batches:
            skipped.append(f"{name}: batch {key!r} already comes from {batches[key].path.name}")
            continue
        has_marker = entry.is_dir() and (entry / READY_MARKER).exists()
        batches[key] = InboxBatch(key, entry, _newest_mtime(entry), has_marker, domain)
    return InboxScan(list(batches.values()), skipped)


def new_ready_batches(
    inbox: Path, seen: Iterable[str], now: float, settle_seconds: float, domains: Iterable[str] = ()
) -> list[InboxBatch]:
    """Ready batches whose key is not yet known."""
    return scan_inbox(inbox, domains).ready(seen, now, settle_seconds)


def find_batch(inbox: Path, key: str, domains: Iterable[str] = ()) -> InboxBatch | None:
    """The inbox entry holding batch `key`, if any."""
    for batch in scan_inbox(inbox, domains).batches:
        if batch.key == key:
            return batch
    return None
