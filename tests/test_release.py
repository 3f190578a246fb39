"""Releases appear whole or not at all, verify catches tampering, and DuckDB reads the shards."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from curation.delivery.writer import (
    ReleaseError,
    ReleaseExistsError,
    _digest,
    read_manifest,
    release_id_for,
    remove_stale_temp_folders,
    verify_release,
    write_release,
)

CARD = "---\npretty_name: test\n---\n# test\n"
NOW = dt.datetime(2026, 11, 30, 18, 5, 42, tzinfo=dt.UTC)


def _docs(n: int = 5) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(n)],
            "text": [f"Hello [PERSON] number {i}" for i in range(n)],
            "n_chars": [20 + i for i in range(n)],
        }
    )


def _spans_empty() -> pl.DataFrame:
    return pl.DataFrame(schema={"doc_id": pl.String, "start": pl.Int32, "end": pl.Int32, "label": pl.String})


def _write(root: Path, release_id: str = "r1", **kwargs: object) -> Path:
    tables = {"documents": _docs(), "spans": _spans_empty()}
    extra = {"config": {"seed": 7}, "versions": {"curation": "0.1"}, "gates": {"residual_audit": True}}
    return write_release(root, release_id, tables, CARD, extra, shard_rows=2, **kwargs)  # type: ignore[arg-type]


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_release_layout_and_manifest(tmp_path: Path) -> None:
    out = _write(tmp_path / "releases")
    assert out == tmp_path / "releases" / "r1"
    assert _leftovers(tmp_path / "releases") == ["r1"]
    shards = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert shards == [
        "data/documents/part-00000.parquet",
        "data/documents/part-00001.parquet",
        "data/documents/part-00002.parquet",
        "data/spans/part-00000.parquet",
    ]
    assert (out / "README.md").read_text(encoding="utf-8") == CARD
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["release_id"] == "r1" and manifest["created_at"].endswith("Z")
    assert manifest["tables"]["documents"]["rows"] == 5 and manifest["tables"]["documents"]["shards"] == 3
    assert manifest["tables"]["spans"] == {
        "rows": 0,
        "shards": 1,
        "columns": {"doc_id": "String", "start": "Int32", "end": "Int32", "label": "String"},
    }
    assert [manifest["files"][s]["rows"] for s in shards] == [2, 2, 1, 0]
    assert set(manifest["files"]) == {*shards, "README.md"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) and f["bytes"] > 0 for f in manifest["files"].values())
    assert manifest["config"] == {"seed": 7} and manifest["gates"] == {"residual_audit": True}
    assert verify_release(out) == []


def test_duckdb_loads_the_release(tmp_path: Path) -> None:
    out = _write(tmp_path)
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT doc_id, text, n_chars FROM read_parquet('{out}/data/documents/*.parquet') ORDER BY doc_id"
    ).fetchall()
    assert rows == list(_docs().iter_rows())
    assert con.execute(f"SELECT count(*) FROM read_parquet('{out}/data/spans/*.parquet')").fetchone() == (0,)
    cols = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{out}/data/spans/*.parquet')").fetchall()
    assert [c[0] for c in cols] == ["doc_id", "start", "end", "label"]


def test_failure_mid_write_leaves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "releases"
    unwritable = pl.DataFrame({"x": [object(), object()]}, schema={"x": pl.Object})
    tables = {"documents": _docs(), "broken": unwritable}  # documents are written first, then this fails
    with pytest.raises(ReleaseError, match="broken"):
        write_release(root, "r1", tables, CARD, {})
    assert _leftovers(root) == []


def test_failure_in_manifest_leaves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "releases"
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_release(root, "r1", {"documents": _docs()}, CARD, {"config": {"bad": object()}})
    assert _leftovers(root) == []


def test_existing_release_is_refused_and_untouched(tmp_path: Path) -> None:
    out = _write(tmp_path)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ReleaseExistsError, match="already exists"):
        write_release(tmp_path, "r1", {"other": _docs(1)}, "x", {})
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert _leftovers(tmp_path) == ["r1"]


def test_stale_temp_folder_is_reported_not_deleted(tmp_path: Path) -> None:
    stale = tmp_path / f".tmp-r1-{os.getpid()}"
    stale.mkdir()
    with pytest.raises(ReleaseError, match="temp folder"):
        _write(tmp_path)
    assert stale.exists() and not (tmp_path / "r1").exists()


_SLOW_WRITER = """
import sys
import polars as pl
from curation.delivery.writer import write_release
docs = pl.DataFrame({"doc_id": [f"d{i}" for i in range(100_000)], "text": ["x"] * 100_000})
write_release(sys.argv[1], "killed", {"documents": docs}, "# card", {}, shard_rows=1)
"""


def test_writer_killed_mid_write_leaves_a_private_temp_folder_the_next_write_removes(tmp_path: Path) -> None:
    root = tmp_path / "releases"
    writer = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(root)], env={**os.environ, "PYTHONPATH": "."})
    temp = root / f".tmp-killed-{writer.pid}"
    try:
        deadline = time.monotonic() + 120
        while not list((temp / "data" / "documents").glob("*.parquet")):
            assert writer.poll() is None, "the writer ended before it wrote a shard"
            assert time.monotonic() < deadline, "the writer wrote no shard in 120 s"
            time.sleep(0.05)
        assert stat.S_IMODE(temp.stat().st_mode) == 0o700  # half-written private data, never world-readable
    finally:
        writer.kill()
        writer.wait()
    assert temp.is_dir() and not (temp / "manifest.json").exists()  # what a kill -9 leaves behind
    _write(root)  # the next release write sweeps the dead writer's folder
    assert _leftovers(root) == ["r1"]


def test_sweep_keeps_live_writers_and_removes_dead_ones(tmp_path: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".tmp-r-live-{sleeper.pid}"
        live.mkdir()
        done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        dead = tmp_path / f".tmp-r-dead-{int(done.stdout)}"
        (dead / "data").mkdir(parents=True)
        (tmp_path / "r-kept").mkdir()  # a release, not a temp folder
        assert remove_stale_temp_folders(tmp_path) == [dead.name]
        assert _leftovers(tmp_path) == [live.name, "r-kept"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert remove_stale_temp_folders(tmp_path) == [live.name]


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", ".hidden", "", "x" * 300])
def test_unsafe_release_ids_are_rejected(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(ValueError, match="release id"):
        write_release(tmp_path, bad_id, {"documents": _docs()}, CARD, {})
    assert _leftovers(tmp_path) == []


def test_bad_inputs_are_rejected_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no tables"):
        write_release(tmp_path, "r1", {}, CARD, {})
    with pytest.raises(ValueError, match="table name"):
        write_release(tmp_path, "r1", {"../x": _docs()}, CARD, {})
    with pytest.raises(TypeError, match="polars"):
        write_release(tmp_path, "r1", {"documents": _docs().to_pandas()}, CARD, {})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="files"):
        write_release(tmp_path, "r1", {"documents": _docs()}, CARD, {"files": {}})
    assert _leftovers(tmp_path) == []


def test_extra_files_ship_with_the_release(tmp_path: Path) -> None:
    png = tmp_path / "roc.png"
    png.write_bytes(b"\x89PNG fake")
    out = _write(tmp_path / "releases", extra_files={"plots/roc.png": png})
    assert (out / "plots" / "roc.png").read_bytes() == b"\x89PNG fake"
    assert "plots/roc.png" in read_manifest(out)["files"]
    assert verify_release(out) == []
    with pytest.raises(ValueError, match="extra file"):
        _write(tmp_path / "releases", "r2", extra_files={"../roc.png": png})


# --------------------------------------------------------------------------------------------
# verify_release


def test_verify_detects_modified_file(tmp_path: Path) -> None:
    out = _write(tmp_path)
    (out / "README.md").write_text(CARD + "tampered\n", encoding="utf-8")
    problems = verify_release(out)
    assert any("README.md: modified" in p for p in problems)
    assert any("README.md: size" in p for p in problems)


def test_verify_detects_missing_and_extra_files(tmp_path: Path) -> None:
    out = _write(tmp_path)
    (out / "data/documents/part-00001.parquet").unlink()
    (out / "data/documents/part-00009.parquet").write_bytes(b"")
    problems = verify_release(out)
    assert "data/documents/part-00001.parquet: missing" in problems
    assert "data/documents/part-00009.parquet: extra file not listed in the manifest" in problems


def test_verify_detects_row_count_mismatch(tmp_path: Path) -> None:
    out = _write(tmp_path)
    manifest = read_manifest(out)
    manifest["files"]["data/documents/part-00000.parquet"]["rows"] = 3
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    problems = verify_release(out)
    assert "data/documents/part-00000.parquet: 2 rows, manifest says 3" in problems
    assert "table documents: shards hold 6 rows, manifest says 5" in problems


def test_verify_detects_swapped_shard_even_with_updated_hash(tmp_path: Path) -> None:
    out = _write(tmp_path)
    shard = out / "data/documents/part-00000.parquet"
    _docs(4).write_parquet(shard)
    manifest = read_manifest(out)
    manifest["files"]["data/documents/part-00000.parquet"].update(_digest(shard, sync=False))
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert verify_release(out) == ["data/documents/part-00000.parquet: 4 rows, manifest says 2"]


def test_verify_reports_unreadable_manifest_and_missing_folder(tmp_path: Path) -> None:
    out = _write(tmp_path)
    (out / "manifest.json").write_text("{not json", encoding="utf-8")
    [problem] = verify_release(out)
    assert "manifest.json: unreadable" in problem
    (out / "manifest.json").unlink()
    assert verify_release(out) == [f"{out / 'manifest.json'}: missing"]
    assert "does not exist" in verify_release(tmp_path / "nope")[0]


# --------------------------------------------------------------------------------------------
# release ids


def test_release_id_is_readable_and_depends_on_batches_and_config() -> None:
    rid = release_id_for(["b2", "b1"], "cfg123", NOW)
    assert re.fullmatch(r"2026-11-30T1805Z-[0-9a-f]{8}", rid)
    assert rid == release_id_for(["b1", "b2"], "cfg123", NOW)
    assert rid != release_id_for(["b1"], "cfg123", NOW)
    assert rid != release_id_for(["b1", "b2"], "cfg124", NOW)
    assert rid != release_id_for(["b1", "b2"], "cfg123", NOW + dt.timedelta(minutes=1))
    local = NOW.astimezone(dt.timezone(dt.timedelta(hours=5)))
    assert release_id_for(["b1", "b2"], "cfg123", local) == rid
    with pytest.raises(ValueError, match="timezone"):
        release_id_for(["b1"], "cfg", NOW.replace(tzinfo=None))
    with pytest.raises(ValueError, match="batch"):
        release_id_for([], "cfg", NOW)


def test_release_id_is_a_valid_folder_name(tmp_path: Path) -> None:
    rid = release_id_for(["sample"], "abc", NOW)
    assert _write(tmp_path, rid).name == rid


# --- signed manifests ------------------------------------------------------------------------------------


def _key(fill: str = "ab"):
    from curation.views.vault import KeyInfo, key_fingerprint

    key = bytes.fromhex(fill * 32)
    return KeyInfo(key, key_fingerprint(key), False)


def _reforge(release: Path, base_dir: str) -> None:
    """What the issue did: edit a shard, recompute its checksum in the manifest, point base_dir elsewhere."""
    shard = release / "data/documents/part-00000.parquet"
    frame = pl.read_parquet(shard).with_columns(pl.lit("edited after release").alias("text"))
    frame.write_parquet(shard)
    manifest = read_manifest(release)
    manifest["files"]["data/documents/part-00000.parquet"] = {**_digest(shard, sync=False), "rows": frame.height}
    manifest["config"] = {**manifest["config"], "base_dir": base_dir}
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def test_signed_manifest_verifies_and_names_its_key_not_the_key(tmp_path: Path) -> None:
    key = _key()
    release = _write(tmp_path / "releases", signing_key=key)
    signature = read_manifest(release)["signature"]
    assert signature["algorithm"] == "hmac-sha256" and signature["key_id"] == key.key_id
    assert verify_release(release, key) == []
    shipped = b"".join(p.read_bytes() for p in release.rglob("*") if p.is_file())
    assert key.key.hex().encode() not in shipped and key.key not in shipped


def test_re_manifested_release_fails_the_signature(tmp_path: Path) -> None:
    key = _key()
    release = _write(tmp_path / "releases", signing_key=key)
    _reforge(release, str(tmp_path / "elsewhere"))
    assert verify_release(release) == []  # checksums alone are fooled: the reason for the signature
    problems = verify_release(release, key)
    assert problems == ["manifest.json: signature does not verify: the manifest was changed after it was signed"]


def test_unsigned_or_foreign_signed_manifest_fails_with_the_key(tmp_path: Path) -> None:
    unsigned = _write(tmp_path / "a")
    assert "not signed" in verify_release(unsigned, _key())[0]
    foreign = _write(tmp_path / "b", signing_key=_key("cd"))
    (problem,) = verify_release(foreign, _key())
    assert f"signed with key {_key('cd').key_id}" in problem and _key().key_id in problem


def _audit(release: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "curation.cli", "audit", str(release), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=release.parent)

@pytest.mark.slow

def test_audit_command_checks_the_signature(tmp_path: Path) -> None:
    """`curation audit` with the delivery key: OK on the release as written, FAIL once re-manifested, and
    FAIL (not a skip) when it has no key to check the signature with."""
    key = _key()
    release = _write(tmp_path / "releases", signing_key=key)
    key_file = tmp_path / "delivery.key"
    key_file.write_text(key.key.hex() + "\n", encoding="ascii")
    key_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k != "CURATION_HMAC_KEY"}
    ok = _audit(release, "--key-file", str(key_file), env=env)
    assert ok.returncode == 0 and f"signature (key {key.key_id})" in ok.stdout, ok.stdout + ok.stderr
    by_env = _audit(release, env={**env, "CURATION_HMAC_KEY": key.key.hex()})
    assert by_env.returncode == 0, by_env.stdout + by_env.stderr
    no_key = _audit(release, env=env)
    assert no_key.returncode == 1 and "manifest signature not verified: no delivery key" in no_key.stdout
    _reforge(release, str(tmp_path / "elsewhere"))
    forged = _audit(release, "--key-file", str(key_file), env=env)
    assert forged.returncode == 1 and "signature does not verify" in forged.stdout
    assert "Traceback" not in forged.stdout + forged.stderr
