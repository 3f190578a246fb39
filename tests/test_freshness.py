"""Up-to-date detection: a fingerprint of everything a run reads, and `curation run` skipping a current batch."""

import json
import shutil

import pytest

from curation.core.config import load_config
from curation.core.warehouse import Warehouse
from curation.delivery.freshness import batch_fingerprint, check, code_digest, digest_path, run_fingerprint

PARTS = {"code": "c0", "model_key": "m#1", "detector_versions": {"ruleset": "r1"}, "key_id": "k1"}


@pytest.fixture()
def project(tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "a", "text": "hello"}) + "\n")
    (tmp_path / "val.jsonl").write_text(json.dumps({"id": "v", "text": "x", "spans": []}) + "\n")
    (tmp_path / "c.yaml").write_text("input: in.jsonl\nvalidation: val.jsonl\nbatch_id: b1\n")
    return tmp_path


def test_fingerprint_follows_every_input(project):
    config = load_config(project / "c.yaml")
    base = run_fingerprint(config, **PARTS)
    assert run_fingerprint(load_config(project / "c.yaml"), **PARTS) == base  # deterministic
    for change in ({"code": "c1"}, {"model_key": "m#2"}, {"detector_versions": {"ruleset": "r2"}}, {"key_id": "k2"}):
        assert run_fingerprint(config, **{**PARTS, **change}) != base, change
    (project / "in.jsonl").write_text(json.dumps({"id": "a", "text": "hello!"}) + "\n")
    assert run_fingerprint(config, **PARTS) != base
    (project / "in.jsonl").write_text(json.dumps({"id": "a", "text": "hello"}) + "\n")
    (project / "val.jsonl").write_text(json.dumps({"id": "v", "text": "y", "spans": []}) + "\n")
    assert run_fingerprint(config, **PARTS) != base
    (project / "val.jsonl").write_text(json.dumps({"id": "v", "text": "x", "spans": []}) + "\n")
    assert run_fingerprint(config, **PARTS) == base
    (project / "c.yaml").write_text("input: in.jsonl\nvalidation: val.jsonl\nbatch_id: b1\ngates:\n  audit_sample: 7\n")
    assert run_fingerprint(load_config(project / "c.yaml"), **PARTS) != base


def test_folder_digest_covers_names_and_bytes(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("one")
    (folder / "b.txt").write_text("two")
    first = digest_path(folder)
    (folder / "b.txt").rename(folder / "c.txt")
    assert digest_path(folder) != first
    (folder / "c.txt").write_text("two!")
    assert digest_path(folder) != first
    assert digest_path(tmp_path / "missing") != digest_path(folder)


def test_code_digest_ignores_bytecode_but_not_source(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    first = code_digest([tmp_path])
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    assert code_digest([tmp_path]) == first
    (tmp_path / "m.py").write_text("x = 2\n")
    assert code_digest([tmp_path]) != first


def test_batch_fingerprint_creates_no_key_when_dev_keys_are_off(project, monkeypatch):
    monkeypatch.delenv("CURATION_HMAC_KEY", raising=False)
    (project / "c.yaml").write_text(
        "input: in.jsonl\nvalidation: val.jsonl\nbatch_id: b1\nsurrogates:\n  allow_dev_key: false\n"
    )
    config = load_config(project / "c.yaml")
    assert batch_fingerprint(config, [project]) is None
    assert not (project / ".curation" / "dev-hmac.key").exists()
    monkeypatch.setenv("CURATION_HMAC_KEY", "ab" * 32)
    assert isinstance(batch_fingerprint(config, [project]), str)


def test_check_trusts_only_a_recorded_release_that_verifies(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    assert not check(warehouse, "b1", "f1", lambda path: []).up_to_date  # no warehouse file yet
    release = tmp_path / "releases" / "r1"
    release.mkdir(parents=True)
    with warehouse.connect() as con:
        con.execute("INSERT INTO deliveries (release_id, path, batch_ids) VALUES ('r1', ?, 'b1')", [str(release)])
        con.execute("INSERT INTO run_fingerprints VALUES ('b1', 'f1', 'r1', 'run', now())")
    assert check(warehouse, "b1", "f1", lambda path: []).up_to_date
    assert check(warehouse, "b1", "f1", lambda path: []).release_id == "r1"
    assert not check(warehouse, "b1", "f2", lambda path: []).up_to_date  # other inputs
    assert not check(warehouse, "b2", "f1", lambda path: []).up_to_date  # other batch
    assert not check(warehouse, "b1", "f1", lambda path: ["data/x.parquet: sha256 mismatch"]).up_to_date
    shutil.rmtree(release)
    assert not check(warehouse, "b1", "f1", lambda path: []).up_to_date


def test_curation_run_skips_a_current_batch_and_reruns_on_change(scored_copy, capsys, monkeypatch):
    """The real CLI: the first run records its fingerprint with the release, the second launches nothing,
    --force and a changed input run the job again."""
    from curation.cli import main

    monkeypatch.setenv("DAGSTER_HOME", str(scored_copy / "dagster_home"))
    (scored_copy / "dagster_home").mkdir()
    (scored_copy / "dagster_home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    args = ["run", "--config", str(scored_copy / "curation.yaml"), "--out", str(scored_copy), "--log-level", "ERROR"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "stages (" in first and "up to date" not in first
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "up to date" in second and "stages (" not in second
    assert main([*args, "--force"]) == 0
    assert "stages (" in capsys.readouterr().out
    corpus = scored_copy / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    corpus.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # one record fewer
    assert main(args) == 0
    changed = capsys.readouterr().out
    assert "running: inputs, config, code or key changed" in changed and "stages (" in changed
