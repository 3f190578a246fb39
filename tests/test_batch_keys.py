"""Batches never overwrite each other's per-document facts, and the surrogate gate judges a batch by itself.

Real DuckDB files, the real detector suite (Presidio) and the real surrogate engine and vault.
"""

from __future__ import annotations

import dataclasses
import json

import duckdb
import polars as pl
import pytest

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, CORPUS, Warehouse
from curation.delivery.tables import internal_release_tables, release_tables
from curation.detect.stage import detect_stage
from curation.detect.suite import detector_suite
from curation.gates import release_gates as gates
from curation.ingest.stage import ingest_stage
from curation.views.convention import load_convention
from curation.views.stage import surrogate_stage
from curation.views.surrogates import SurrogateEngine
from curation.views.vault import Vault, public_id

KEY = bytes(range(32))


def _corpus(path, texts: dict[str, str], spans: dict[str, tuple[str, str]]) -> None:
    """JSONL with one record per id; ``spans`` gives (value, label) of a supplied label per id."""
    lines = []
    for doc_id, text in texts.items():
        record = {"id": doc_id, "text": text, "kind": "text", "scope_id": f"conv-{doc_id}"}
        if doc_id in spans:
            value, label = spans[doc_id]
            start = text.index(value)
            record["spans"] = [{"start": start, "end": start + len(value), "label": label}]
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _config(tmp_path, batch: str, input_path) -> CurationConfig:
    return dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id=batch, input=str(input_path))


def _facts(warehouse: Warehouse, table: str, batch: str) -> list[tuple]:
    return warehouse.query(
        f'SELECT doc_id, "start", "end", label FROM {table} WHERE dataset = ? AND batch_id = ? ORDER BY ALL',
        [CORPUS, batch],
    ).rows()

@pytest.mark.slow

def test_two_batches_sharing_doc_ids_keep_their_own_spans(tmp_path):
    """Batch b2 reuses b1's doc ids with other texts: b1's supplied labels, detector spans and the
    originals its gates check stay exactly what they were."""
    first, second = tmp_path / "b1.jsonl", tmp_path / "b2.jsonl"
    _corpus(
        first,
        {"r1": "Please email dana.whitfield@example.org about the refund.", "r2": "Call Marco Alvarez tomorrow."},
        {"r1": ("dana.whitfield@example.org", "EMAIL_ADDRESS")},
    )
    _corpus(
        second,
        {"r1": "Server 10.20.30.40 was rebooted on Tuesday night.", "r2": "Nothing private in this one at all."},
        {"r1": ("10.20.30.40", "IP_ADDRESS")},
    )
    warehouse = Warehouse(tmp_path / "w.duckdb")
    suite = detector_suite(CurationConfig().detectors)
    c1, c2 = _config(tmp_path, "b1", first), _config(tmp_path, "b2", second)
    ingest_stage(c1, warehouse)
    detect_stage(c1, warehouse, suite, datasets=(CORPUS,))
    gold_before, detected_before = _facts(warehouse, "gold_spans", "b1"), _facts(warehouse, "detector_spans", "b1")
    originals_before = sorted(gates.original_values(warehouse, "b1"))
    assert gold_before and detected_before and originals_before

    ingest_stage(c2, warehouse)
    detect_stage(c2, warehouse, suite, datasets=(CORPUS,))
    assert _facts(warehouse, "gold_spans", "b1") == gold_before
    assert _facts(warehouse, "detector_spans", "b1") == detected_before
    assert sorted(gates.original_values(warehouse, "b1")) == originals_before
    assert _facts(warehouse, "gold_spans", "b2") != gold_before  # b2 has its own, different facts
    labels = {label for label, _ in gates.original_values(warehouse, "b2")}
    assert "EMAIL_ADDRESS" not in labels

    # Re-running b1 afterwards finds its detector results cached under its own key, not b2's.
    again = detect_stage(c1, warehouse, suite, datasets=(CORPUS,))
    assert again[CORPUS]["documents_cached"] == 2 and _facts(warehouse, "detector_spans", "b1") == detected_before


def _old_layout(path) -> None:
    """A warehouse as written before batch keys: gold/detector spans keyed by (dataset, doc id) only."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE documents (doc_id VARCHAR, batch_id VARCHAR, scope_id VARCHAR, kind VARCHAR, source VARCHAR,"
        " locator VARCHAR, text VARCHAR, sha256 VARCHAR, n_chars BIGINT, metadata VARCHAR)"
    )
    con.execute(
        'CREATE TABLE gold_spans (dataset VARCHAR, doc_id VARCHAR, "start" BIGINT, "end" BIGINT, label VARCHAR)'
    )
    con.execute(
        'CREATE TABLE detector_spans (dataset VARCHAR, doc_id VARCHAR, "start" BIGINT, "end" BIGINT, label VARCHAR,'
        " score DOUBLE, source VARCHAR)"
    )
    con.execute("CREATE TABLE detector_runs (dataset VARCHAR, doc_id VARCHAR, sha256 VARCHAR, detector_key VARCHAR)")
    con.execute(
        "INSERT INTO documents (doc_id, batch_id, text) VALUES ('only-a', 'a', 'x'), ('shared', 'a', 'y'), "
        "('shared', 'b', 'z')"
    )
    for doc_id, dataset in (("only-a", "corpus"), ("shared", "corpus"), ("v1", "validation")):
        con.execute("INSERT INTO gold_spans VALUES (?, ?, 0, 1, 'PERSON')", [dataset, doc_id])
        con.execute("INSERT INTO detector_spans VALUES (?, ?, 0, 1, 'PERSON', 1.0, 'x')", [dataset, doc_id])
        con.execute("INSERT INTO detector_runs VALUES (?, ?, 'sha', 'k')", [dataset, doc_id])
    con.close()


def test_old_warehouse_is_migrated_to_batch_keys(tmp_path, caplog):
    path = tmp_path / "old.duckdb"
    _old_layout(path)
    warehouse = Warehouse(path)
    for table in ("gold_spans", "detector_spans", "detector_runs"):
        rows = warehouse.query(f"SELECT dataset, doc_id, batch_id FROM {table} ORDER BY ALL").rows()
        # attributable rows get their batch; the doc id two batches share cannot be attributed: dropped
        assert rows == [("corpus", "only-a", "a"), ("validation", "v1", CALIBRATION_BATCH)], table
    assert "re-run those batches" in caplog.text and "gold_spans: 1" in caplog.text
    assert Warehouse(path).query("SELECT count(*) AS n FROM gold_spans")["n"][0] == 2  # idempotent


def _surrogate_batch(tmp_path, warehouse: Warehouse, vault: Vault, batch: str, texts: dict[str, str], names):
    """Documents + PERSON mask spans of one batch, then the real surrogate stage."""
    docs = pl.DataFrame(
        {
            "doc_id": list(texts),
            "batch_id": [batch] * len(texts),
            "scope_id": ["conv-1"] * len(texts),
            "kind": ["text"] * len(texts),
            "text": list(texts.values()),
        }
    )
    warehouse.replace("documents", docs, "batch_id = ?", [batch])
    rows = [
        (batch, doc_id, text.index(name), text.index(name) + len(name), "PERSON", 1.0, "detector", "c")
        for doc_id, text in texts.items()
        for name in names
        if name in text
    ]
    frame = pl.DataFrame(
        rows,
        schema=["batch_id", "doc_id", "start", "end", "label", "score", "source", "calibration_id"],
        orient="row",
    )
    warehouse.replace("mask_spans", frame, "batch_id = ?", [batch])
    engine = SurrogateEngine(KEY, load_convention(), "k1")
    config = dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id=batch)
    surrogate_stage(config, warehouse, engine, vault)
    return engine

@pytest.mark.slow

def test_surrogate_consistency_judges_a_batch_by_itself(tmp_path):
    """A later batch whose surrogate happens to equal an original of batch a (here: a's names are b's
    surrogate choices' originals) does not fail a's gate; each batch is checked on its own surrogates."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    with Vault(tmp_path / "v.duckdb") as vault:
        engine_a = _surrogate_batch(
            tmp_path,
            warehouse,
            vault,
            "a",
            {"d1": "Dana Whitfield called.", "d2": "DANA WHITFIELD again."},
            ["Dana Whitfield", "DANA WHITFIELD"],
        )
        surrogate_a = engine_a.surrogate("conversation:conv-1", "PERSON", "Dana Whitfield")
        # Batch b's original is a's surrogate: b never uses it as a surrogate, but a's record of it stays.
        _surrogate_batch(tmp_path, warehouse, vault, "b", {"d1": f"{surrogate_a} wrote back."}, [surrogate_a])
        for batch in ("a", "b"):
            result = gates.surrogate_consistency(
                vault, KEY, gates.original_values(warehouse, batch), batch_id=batch, replacements=1
            )
            assert result.passed, (batch, result.detail)
            assert result.detail["scope"] == "batch" and result.detail["vault_records"] >= 1
        # The whole-vault view mixes batches: a's surrogate is b's original, the old false alarm.
        mixed = gates.surrogate_consistency(vault, KEY, gates.original_values(warehouse, "b"))
        assert mixed.detail["originals_reused"] >= 1
        # A batch with replacements but no surrogate record is no evidence: it fails.
        empty = gates.surrogate_consistency(vault, KEY, [], batch_id="never-run", replacements=3)
        assert not empty.passed and "no surrogate records" in empty.detail["reason"]


def test_inconsistent_surrogates_within_a_batch_fail(tmp_path):
    from curation.views.vault import VaultRecord

    with Vault(tmp_path / "v.duckdb") as vault:
        vault.replace_batch_records(
            "a",
            [
                VaultRecord("conversation:c", "PERSON", "h1", "Mara Jones", "k"),
                VaultRecord("conversation:c", "PERSON", "h1", "MARA JONES", "k"),  # a spelling: agrees
                VaultRecord("conversation:c", "PERSON", "h2", "Ivo Berg", "k"),
                VaultRecord("conversation:c", "PERSON", "h2", "Lena Holt", "k"),  # same value, two surrogates
            ],
        )
        result = gates.surrogate_consistency(vault, KEY, [], batch_id="a", replacements=4)
    assert not result.passed and result.detail["conflicting_mappings"] == 1


def test_only_invented_surrogates_must_differ_from_originals(tmp_path):
    """A shifted date may equal another original date (the convention keeps intervals), a tag invents
    nothing: both are reported, neither fails; an invented surrogate equal to an original fails."""
    from curation.views.vault import VaultRecord, hmac_value

    originals = [("DATE_TIME", "2022"), ("PERSON", "Ivo Berg")]
    with Vault(tmp_path / "v.duckdb") as vault:
        records = [
            VaultRecord("conversation:c", "DATE_TIME", hmac_value(KEY, "2023", "DATE_TIME"), "2022", "k", "date_shift"),
            VaultRecord("conversation:c", "PERSON", "h1", "[PERSON]", "k", "typed_tag"),
        ]
        vault.replace_batch_records("a", records)
        passed = gates.surrogate_consistency(vault, KEY, originals, batch_id="a", replacements=2)
        vault.replace_batch_records("b", [*records, VaultRecord("conversation:c", "PERSON", "h2", "Ivo Berg", "k")])
        failed = gates.surrogate_consistency(vault, KEY, originals, batch_id="b", replacements=3)
    assert passed.passed and passed.detail["equal_to_an_original_by_style"] == {"date_shift": 1}
    assert not failed.passed and failed.detail["originals_reused"] == 1


def test_a_vault_from_before_styles_reads_every_record_as_invented(tmp_path):
    """Vaults written before records carried a style gain the column; old rows count as surrogates (strict)."""
    path = tmp_path / "v.duckdb"
    with Vault(path):
        pass
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE batch_surrogates DROP COLUMN style")
    con.execute("INSERT INTO batch_surrogates VALUES ('a', 's', 'DATE_TIME', 'h', '2022', 'k')")
    con.close()
    with Vault(path) as vault:
        (record,) = vault.batch_records("a")
    assert record.style == "surrogate" and record.surrogate == "2022"


def test_release_ids_are_rekeyed_and_mapped_in_the_vault_only(tmp_path):
    """A record id that is an email never reaches a release table; the vault maps the public id back."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    doc_id = "dana.whitfield@example.org"
    with Vault(tmp_path / "v.duckdb") as vault:
        _surrogate_batch(tmp_path, warehouse, vault, "a", {doc_id: "Dana Whitfield called."}, ["Dana Whitfield"])
        warehouse.append(
            "redacted_view",
            pl.DataFrame({"batch_id": ["a"], "doc_id": [doc_id], "scope_id": ["conv-1"], "kind": ["text"],
                          "text": ["[PERSON] called."]}),
        )  # fmt: skip
        mapping = vault.release_ids("a")
    config = dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id="a")
    (tmp_path / ".curation").mkdir(exist_ok=True)
    key_file = tmp_path / ".curation" / "dev-hmac.key"
    key_file.write_text(f"# curation DEV hmac key: not for releases\n{KEY.hex()}\n")
    key_file.chmod(0o600)
    tables = release_tables(config, warehouse)
    internal = internal_release_tables(config, warehouse)
    for name, frame in tables.items():
        assert doc_id not in frame["doc_id"].to_list() and "conv-1" not in frame["scope_id"].to_list()
        assert frame["doc_id"].to_list() == [public_id(KEY, "a", "doc_id", doc_id, "doc")]
        assert mapping[frame["doc_id"][0]] == doc_id
        assert frame["text"].to_list() == internal[name]["text"].to_list()
    assert public_id(KEY, "a", "doc_id", doc_id) != public_id(KEY, "b", "doc_id", doc_id)  # unlinkable


def test_second_batch_with_shared_ids_then_forced_rerun_passes_every_gate(scored_copy):
    """The real job: batch `other` reuses tiny's doc ids with other texts; re-running tiny afterwards
    (as `curation run --force` does) passes every gate on the same facts as before, and releases carry
    no original doc id."""
    from tests.helpers import run_job

    config_file = scored_copy / "curation.yaml"
    records = [json.loads(line) for line in (scored_copy / "corpus.jsonl").read_text().splitlines() if line.strip()]
    other = []
    for i, record in enumerate(records[:4]):
        email = f"bertram.quaile{i}@example.net"
        text = f"Note {i}: Bertram Quaile asked us to write to {email} about the renewal of contract {i}."
        start = text.index(email)
        spans = [{"start": start, "end": start + len(email), "label": "EMAIL_ADDRESS"}]
        other.append(
            {"id": record["id"], "scope_id": record.get("scope_id"), "kind": "text", "text": text, "spans": spans}
        )
    other_file = scored_copy / "other.jsonl"
    other_file.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    warehouse = Warehouse(scored_copy / ".curation" / "warehouse.duckdb")
    gold_before = _facts(warehouse, "gold_spans", "tiny")
    detected_before = _facts(warehouse, "detector_spans", "tiny")

    first = run_job(config_file, batch_id="other", input=str(other_file))
    assert _gate_results(first)["surrogate_consistency"] is True
    again = run_job(config_file)
    results = _gate_results(again)
    # The calibration is current, so this run leaves it (and its health check) alone: the release rests on
    # the recorded calibration_health of that calibration, which the release asset re-reads.
    batch_gates = [name for name in gates.REQUIRED_GATES if name != gates.CALIBRATION_HEALTH]
    assert all(results[name] for name in batch_gates), results
    assert _facts(warehouse, "gold_spans", "tiny") == gold_before
    assert _facts(warehouse, "detector_spans", "tiny") == detected_before
    release = next(  # a new release, or the earlier one when its text is unchanged (releases are immutable)
        e.event_specific_data.materialization.metadata["path"].value
        for e in again.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
        and e.event_specific_data.materialization.asset_key.to_user_string() == "release"
    )
    ids = set(duckdb.sql(f"SELECT doc_id FROM read_parquet('{release}/data/*/*.parquet')").fetchall())
    assert ids and not ids & {(r["id"],) for r in records}


def _gate_results(result) -> dict[str, bool]:
    return {
        e.event_specific_data.asset_check_key.name: e.event_specific_data.passed
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
