"""Write a dataset release (Parquet shards + card + manifest) atomically, and verify one later.

A release is built in a hidden temp folder next to its final place and renamed into
``releases_root/<release_id>`` in one step, so readers never see a half-written release. The
manifest records a sha256, size and row count per file, which :func:`verify_release` re-checks.

Checksums alone do not stop someone from editing a shard and recomputing its sha256 in the manifest, so
the manifest is signed: an HMAC-SHA256 under a key derived from the delivery's HMAC key, with that key's
public id. Only the id is in the release; :func:`verify_release` given the key checks the signature.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from curation.views.vault import KeyInfo

MANIFEST = "manifest.json"
CARD = "README.md"
DATA_DIR = "data"
MANIFEST_VERSION = 1
SIGNATURE = "signature"
SIGNATURE_ALGORITHM = "hmac-sha256"
RESERVED_KEYS = ("manifest_version", "release_id", "created_at", "files", "tables", SIGNATURE)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_CHUNK = 1 << 20
TEMP_PREFIX = ".tmp-"
_TEMP_RE = re.compile(rf"{re.escape(TEMP_PREFIX)}(?P<release>.+)-(?P<pid>\d+)")


class ReleaseError(RuntimeError):
    """A release that cannot be written; the message says which release or file and why."""


class ReleaseExistsError(ReleaseError, FileExistsError):
    """The target release folder already exists; releases are immutable, pick a new id."""


def release_id_for(batch_ids: list[str], config_digest: str, now: dt.datetime) -> str:
    """``2026-11-30T1805Z-<8 hex>``: sortable by time; the hex names the batches + config.

    The same batches and config within the same minute give the same id, so writing the same
    release twice is refused instead of producing a silent duplicate.
    """
    if not batch_ids:
        raise ValueError("release_id_for: need at least one batch id")
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("release_id_for: `now` must be timezone-aware (e.g. datetime.now(UTC))")
    stamp = now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H%MZ")
    digest = hashlib.sha256()
    for part in (*sorted(set(batch_ids)), "\x00config", config_digest):
        digest.update(len(part.encode()).to_bytes(4, "big") + part.encode())
    return f"{stamp}-{digest.hexdigest()[:8]}"


def write_release(
    releases_root: Path,
    release_id: str,
    tables: dict[str, pl.DataFrame],
    card_markdown: str,
    manifest_extra: dict,
    shard_rows: int = 50_000,
    *,
    extra_files: Mapping[str, Path] | None = None,
    signing_key: KeyInfo | None = None,
) -> Path:
    """Write the release into a temp folder, then rename it into ``releases_root/<release_id>``.

    ``extra_files`` maps release-relative paths (e.g. ``plots/roc.png``) to local files to copy,
    so images linked from the card ship with it and are covered by the manifest. ``signing_key`` (the
    delivery's HMAC key) signs the manifest; the key never enters the release, only its id.
    Any failure removes the temp folder: either the whole release appears or nothing does.
    """
    _check_inputs(release_id, tables, manifest_extra, shard_rows, extra_files or {})
    root = Path(releases_root)
    target = root / release_id
    if target.exists():
        raise ReleaseExistsError(f"release {release_id!r} already exists at {target}; releases are immutable")
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_folders(root)
    tmp = root / f"{TEMP_PREFIX}{release_id}-{os.getpid()}"
    try:
        tmp.mkdir(mode=0o700)
        tmp.chmod(0o700)  # mkdir's mode is filtered by the umask; a half-written release is private data
    except FileExistsError:
        raise ReleaseError(
            f"temp folder {tmp} exists: another writer in this process, or a crashed run; remove it and retry"
        ) from None
    try:
        manifest = _fill(tmp, release_id, tables, card_markdown, manifest_extra, shard_rows, extra_files or {})
        if signing_key is not None:
            manifest = sign_manifest(manifest, signing_key)
        _write_json(tmp / MANIFEST, manifest)
        _fsync_dir(tmp)
        if target.exists():  # re-check: rename() would silently replace an empty folder made meanwhile
            raise ReleaseExistsError(f"release {release_id!r} appeared at {target} while it was being written")
        os.rename(tmp, target)
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _writer_alive(pid: int, folder: Path) -> bool:
    """Is the process that named ``folder`` still running? A recycled pid started after the folder was
    made is another process, so it does not count."""
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            return False
        return process.create_time() <= folder.stat().st_mtime + 1.0
    except (psutil.NoSuchProcess, FileNotFoundError):
        return False
    except psutil.AccessDenied:
        return True  # someone else's live process: leave its folder alone


def remove_stale_temp_folders(releases_root: Path) -> list[str]:
    """Remove the temp folders of release writers whose process is gone; return their names.

    A writer killed between ``mkdir`` and ``rename`` (kill -9, power loss) leaves ``.tmp-<id>-<pid>``
    with partial shards and no manifest. Anything that copies ``releases/`` would ship it, so every
    release write and every ``curation run`` start sweeps them. Live writers' folders are kept.
    """
    root = Path(releases_root)
    if not root.is_dir():
        return []
    removed = []
    for entry in sorted(root.iterdir()):
        match = _TEMP_RE.fullmatch(entry.name)
        if match is None or not entry.is_dir() or entry.is_symlink():
            continue
        if _writer_alive(int(match["pid"]), entry):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry.name)
    return removed


def _check_inputs(
    release_id: str, tables: Mapping, extra: dict, shard_rows: int, extra_files: Mapping[str, Path]
) -> None:
    if not isinstance(release_id, str) or not _NAME_RE.fullmatch(release_id):
        raise ValueError(f"release id {release_id!r} must match {_NAME_RE.pattern} (no slashes, no leading dot)")
    if not tables:
        raise ValueError("write_release: no tables given; a release needs at least one table")
    for name, frame in tables.items():
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ValueError(f"table name {name!r} must match {_NAME_RE.pattern}")
        if not isinstance(frame, pl.DataFrame):
            raise TypeError(f"table {name!r} is a {type(frame).__name__}, expected polars.DataFrame")
    clash = sorted(set(extra) & set(RESERVED_KEYS))
    if clash:
        raise ValueError(f"manifest_extra must not set {clash}: those keys are written by write_release")
    if shard_rows < 1:
        raise ValueError(f"shard_rows must be >= 1, got {shard_rows}")
    for rel, src in extra_files.items():
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or not parts or parts[0] in (DATA_DIR, CARD, MANIFEST):
            raise ValueError(f"extra file path {rel!r} must be relative, without '..', outside data/")
        if not Path(src).is_file():
            raise FileNotFoundError(f"extra file {rel!r}: source {src} is not a file")


def _fill(
    tmp: Path,
    release_id: str,
    tables: Mapping[str, pl.DataFrame],
    card_markdown: str,
    extra: dict,
    shard_rows: int,
    extra_files: Mapping[str, Path],
) -> dict[str, Any]:
    """Write shards, card and extra files into ``tmp``; return the manifest describing them."""
    files: dict[str, dict[str, Any]] = {}
    table_info: dict[str, dict[str, Any]] = {}
    for name, frame in tables.items():
        shards = _write_table(tmp, name, frame, shard_rows)
        for rel, rows in shards:
            files[rel] = {**_digest(tmp / rel), "rows": rows}
        columns = {col: str(dtype) for col, dtype in frame.schema.items()}
        table_info[name] = {"rows": frame.height, "shards": len(shards), "columns": columns}
    (tmp / CARD).write_text(card_markdown, encoding="utf-8")
    files[CARD] = _digest(tmp / CARD)
    for rel, src in extra_files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, tmp / rel)
        files[Path(rel).as_posix()] = _digest(tmp / rel)
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    head = {"manifest_version": MANIFEST_VERSION, "release_id": release_id, "created_at": created}
    return {**head, "files": dict(sorted(files.items())), "tables": table_info, **extra}


def _write_table(tmp: Path, name: str, frame: pl.DataFrame, shard_rows: int) -> list[tuple[str, int]]:
    """Shards ``data/<name>/part-NNNNN.parquet``; an empty table still gets one (schema-only) shard."""
    folder = tmp / DATA_DIR / name
    folder.mkdir(parents=True)
    out = []
    n_shards = max(1, -(-frame.height // shard_rows))
    for i in range(n_shards):
        part = frame.slice(i * shard_rows, shard_rows)
        rel = f"{DATA_DIR}/{name}/part-{i:05d}.parquet"
        try:
            part.write_parquet(tmp / rel, compression="zstd", statistics=True)
        except Exception as exc:
            raise ReleaseError(f"table {name!r}: cannot write shard {rel}: {exc}") from exc
        out.append((rel, part.height))
    return out


def _digest(path: Path, *, sync: bool = True) -> dict[str, Any]:
    """sha256 and size of a file read in chunks; ``sync`` fsyncs it so the rename publishes durable data."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha.update(chunk)
        if sync:
            os.fsync(handle.fileno())
    return {"sha256": sha.hexdigest(), "bytes": path.stat().st_size}


def _write_json(path: Path, data: dict) -> None:
    text = json.dumps(data, indent=2, sort_keys=False, default=_json_default, allow_nan=False)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _json_default(value: Any) -> Any:
    """Plain JSON for the few non-JSON types configs carry; anything else fails the release loudly."""
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"manifest value of type {type(value).__name__} is not JSON serializable")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sign_manifest(manifest: dict[str, Any], key: KeyInfo) -> dict[str, Any]:
    """The manifest with a ``signature`` entry: algorithm, key id and the HMAC of everything else."""
    plain = json.loads(json.dumps(manifest, default=_json_default, allow_nan=False))  # as it will be read back
    plain.pop(SIGNATURE, None)
    value = manifest_signature(plain, key.key)
    return {**plain, SIGNATURE: {"algorithm": SIGNATURE_ALGORITHM, "key_id": key.key_id, "value": value}}


def manifest_signature(manifest: dict[str, Any], key: bytes) -> str:
    """HMAC-SHA256 of the canonical JSON of the manifest without its signature, under a key derived from
    the delivery key (so a manifest signature can never be confused with a value HMAC in the vault)."""
    body = {k: v for k, v in manifest.items() if k != SIGNATURE}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    signing_key = hmac.new(key, b"curation release manifest signature v1", hashlib.sha256).digest()
    return hmac.new(signing_key, canonical.encode("utf-8"), hashlib.sha256).hexdigest()


def verify_signature(manifest: dict[str, Any], key: KeyInfo) -> list[str]:
    """Problems with the manifest's signature under ``key`` (empty when it verifies)."""
    signature = manifest.get(SIGNATURE)
    if not isinstance(signature, dict) or not signature.get("value"):
        return ["manifest.json: not signed; a signed release cannot be re-manifested without the delivery key"]
    if signature.get("algorithm") != SIGNATURE_ALGORITHM:
        return [f"manifest.json: unknown signature algorithm {signature.get('algorithm')!r}"]
    if signature.get("key_id") != key.key_id:
        return [
            f"manifest.json: signed with key {signature.get('key_id')}, but the key given is {key.key_id}; "
            "audit with the delivery key that made the release"
        ]
    if not hmac.compare_digest(str(signature["value"]), manifest_signature(manifest, key.key)):
        return ["manifest.json: signature does not verify: the manifest was changed after it was signed"]
    return []


# --------------------------------------------------------------------------------------------
# Verification


def read_manifest(release_dir: Path) -> dict[str, Any]:
    """The parsed manifest of a release (raises ``ReleaseError`` when missing or malformed)."""
    path = Path(release_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReleaseError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise ReleaseError(f"{path}: not a release manifest (no 'files' mapping)")
    return data


def verify_release(release_dir: Path, key: KeyInfo | None = None) -> list[str]:
    """Problems with a release folder: missing, extra or modified files, row count mismatches, and with
    ``key`` (the delivery key) a missing or failing manifest signature.

    An empty list means every file listed in the manifest is present and unchanged and nothing else
    is in the folder. Run it before publishing a copy and after moving one.
    """
    folder = Path(release_dir)
    if not folder.is_dir():
        return [f"{folder}: release folder does not exist"]
    try:
        manifest = read_manifest(folder)
    except ReleaseError as exc:
        return [str(exc)]
    files: dict[str, Any] = manifest["files"]
    problems: list[str] = verify_signature(manifest, key) if key is not None else []
    for rel, meta in sorted(files.items()):
        problems += _check_file(folder, rel, meta)
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}
    for rel in sorted(present - set(files) - {MANIFEST}):
        problems.append(f"{rel}: extra file not listed in the manifest")
    problems += _check_tables(manifest, files)
    return problems


def _check_file(folder: Path, rel: str, meta: Any) -> list[str]:
    if not isinstance(meta, dict) or "sha256" not in meta:
        return [f"{rel}: manifest entry has no sha256"]
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        return [f"{rel}: manifest path escapes the release folder"]
    path = folder / rel
    if path.is_symlink() or not path.is_file():
        return [f"{rel}: missing" if not path.exists() else f"{rel}: not a regular file"]
    actual = _digest(path, sync=False)
    problems = []
    if meta.get("bytes") is not None and actual["bytes"] != meta["bytes"]:
        problems.append(f"{rel}: size {actual['bytes']} bytes, manifest says {meta['bytes']}")
    if actual["sha256"] != meta["sha256"]:
        problems.append(f"{rel}: modified (sha256 mismatch)")
    if "rows" in meta:
        try:
            rows = pl.scan_parquet(path).select(pl.len()).collect().item()
        except (OSError, pl.exceptions.PolarsError) as exc:
            return [*problems, f"{rel}: unreadable Parquet ({type(exc).__name__})"]
        if rows != meta["rows"]:
            problems.append(f"{rel}: {rows} rows, manifest says {meta['rows']}")
    return problems


def _check_tables(manifest: dict[str, Any], files: dict[str, Any]) -> list[str]:
    """Per-table totals in the manifest agree with its per-shard entries."""
    tables = manifest.get("tables")
    if not isinstance(tables, dict):
        return ["manifest.json: no 'tables' mapping"]
    problems = []
    for name, info in sorted(tables.items()):
        prefix = f"{DATA_DIR}/{name}/"
        shards = {rel: meta for rel, meta in files.items() if rel.startswith(prefix)}
        rows = sum(int(meta.get("rows", 0)) for meta in shards.values() if isinstance(meta, dict))
        if not isinstance(info, dict):
            problems.append(f"table {name}: manifest entry is not a mapping")
            continue
        if info.get("shards") != len(shards):
            problems.append(f"table {name}: {len(shards)} shards listed, manifest says {info.get('shards')}")
        if info.get("rows") != rows:
            problems.append(f"table {name}: shards hold {rows} rows, manifest says {info.get('rows')}")
    return problems
