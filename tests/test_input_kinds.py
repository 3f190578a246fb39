"""Every input kind the README lists, run as a user runs it: `curation run --input FILE` (the real CLI, in
process: a tiny batch whose texts the e2e project already scored, so no text is scored twice), and an
unknown suffix refused with the two-line user error. Three kinds run in `make test`, the rest in
`make test-heavy`.

The kinds come from `curation.ingest.formats`, the one place ingest, preflight and the inbox read, so a kind
added there is run here too; the README's table is checked to be that module's table.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import shutil
from pathlib import Path

import polars as pl
import pytest

from curation.ingest.formats import COMPRESSIONS, RECORD_SUFFIXES, UNCOMPRESSED_ONLY, input_kinds_table

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ("id", "text", "kind", "scope_id")

def _compress(data: bytes, compression: str) -> bytes:
    if compression == "gzip":
        return gzip.compress(data)
    if compression == "bz2":
        return bz2.compress(data)
    if compression == "xz":
        return lzma.compress(data)
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def _encode(records: list[dict], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in records).encode()
    if fmt == "json":
        return json.dumps(records).encode()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue().encode()
    buffer = io.BytesIO()
    pl.DataFrame(records).write_parquet(buffer)
    return buffer.getvalue()


# Run by `make test`: the kinds of the reported crash (`curation run --input batch.jsonl.gz`, issue 37) and
# one of each reader; every other kind is a run of ~15 s each, so it waits for `make test-heavy` (CI runs both).
DEFAULT_KINDS = {(".jsonl", ".gz"), (".csv", ".zst"), (".parquet", None)}


def _kinds() -> list:
    """(suffix, compression suffix or None) of every record-file kind, each compression of each that may be."""
    kinds = []
    for suffix, fmt in RECORD_SUFFIXES.items():
        kinds.append((suffix, None))
        if fmt not in UNCOMPRESSED_ONLY:
            kinds += [(suffix, c) for c in COMPRESSIONS]
    return [k if k in DEFAULT_KINDS else pytest.param(*k, marks=pytest.mark.heavy) for k in kinds]


@pytest.fixture(scope="module")
def project(e2e, tmp_path_factory) -> tuple[Path, list[dict]]:
    """A copy of the e2e project (its scores, tagger and calibration are reused) and a tiny batch of its
    own corpus texts (text and code records: every format can carry them)."""
    _, config = e2e
    root = tmp_path_factory.mktemp("kinds") / "project"
    shutil.copytree(config.base_dir, root, ignore=shutil.ignore_patterns("releases"))
    corpus = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    records = [{k: r.get(k) or "" for k in FIELDS} for r in corpus if r.get("kind") in ("text", "code")][:3]
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return root, records


def _run(root: Path, path: Path, batch_id: str, monkeypatch, capsys) -> tuple[int, str, str]:
    """`curation run` as a user types it (the config only where the project has one)."""
    from curation.cli import main

    monkeypatch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
    monkeypatch.chdir(ROOT)
    config = ["--config", str(root / "curation.yaml")] if (root / "curation.yaml").exists() else []
    args = ["run", *config, "--out", str(root), "--input", str(path)]
    code = main([*args, "--batch-id", batch_id, "--log-level", "ERROR"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _documents(root: Path, batch_id: str) -> list[str]:
    from curation.core.warehouse import Warehouse

    frame = Warehouse(root / ".curation" / "warehouse.duckdb").query(
        "SELECT text FROM documents WHERE batch_id = ? ORDER BY text", [batch_id]
    )
    return frame["text"].to_list()


@pytest.mark.parametrize(("suffix", "compression"), _kinds(), ids=lambda v: v or "plain")
def test_curation_run_reads_every_record_file_kind(project, suffix, compression, monkeypatch, capsys):
    root, records = project
    name = f"batch{suffix}{compression or ''}"
    data = _encode(records, RECORD_SUFFIXES[suffix])
    path = root / "inputs" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(_compress(data, COMPRESSIONS[compression]) if compression else data)
    batch_id = "kind-" + name.replace(".", "-")
    code, out, err = _run(root, path, batch_id, monkeypatch, capsys)
    assert code == 0, f"{name}: exit {code}\n{out[-2000:]}\n{err[-2000:]}"
    assert "unexpected" not in err
    assert _documents(root, batch_id) == sorted(r["text"] for r in records)


@pytest.mark.heavy
def test_curation_run_reads_a_folder_of_text_files_and_one_of_parquet_parts(project, monkeypatch, capsys):
    root, records = project
    texts = root / "inputs" / "texts"
    texts.mkdir(parents=True)
    for i, record in enumerate(records):
        (texts / f"note-{i}.txt").write_text(record["text"], encoding="utf-8")
    parts = root / "inputs" / "parts"
    parts.mkdir()
    for i in range(2):
        (parts / f"part-{i}.parquet").write_bytes(_encode(records[i::2], "parquet"))
    (parts / "_SUCCESS").write_bytes(b"")
    for folder in (texts, parts):
        batch_id = f"kind-folder-{folder.name}"
        code, out, err = _run(root, folder, batch_id, monkeypatch, capsys)
        assert code == 0, f"{folder.name}: exit {code}\n{out[-2000:]}\n{err[-2000:]}"
        assert _documents(root, batch_id) == sorted(r["text"] for r in records)


@pytest.mark.parametrize("name", ["batch.txt", "batch.parquet.gz", "batch.jsonl.lz4", "batch"])
def test_an_unknown_input_kind_is_a_two_line_user_error(tmp_path, name, monkeypatch, capsys):
    """Refused before anything runs (no model, no job): what the file is, and what the kinds are."""
    path = tmp_path / name
    path.write_bytes(_encode([{"id": "a", "text": "Call Dana.", "kind": "text", "scope_id": "a"}], "jsonl"))
    code, _out, err = _run(tmp_path, path, "kind-unknown", monkeypatch, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "unknown format" in lines[0] and "unexpected" not in err, err


def test_the_readme_lists_exactly_the_kinds_ingest_reads():
    assert input_kinds_table() in (ROOT / "README.md").read_text(encoding="utf-8")
