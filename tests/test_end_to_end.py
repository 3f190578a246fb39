"""The whole asset graph on a tiny corpus with the real model, and the gates that guard release."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from curation.delivery.writer import verify_release
from definitions import defs
from tests.helpers import run_job


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


def _materialize(config_file: Path, instance, selection: dg.AssetSelection):
    """Run only the selected assets (and their checks) for the config's batch, as someone clicking
    "Materialize" on them in the UI would."""
    from assets import ALL_ASSETS
    from checks import ALL_CHECKS
    from curation.core.config import load_config
    from resources import CurationSettings, build_resources

    batch = load_config(config_file).batch_id
    if not instance.has_dynamic_partition("delivery_batch", batch):
        instance.add_dynamic_partitions("delivery_batch", [batch])
    return dg.materialize(
        [*ALL_ASSETS, *ALL_CHECKS],
        selection=selection,
        instance=instance,
        resources=build_resources(CurationSettings(config_path=str(config_file))),
        partition_key=batch,
        raise_on_error=False,
    )


def test_automation_requests_release_only_after_passing_gates(scored_copy):
    """Positive control for the automation condition: everything but the release, all gates pass ->
    the release partition is requested on the next evaluation."""
    instance = dg.DagsterInstance.ephemeral()
    everything_but_release = dg.AssetSelection.all() - dg.AssetSelection.assets("release")
    instance.add_dynamic_partitions("delivery_batch", ["tiny"])
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)  # the daemon's previous tick
    assert before.get_requested_partitions(dg.AssetKey("release")) == set()
    result = _materialize(scored_copy / "curation.yaml", instance, everything_but_release)
    assert all(passed for name, passed in _checks(result).items() if name != "score_drift")
    assert "release" not in _materialized(result)
    ticks = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    assert ticks.get_requested_partitions(dg.AssetKey("release")) == {"tiny"}


def _release_dir(config) -> Path:
    releases = [p for p in config.releases_path.iterdir() if not p.name.startswith(".")]
    assert len(releases) == 1, releases
    return releases[0]


def test_every_stage_materializes_and_all_gates_pass(e2e):
    result, _ = e2e
    assert "release" in _materialized(result)
    checks = _checks(result)
    assert "score_drift" in checks  # a warning: reported every run, never a gate
    gates = {name: passed for name, passed in checks.items() if name != "score_drift"}
    assert len(gates) == 10  # 9 gates + calibration_coverage (a warning unless domain labels are required)
    assert all(gates.values()), gates


def test_release_has_card_manifest_and_verifiable_shards(e2e):
    _, config = e2e
    release = _release_dir(config)
    assert verify_release(release) == []
    card = (release / "README.md").read_text()
    assert card.startswith("---\n") and "```yaml" in card
    # the card says which policy the one-standard-error rule kept, and against what
    assert "policy_rule" in card and "one standard error" in card, card[card.find("## Reference model"):][:1500]
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
    # the gate says why, and the batch's release partition is marked blocked by it (not a bare failure)
    evaluation = next(
        e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
        and e.event_specific_data.asset_check_key.name == "masked_fraction_budget"
    )
    assert "above the maximum 0.001" in evaluation.description
    assert {"reason", "measured", "limit"} <= set(evaluation.metadata)
    observations = [
        e.event_specific_data.asset_observation
        for e in result.all_events
        if e.event_type_value == "ASSET_OBSERVATION"
        and e.event_specific_data.asset_observation.asset_key == dg.AssetKey("release")
    ]
    assert [(o.partition, o.metadata["release_status"].value) for o in observations] == [("tiny", "blocked")]
    assert observations[0].metadata["blocked_by"].value == "masked_fraction_budget"
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
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("delivery_batch", ["tiny"])
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    result = run_job(config_file, instance=instance)
    assert _checks(result)["residual_leak_scan"] is False
    assert "release" not in _materialized(result)
    # Across runs: the automation condition does not request the release after the failed audit ...
    ticks = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    assert ticks.get_requested_partitions(dg.AssetKey("release")) == set()
    # ... and launching it by hand is refused, since its batch's gates failed for this exact content.
    manual = _materialize(config_file, instance, dg.AssetSelection.assets("release"))
    assert not manual.success and "release" not in _materialized(manual)
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
    key = ["--config", str(Path(config.base_dir) / "curation.yaml")]
    assert main(["audit", str(copy), *key]) == 0
    card = copy / "README.md"
    card.write_text(card.read_text() + "\nedited after release\n")
    assert main(["audit", str(copy), *key]) == 1


def test_release_loads_with_hf_datasets(e2e, tmp_path, monkeypatch):
    """The card's `configs:` front matter lets `datasets` load the release folder as it is, offline."""
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    _, config = e2e
    release = _release_dir(config)
    surrogate = datasets.load_dataset(str(release), "surrogate", cache_dir=str(tmp_path))["train"]
    direct = datasets.load_dataset(
        "parquet", data_files={"train": f"{release}/data/surrogate/*.parquet"}, cache_dir=str(tmp_path)
    )["train"]
    documents = duckdb.sql(f"SELECT count(*) FROM read_parquet('{release}/data/surrogate/*.parquet')").fetchone()[0]
    assert surrogate.num_rows == direct.num_rows == documents > 0
    assert {"doc_id", "text"} <= set(surrogate.column_names)


def test_empty_batch_fails_its_gate_with_a_reason(scored_copy):
    """A delivery whose every record is rejected: nothing is lost (quarantine), and the release is held
    back by a gate that says why, not by a crash or a silent pass."""
    bad = scored_copy / "inbox" / "broken.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"id": "r1", "text": ""}\n{not json\n')
    result = run_job(scored_copy / "curation.yaml", batch_id="broken", input=str(bad))
    assert "release" not in _materialized(result)
    assert _checks(result)["document_contract"] is False  # the first gate on the batch stops it
    con = duckdb.connect(str(scored_copy / ".curation/warehouse.duckdb"), read_only=True)
    assert con.sql("SELECT count(*) FROM quarantine WHERE batch_id = 'broken'").fetchone()[0] == 2
    assert con.sql("SELECT count(*) FROM documents WHERE batch_id = 'broken'").fetchone()[0] == 0
    detail = con.sql(
        "SELECT detail FROM gate_results WHERE batch_id = 'broken' AND check_name = 'document_contract'"
    ).fetchone()[0]
    assert json.loads(detail)["failed_expectations"] == ["table is empty"]


def test_audit_copy_is_indexed_and_kept_in_the_vault_only(e2e):
    """Reviewers' copy: the redacted text with indexed tags ([PERSON_1]), same value -> same index,
    stored next to the surrogate map in the vault and never in the release."""
    import re

    from curation.views.vault import Vault

    _, config = e2e
    with Vault(config.vault_path) as vault:
        copy = vault.audit_copy(config.batch_id)
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    redacted = dict(con.sql("SELECT doc_id, text FROM redacted_view WHERE batch_id = 'tiny'").fetchall())
    assert set(copy) == set(redacted) and any(re.search(r"\[[A-Z_]+_\d+\]", t) for t in copy.values())
    for doc_id, text in copy.items():  # the same text as the redacted view, only the tags carry an index
        assert re.sub(r"\[([A-Z_]+?)_\d+\]", r"[\1]", text) == redacted[doc_id]
    release = _release_dir(config)
    released = duckdb.sql(f"SELECT text FROM read_parquet('{release}/data/*/*.parquet')").fetchall()
    assert not any(re.search(r"\[[A-Z_]+_\d+\]", t) for (t,) in released)


def test_a_raising_check_blocks_the_release(scored_copy, monkeypatch):
    """Fault injection: a gate that crashes produces no result, and no result counts as a failure."""
    from curation.gates import release_gates as gates

    def crash(*args, **kwargs):
        raise RuntimeError("audit backend unavailable")

    monkeypatch.setattr(gates, "residual_leak_scan", crash)
    result = run_job(scored_copy / "curation.yaml")
    failed_steps = {e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"}
    assert any("residual_leak_scan" in step for step in failed_steps)
    assert "residual_leak_scan" not in _checks(result)
    assert "release" not in _materialized(result) and not result.success
    releases = scored_copy / "releases"
    assert not releases.exists() or not [p for p in releases.iterdir() if not p.name.startswith(".")]


CALIBRATION_GROUP = {
    "validation_set", "validation_scores", "validation_detections", "pii_tagger", "threshold_calibration"
}  # fmt: skip


def test_second_batch_run_leaves_the_current_calibration_alone(scored_copy):
    """Every batch run used to re-materialize the calibration group (the currency check compared all
    labeled rows with the validation file's alone, so it never held): parallel batches queued behind
    `validation_scores` for the model slot. A second batch with nothing changed runs the delivery assets
    only; an edited label makes the calibration stale again."""
    from curation.batches import calibration_is_current
    from curation.core.config import load_config
    from curation.core.warehouse import Warehouse
    from curation.detect.suite import detector_key, detector_suite
    from curation.score.scorer import ReferenceScorer

    config_file = scored_copy / "curation.yaml"
    # a second labeled set for the tagger (texts the warehouse has scored already, under another domain)
    validation = scored_copy / "validation.jsonl"
    (scored_copy / "extra.jsonl").write_text("".join(validation.read_text().splitlines(keepends=True)[:6]))
    extra_set = '  epochs: 15\n  labeled_sets: ["extra=extra.jsonl"]\n'
    config_file.write_text(config_file.read_text().replace("  epochs: 15\n", extra_set))
    first = run_job(config_file)
    assert {"validation_set", "threshold_calibration"} <= _materialized(first)  # the new set is calibrated on
    records = [json.loads(line) for line in (scored_copy / "corpus.jsonl").read_text().splitlines()]
    (scored_copy / "second.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:4]))
    result = run_job(config_file, input=str(scored_copy / "second.jsonl"), batch_id="second")
    materialized = _materialized(result)
    assert "release" in materialized, _checks(result)
    assert not materialized & CALIBRATION_GROUP, materialized & CALIBRATION_GROUP

    config = load_config(config_file)
    model_key = ReferenceScorer(config.scoring).model_key
    detectors = detector_key(config, detector_suite(config.detectors))
    warehouse = Warehouse(config.warehouse_path)
    assert calibration_is_current(config, warehouse, model_key, detectors)
    labeled = [json.loads(line) for line in validation.read_text().splitlines()]
    edited = next(r for r in labeled if r["spans"])
    edited["spans"][0]["end"] -= 1
    validation.write_text("".join(json.dumps(r) + "\n" for r in labeled))
    assert not calibration_is_current(config, warehouse, model_key, detectors)


def _mask_calibration(config_file: Path, batch_id: str) -> tuple[str, dict]:
    """The calibration id a batch's masks were made with, and that calibration's summary."""
    from curation.core.config import load_config

    config = load_config(config_file)
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    try:
        (calibration_id,) = {r[0] for r in con.execute(
            "SELECT DISTINCT calibration_id FROM mask_spans WHERE batch_id = ?", [batch_id]
        ).fetchall()}  # fmt: skip
        summary = con.execute("SELECT summary FROM calibration WHERE calibration_id = ?", [calibration_id]).fetchone()
    finally:
        con.close()
    return calibration_id, json.loads(summary[0])


@pytest.mark.heavy  # two more batch runs, each re-materializing the calibration group (~2.5 min)
def test_a_batch_of_another_domain_uses_its_own_calibration_or_says_it_is_unverified(e2e, scored_copy):
    """After the first batch (domain support, the configured validation set), a batch of domain `forum`,
    which has a labeled set of its own, is masked with a calibration made on that set; a batch of domain
    `posts`, which has none, is masked with the support calibration, its calibration_coverage check warns
    (the release still ships) and its card says so in its first lines."""
    config_file = scored_copy / "curation.yaml"
    lines = (scored_copy / "validation.jsonl").read_text().splitlines(keepends=True)
    # texts the warehouse has scored already, as a labeled set of domain forum (the same records: a small
    # set of other records fails calibration_health, which would stop the run before masking)
    (scored_copy / "forum.jsonl").write_text("".join(lines))
    forum_set = '  epochs: 15\n  labeled_sets: ["forum=forum.jsonl"]\n'
    config_file.write_text(config_file.read_text().replace("  epochs: 15\n", forum_set))
    records = [json.loads(line) for line in (scored_copy / "corpus.jsonl").read_text().splitlines()]
    (scored_copy / "second.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:4]))
    first_id, first = _mask_calibration(config_file, "tiny")
    assert first["domain"] == "support"

    forum = run_job(config_file, input=str(scored_copy / "second.jsonl"), batch_id="forum-1", domain="forum")
    assert "mask_spans" in _materialized(forum), _checks(forum)
    forum_id, forum_summary = _mask_calibration(config_file, "forum-1")
    assert forum_id != first_id and forum_summary["domain"] == "forum"
    assert forum_summary["heldout"]["documents"] + forum_summary["validation"]["documents"] == len(lines)

    posts = run_job(config_file, input=str(scored_copy / "second.jsonl"), batch_id="posts-1", domain="posts")
    checks = _checks(posts)
    assert checks["calibration_coverage"] is False and "release" in _materialized(posts), checks
    posts_id, posts_summary = _mask_calibration(config_file, "posts-1")
    assert posts_summary["domain"] == "support" and posts_id != forum_id
    evaluations = [e.event_specific_data for e in posts.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    warning = next(e for e in evaluations if e.asset_check_key.name == "calibration_coverage")
    assert warning.severity == dg.AssetCheckSeverity.WARN
    from curation.core.config import load_config

    folders = [p for p in load_config(config_file).releases_path.iterdir() if not p.name.startswith(".")]
    release = max(folders, key=lambda p: p.stat().st_mtime)  # the posts batch ran last
    assert "posts-1" in (release / "manifest.json").read_text()
    summary = (release / "README.md").read_text().split("## Summary\n\n", 1)[1]
    assert summary.startswith("**Calibration coverage: unverified.** collateral and recall are unverified for")
    assert "domain posts: calibrated on support" in summary.split("\n", 1)[0]


def test_no_hidden_states_of_the_batch_are_left_and_the_labeled_ones_stay_private(e2e):
    """Hidden states can be inverted back to text: a corpus text's are deleted once the head tagged it (the
    tags keep exact probabilities, so a re-run needs neither the states nor the model); the labeled sets'
    stay, to retrain the head, in the warehouse's private folder (0700, files 0600)."""
    _, config = e2e
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    try:
        corpus = {r[0] for r in con.execute("SELECT sha256 FROM documents WHERE batch_id = 'tiny'").fetchall()}
        labeled = {r[0] for r in con.execute("SELECT sha256 FROM validation_docs").fetchall()}
        tagged = con.execute("SELECT DISTINCT doc_sha256 FROM token_tags WHERE probs_f32 IS NOT NULL").fetchall()
        tagged = {r[0] for r in tagged}
    finally:
        con.close()
    folder = config.warehouse_path.parent / "hidden"
    kept = {p.stem for p in folder.rglob("*.npy")}
    assert corpus - labeled and not kept & (corpus - labeled)
    assert labeled <= kept and corpus <= tagged
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in folder.rglob("*.npy"))
    assert all(p.stat().st_mode & 0o777 == 0o700 for p in [folder, *folder.iterdir()])


def test_detector_audit_reuses_untouched_documents_with_the_same_verdict(scored_copy, monkeypatch):
    """Documents no mask touched are not detected again (their release text is the text `detector_spans`
    ran on); the verdict, rate and residual labels equal detecting every sampled document anew."""
    from curation.core.config import load_config
    from curation.core.warehouse import Warehouse
    from curation.detect.suite import detector_suite
    from curation.gates import release_gates as gates

    config = load_config(scored_copy / "curation.yaml")
    warehouse, suite = Warehouse(config.warehouse_path), detector_suite(config.detectors)
    reused = gates.residual_detector_audit(warehouse, config, suite, digest="reuse-test-1")
    monkeypatch.setattr(gates, "_stored_detections", lambda *args: {})
    fresh = gates.residual_detector_audit(warehouse, config, suite, digest="reuse-test-2")
    assert reused.detail["documents_unchanged_reused"] > 0
    assert fresh.detail["documents_unchanged_reused"] == 0
    assert reused.detail["documents_detected"] < fresh.detail["documents_detected"]
    for key in ("passed", "with_residual", "sampled", "rate", "residual_spans_by_label"):
        assert reused.to_dict()[key] == fresh.to_dict()[key], key


@pytest.mark.heavy  # a second calibration run (~100 s): `make test-heavy`, which CI runs too
def test_mention_swap_augmentation_trains_the_tagger_on_scored_variants_and_the_card_counts_them(scored_copy):
    """`tagger.augment_variants: 1`: the validation pass scores one variant of each labeled calibration text
    that names someone or somewhere, the head trains on them (a new key: the calibration is stale until it
    ran), and the card says how many there were. `tagger.label_thresholds: true` rides along: the choice
    runs on the stored out-of-fold probabilities and is reported per domain (this small set gives no label
    the 30 spans it needs, so every label keeps its domain's threshold, and the card says so)."""
    from curation.batches import calibration_is_current
    from curation.core.config import load_config
    from curation.core.warehouse import Warehouse
    from curation.detect.suite import detector_key, detector_suite
    from curation.score.scorer import ReferenceScorer

    config_file = scored_copy / "curation.yaml"
    before = load_config(config_file)
    model_key = ReferenceScorer(before.scoring).model_key
    warehouse = Warehouse(before.warehouse_path)
    detectors = detector_key(before, detector_suite(before.detectors))
    assert calibration_is_current(before, warehouse, model_key, detectors)
    options = "  epochs: 15\n  augment_variants: 1\n  label_thresholds: true\n"
    config_file.write_text(config_file.read_text().replace("  epochs: 15\n", options))
    config = load_config(config_file)
    assert not calibration_is_current(config, warehouse, model_key, detectors)  # the head must be retrained

    result = run_job(config_file)
    assert result.success and _checks(result) and all(_checks(result).values()), _checks(result)
    con = duckdb.connect(str(config.warehouse_path), read_only=True)
    try:
        summaries = {
            stage: json.loads(summary)
            for stage, summary in con.execute(
                "SELECT stage, arg_max(summary, created_at) FROM stage_summaries "
                "WHERE stage IN ('validation_scores', 'pii_tagger') GROUP BY stage"
            ).fetchall()
        }
    finally:
        con.close()
    tagger = summaries["pii_tagger"]
    assert tagger["augment_variants"] == 1 and tagger["augmented_texts"] > 0
    assert tagger["training_texts"] == tagger["labeled_texts"] + tagger["augmented_texts"]
    assert summaries["validation_scores"]["augmented_texts"] == tagger["augmented_texts"]
    assert calibration_is_current(config, warehouse, model_key, detectors)
    from curation.delivery.card import CardInfo, render_card

    card = render_card(CardInfo(pretty_name="x", tagger=tagger))  # the card's tagger section is this summary
    assert f"{tagger['augmented_texts']} of them mention-swap variants" in card
    assert set(tagger["label_thresholds"]) == set(tagger["thresholds"]) - {"*"}
    assert all(choice["min_spans"] == 30 for choice in tagger["label_choice"].values())
    assert "Per-label thresholds" in card
