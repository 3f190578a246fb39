"""The whole asset graph on a tiny corpus with the real model, and the gates that guard release."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from curation.release import verify_release
from tests.conftest import run_job


def _materialized(result) -> set[str]:
    return {
        e.event_specific_data.materialization.asset_key.to_user_string()
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
    }


def _checks(result) -> dict[str, bool]:
    return {
        e.event_specific_data.asset_check_key.name: e.event_specific_data.passed
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }


def _release_dir(config) -> Path:
    releases = [p for p in config.releases_path.iterdir() if not p.name.startswith(".")]
    assert len(releases) == 1, releases
    return releases[0]


def test_every_stage_materializes_and_all_gates_pass(e2e):
    result, _ = e2e
    assert "release" in _materialized(result)
    checks = _checks(result)
    assert len(checks) == 8
    assert all(checks.values()), checks


def test_release_has_card_manifest_and_verifiable_shards(e2e):
    _, config = e2e
    release = _release_dir(config)
    assert verify_release(release) == []
    card = (release / "README.md").read_text()
    assert card.startswith("---\n") and "```yaml" in card
    manifest = json.loads((release / "manifest.json").read_text())
    assert all(g["passed"] for g in manifest["gates"].values())
    rows = duckdb.sql(f"SELECT count(*) FROM read_parquet('{release}/data/surrogate/*.parquet')").fetchone()[0]
    documents = (
        duckdb.connect(str(config.warehouse_path), read_only=True)
        .sql("SELECT count(*) FROM documents WHERE batch_id = 'tiny'")
        .fetchone()[0]
    )
    assert rows == documents > 0


def test_no_planted_value_in_release(e2e):
    _, config = e2e
    release = _release_dir(config)
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    planted = [
        v
        for (v,) in con.sql(
            'SELECT substr(d.text, g."start" + 1, g."end" - g."start") FROM gold_spans g JOIN documents d '
            "USING (doc_id) WHERE g.dataset = 'corpus' AND g.label IN "
            "('API_KEY','PASSWORD','SECRET','PRIVATE_KEY','CONNECTION_STRING','EMAIL_ADDRESS','US_SSN','CREDIT_CARD')"
        ).fetchall()
    ]
    assert planted, "the tiny corpus must hold planted secrets for this test to mean anything"
    released = "\n".join(p.read_bytes().decode("latin-1") for p in release.rglob("*") if p.is_file())
    leaked = [v for v in planted if len(v) >= 6 and v in released]
    assert leaked == []
    vault_bytes = config.vault_path.read_bytes()
    assert not any(p.suffix == ".duckdb" for p in release.rglob("*"))
    assert vault_bytes[:64] not in released.encode("latin-1")


def test_surrogates_consistent_within_a_conversation(e2e):
    """Every repeat of a value inside one conversation gets the same surrogate in the release text."""
    _, config = e2e
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    docs = con.sql(
        "SELECT d.doc_id, d.scope_id, d.text, s.text, s.replaced_ranges FROM documents d "
        "JOIN surrogate_view s USING (doc_id) WHERE d.batch_id = 'tiny'"
    ).fetchall()
    surrogates: dict[tuple[str, str, str], set[str]] = {}
    for doc_id, scope, original, rewritten, ranges in docs:
        spans = con.execute(
            'SELECT "start", "end", label FROM mask_spans WHERE doc_id = ? ORDER BY "start"', [doc_id]
        ).fetchall()
        replaced = json.loads(ranges)
        assert len(spans) == len(replaced)
        for (start, end, label), (new_start, new_end) in zip(spans, replaced, strict=True):
            surrogates.setdefault((scope, label, original[start:end]), set()).add(rewritten[new_start:new_end])
    repeated = {
        k: v for k, v in surrogates.items() if k[1] in ("EMAIL_ADDRESS", "PHONE_NUMBER", "ACCOUNT_ID", "PERSON")
    }
    assert len(repeated) >= 5
    assert all(len(v) == 1 for v in repeated.values()), [k[1] for k, v in repeated.items() if len(v) > 1]
    assert all(value not in v for (_, _, value), v in repeated.items())


def test_rerun_reuses_cached_scores(e2e, scored_copy):
    result = run_job(scored_copy / "curation.yaml", base_dir=str(scored_copy))
    scoring = next(
        e.event_specific_data.materialization.metadata
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
        and e.event_specific_data.materialization.asset_key.to_user_string() == "reference_scores"
    )
    assert scoring["model_calls"].value == 0
    assert scoring["texts_cached"].value == scoring["texts"].value > 0


def test_failing_gate_blocks_release(scored_copy):
    config_file = scored_copy / "curation.yaml"
    config_file.write_text(config_file.read_text() + "  masked_fraction_max: 0.001\n  masked_fraction_min: 0.0\n")
    result = run_job(config_file, base_dir=str(scored_copy))
    assert _checks(result)["masked_fraction_budget"] is False
    assert "release" not in _materialized(result)
    assert not (scored_copy / "releases").exists() or not any((scored_copy / "releases").iterdir())


def test_planted_residual_value_fails_audit_and_blocks_release(scored_copy):
    """A supplied private value that no detector or surprise rule catches must stop the release."""
    corpus = scored_copy / "corpus.jsonl"
    text = "customer: the weather report was fine, thanks for the quick help."
    start = text.index("weather")
    record = {
        "id": "planted-1",
        "kind": "chat",
        "scope_id": "conv-planted",
        "text": text,
        "spans": [{"start": start, "end": start + len("weather"), "label": "LOCATION"}],
    }
    corpus.write_text(corpus.read_text() + json.dumps(record) + "\n")
    config_file = scored_copy / "curation.yaml"
    config_file.write_text(config_file.read_text() + "masking:\n  mask_supplied_labels: false\n")
    result = run_job(config_file)
    assert _checks(result)["residual_leak_scan"] is False
    assert "release" not in _materialized(result)
    releases = scored_copy / "releases"
    assert not releases.exists() or not [p for p in releases.iterdir() if not p.name.startswith(".")]
    con = duckdb.connect(str(scored_copy / ".curation/warehouse.duckdb"), read_only=True)
    findings = con.sql(
        "SELECT value_sha256, count FROM audit_findings WHERE check_name = 'residual_leak_scan'"
    ).fetchall()
    assert findings and all("weather" not in str(row) for row in findings)


def test_audit_command_reverifies_and_detects_tampering(e2e, tmp_path):
    import shutil

    from curation.cli import main

    _, config = e2e
    copy = tmp_path / "release"
    shutil.copytree(_release_dir(config), copy)
    assert main(["audit", str(copy)]) == 0
    card = copy / "README.md"
    card.write_text(card.read_text() + "\nedited after release\n")
    assert main(["audit", str(copy)]) == 1
