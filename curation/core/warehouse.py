"""The DuckDB warehouse: table layout and bulk read/write helpers.

Facts (documents, token scores, detector spans, gold labels) and policy results (calibration,
mask spans, views) live in separate tables. Writes go through Arrow in bulk, never row by row.
DuckDB allows one writing process, so every stage opens, writes and closes promptly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from curation.core.private import private_db_files, private_dir
from curation.score.scorer import TokenScores

log = logging.getLogger(__name__)

# The shared calibration assets record their stage summaries and gates under this pseudo batch id.
CALIBRATION_BATCH = "__calibration__"
# The `dataset` of a document: the delivery batch, the labeled validation set, the tagger's other labeled sets
# (bundled public sets, user sets by domain).
CORPUS = "corpus"
VALIDATION = "validation"
LABELED = "labeled"

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id VARCHAR, batch_id VARCHAR, scope_id VARCHAR, kind VARCHAR, source VARCHAR, locator VARCHAR,
    text VARCHAR, sha256 VARCHAR, n_chars BIGINT, metadata VARCHAR);
CREATE TABLE IF NOT EXISTS quarantine (
    batch_id VARCHAR, source VARCHAR, locator VARCHAR, record_id VARCHAR, reason VARCHAR,
    raw_excerpt_hash VARCHAR);
CREATE TABLE IF NOT EXISTS gold_spans (
    dataset VARCHAR, doc_id VARCHAR, "start" BIGINT, "end" BIGINT, label VARCHAR);
CREATE TABLE IF NOT EXISTS validation_docs (
    dataset VARCHAR, doc_id VARCHAR, scope_id VARCHAR, kind VARCHAR, text VARCHAR, sha256 VARCHAR,
    n_chars BIGINT, split VARCHAR);
CREATE TABLE IF NOT EXISTS token_scores (
    model_key VARCHAR, doc_sha256 VARCHAR, token_idx INTEGER, char_start INTEGER, char_end INTEGER,
    nll FLOAT);
CREATE TABLE IF NOT EXISTS window_scores (
    model_key VARCHAR, doc_sha256 VARCHAR, spec VARCHAR, window_idx INTEGER, tok_start INTEGER,
    tok_end INTEGER, score DOUBLE, valid BOOLEAN);
CREATE TABLE IF NOT EXISTS detector_spans (
    dataset VARCHAR, doc_id VARCHAR, "start" BIGINT, "end" BIGINT, label VARCHAR, score DOUBLE,
    source VARCHAR);
CREATE TABLE IF NOT EXISTS calibration (
    calibration_id VARCHAR, created_at TIMESTAMP, model_key VARCHAR, policy VARCHAR, params VARCHAR,
    threshold DOUBLE, objective VARCHAR, summary VARCHAR);
CREATE TABLE IF NOT EXISTS calibration_candidates (
    calibration_id VARCHAR, policy VARCHAR, params VARCHAR, threshold DOUBLE, tpr DOUBLE, fpr DOUBLE,
    "precision" DOUBLE, f1 DOUBLE, surprise_auroc DOUBLE);
CREATE TABLE IF NOT EXISTS roc_points (
    calibration_id VARCHAR, threshold DOUBLE, tpr DOUBLE, fpr DOUBLE, "precision" DOUBLE);
CREATE TABLE IF NOT EXISTS mask_spans (
    batch_id VARCHAR, doc_id VARCHAR, "start" BIGINT, "end" BIGINT, label VARCHAR, score DOUBLE,
    source VARCHAR, calibration_id VARCHAR);
CREATE TABLE IF NOT EXISTS training_view (
    batch_id VARCHAR, doc_id VARCHAR, scope_id VARCHAR, kind VARCHAR, text VARCHAR, loss_mask_spans VARCHAR);
CREATE TABLE IF NOT EXISTS redacted_view (
    batch_id VARCHAR, doc_id VARCHAR, scope_id VARCHAR, kind VARCHAR, text VARCHAR);
CREATE TABLE IF NOT EXISTS surrogate_view (
    batch_id VARCHAR, doc_id VARCHAR, scope_id VARCHAR, kind VARCHAR, text VARCHAR, n_replacements BIGINT,
    replaced_ranges VARCHAR);
CREATE TABLE IF NOT EXISTS rewrite_chunks (
    batch_id VARCHAR, doc_id VARCHAR, chunk_index INTEGER, "start" BIGINT, "end" BIGINT, action VARCHAR,
    reason VARCHAR, labels VARCHAR, model VARCHAR);
CREATE TABLE IF NOT EXISTS audit_findings (
    audit_id VARCHAR, batch_id VARCHAR, check_name VARCHAR, doc_id VARCHAR, label VARCHAR,
    value_sha256 VARCHAR, kind VARCHAR, count BIGINT);
CREATE TABLE IF NOT EXISTS run_fingerprints (
    batch_id VARCHAR, fingerprint VARCHAR, release_id VARCHAR, run_id VARCHAR, recorded_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS deliveries (
    release_id VARCHAR, created_at TIMESTAMP, path VARCHAR, batch_ids VARCHAR, n_documents BIGINT,
    gates VARCHAR);
"""


_SCHEMA_READY: set[tuple[str, int]] = set()
# Connections shared by a ``Warehouse.session()`` on this thread, by resolved file path.
_SESSIONS = threading.local()


def _connect_when_free(path: Path, read_only: bool, timeout_s: float) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting while another process holds DuckDB's single-writer lock (parallel batch
    runs write in short transactions, so they take turns instead of failing)."""
    deadline = time.monotonic() + timeout_s
    delay, waited = 0.05, 0.0
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            if waited < 5.0 <= waited + delay:  # a long wait is visible, a short turn-taking one is not
                log.info("%s is locked by another process; waiting up to %.0fs for it", path, timeout_s)
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 2.0)


class Warehouse:
    """A DuckDB file with the curation schema; open a connection per unit of work."""

    def __init__(self, path: str | Path, lock_timeout_s: float = 300.0) -> None:
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        shared = self._session_connection()
        if shared is not None:  # inside session(): reuse its connection, it closes at session end
            yield shared
            return
        if not read_only:
            private_dir(self.path.parent)  # raw documents: the owner's eyes only, whatever the umask
        con = _connect_when_free(self.path, read_only, self.lock_timeout_s)
        try:
            if not read_only:
                private_db_files(self.path)
                key = (str(self.path.resolve()), self.path.stat().st_ino)  # the file exists once connected
                if key not in _SCHEMA_READY:  # DDL once per file per process
                    con.execute(SCHEMA + GATE_SCHEMA + BATCH_KEY_SCHEMA)
                    migrate_batch_keys(con)
                    _SCHEMA_READY.add(key)
            yield con
        finally:
            con.close()
            if not read_only:
                private_db_files(self.path)

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Share one connection among every call made inside the block on this thread.

        Opening a DuckDB file costs ~25 ms, and a short step makes many calls. The session holds the
        single-writer lock for its whole duration, so wrap short units of work only, never a model loop.
        Nested sessions on the same file reuse the outer one.
        """
        if self._session_connection() is not None:
            yield
            return
        sessions = _SESSIONS.__dict__
        with self.connect() as con:
            sessions[self._key()] = con
            try:
                yield
            finally:
                sessions.pop(self._key(), None)

    def _key(self) -> str:
        return str(self.path.resolve())

    def _session_connection(self) -> duckdb.DuckDBPyConnection | None:
        return _SESSIONS.__dict__.get(self._key())

    def query(self, sql: str, params: Sequence | None = None) -> pl.DataFrame:
        with self.connect() as con:
            return con.execute(sql, params or []).pl()

    def replace(self, table: str, frame: pl.DataFrame, where: str = "", params: Sequence | None = None) -> int:
        """Delete the rows matching ``where`` (all rows if empty) and bulk-insert ``frame``."""
        with self.transaction() as con:
            con.execute(f"DELETE FROM {table}" + (f" WHERE {where}" if where else ""), params or [])
            return insert_frame(con, table, frame)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All-or-nothing writes; rolled back on error, so a shared session connection stays usable."""
        with self.connect() as con:
            con.execute("BEGIN")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def append(self, table: str, frame: pl.DataFrame) -> int:
        with self.connect() as con:
            return insert_frame(con, table, frame)

    def row_counts(self) -> dict[str, int]:
        with self.connect() as con:
            tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
            return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in sorted(tables)}


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> int:
    """Insert by column name through Arrow (no row-by-row inserts)."""
    if frame.height == 0:
        return 0
    arrow_table = frame.to_arrow()
    con.register("_incoming", arrow_table)
    try:
        columns = ", ".join(f'"{c}"' for c in frame.columns)
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _incoming")
    finally:
        con.unregister("_incoming")
    return frame.height


def token_scores_frame(model_key: str, shas: Sequence[str], scored: Sequence[TokenScores]) -> pl.DataFrame:
    """Long-format token scores for many documents, built with numpy (no Python loop per token)."""
    lengths = [s.n_tokens for s in scored]
    if not sum(lengths):
        return pl.DataFrame(
            schema={
                "model_key": pl.String,
                "doc_sha256": pl.String,
                "token_idx": pl.Int32,
                "char_start": pl.Int32,
                "char_end": pl.Int32,
                "nll": pl.Float32,
            }
        )
    return pl.DataFrame(
        {
            "model_key": np.repeat(np.array([model_key], dtype=object), sum(lengths)),
            "doc_sha256": np.repeat(np.array(shas, dtype=object), lengths),
            "token_idx": np.concatenate([np.arange(n, dtype=np.int32) for n in lengths]),
            "char_start": np.concatenate([s.char_start for s in scored]).astype(np.int32),
            "char_end": np.concatenate([s.char_end for s in scored]).astype(np.int32),
            "nll": np.concatenate([s.nll for s in scored]).astype(np.float32),
        }
    ).with_columns(pl.col("model_key").cast(pl.String), pl.col("doc_sha256").cast(pl.String))


def cached_shas(warehouse: Warehouse, model_key: str) -> set[str]:
    frame = warehouse.query("SELECT DISTINCT doc_sha256 FROM token_scores WHERE model_key = ?", [model_key])
    return set(frame["doc_sha256"].to_list())


def load_token_scores(warehouse: Warehouse, model_key: str, shas: Sequence[str]) -> dict[str, TokenScores]:
    """Token scores per text sha256 for one model key."""
    if not shas:
        return {}
    with warehouse.connect() as con:
        con.register("_wanted", pl.DataFrame({"doc_sha256": list(set(shas))}).to_arrow())
        frame = con.execute(
            "SELECT t.doc_sha256, t.char_start, t.char_end, t.nll FROM token_scores t "
            "JOIN _wanted w USING (doc_sha256) WHERE t.model_key = ? ORDER BY t.doc_sha256, t.token_idx",
            [model_key],
        ).pl()
    out = {}
    for (sha,), group in frame.group_by(["doc_sha256"], maintain_order=True):
        out[sha] = TokenScores(
            group["char_start"].to_numpy().astype(np.int64),
            group["char_end"].to_numpy().astype(np.int64),
            group["nll"].to_numpy().astype(np.float32),
        )
    return out


def sha256_text(text: str) -> str:
    """The sha256 a text is keyed by in ``documents``, ``validation_docs`` and ``token_scores``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_summary(warehouse: Warehouse, batch_id: str, stage: str, summary: dict) -> None:
    frame = pl.DataFrame(
        {
            "batch_id": [batch_id],
            "stage": [stage],
            "summary": [json.dumps(summary, default=str)],
            "created_at": [datetime.now(UTC).replace(tzinfo=None)],
        }
    )
    warehouse.replace("stage_summaries", frame, "batch_id = ? AND stage = ?", [batch_id, stage])


def stage_summary(warehouse: Warehouse, batch_id: str, stage: str) -> dict:
    frame = warehouse.query("SELECT summary FROM stage_summaries WHERE batch_id = ? AND stage = ?", [batch_id, stage])
    return json.loads(frame["summary"][0]) if frame.height else {}


GATE_SCHEMA = """
ALTER TABLE calibration ADD COLUMN IF NOT EXISTS input_digest VARCHAR;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS content_digest VARCHAR;
CREATE TABLE IF NOT EXISTS detector_runs (
    dataset VARCHAR, doc_id VARCHAR, sha256 VARCHAR, detector_key VARCHAR);
CREATE TABLE IF NOT EXISTS stage_summaries (
    batch_id VARCHAR, stage VARCHAR, summary VARCHAR, created_at TIMESTAMP);
ALTER TABLE validation_docs ADD COLUMN IF NOT EXISTS domain VARCHAR;
CREATE TABLE IF NOT EXISTS token_tags (
    tagger_key VARCHAR, doc_sha256 VARCHAR, token_idx INTEGER, p_private FLOAT, label_idx SMALLINT,
    probs VARCHAR);
ALTER TABLE token_tags ADD COLUMN IF NOT EXISTS probs_f32 FLOAT[];
CREATE TABLE IF NOT EXISTS gate_results (
    batch_id VARCHAR, content_digest VARCHAR, check_name VARCHAR, passed BOOLEAN, detail VARCHAR,
    run_id VARCHAR, created_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS delivery_batches (
    batch_id VARCHAR, input VARCHAR, config_path VARCHAR, base_dir VARCHAR, input_digest VARCHAR,
    config_digest VARCHAR, origin VARCHAR, registered_at TIMESTAMP);
ALTER TABLE delivery_batches ADD COLUMN IF NOT EXISTS domain VARCHAR;
ALTER TABLE delivery_batches ADD COLUMN IF NOT EXISTS language VARCHAR;
"""


# Per-document facts are keyed by (batch, doc id): two batches may reuse a doc id without one replacing
# the other's spans. The validation set's rows carry CALIBRATION_BATCH. Warehouses made before this
# column existed are migrated in place by `migrate_batch_keys`.
BATCH_KEYED_TABLES = ("gold_spans", "detector_spans", "detector_runs")
BATCH_KEY_SCHEMA = "".join(
    f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS batch_id VARCHAR;\n" for table in BATCH_KEYED_TABLES
)


def migrate_batch_keys(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Give rows written before `batch_id` existed their batch; drop the rows no batch can be given.

    Validation rows belong to CALIBRATION_BATCH. A corpus row belongs to the one batch whose documents
    hold its doc id; a doc id held by several batches is ambiguous (the old layout let the last ingest
    replace the others' spans), so its rows are dropped: detector spans are recomputed by the next run of
    the batch, supplied labels are re-read by its next ingest (`curation run --force --batch-id ...`).
    Returns the rows dropped per table (nothing to do on a current warehouse: one scan of each table).
    """
    dropped: dict[str, int] = {}
    for table in BATCH_KEYED_TABLES:
        (pending,) = con.execute(f"SELECT count(*) FROM {table} WHERE batch_id IS NULL").fetchone()
        if not pending:
            continue
        con.execute("BEGIN")
        try:
            con.execute(
                f"UPDATE {table} SET batch_id = ? WHERE batch_id IS NULL AND dataset = 'validation'",
                [CALIBRATION_BATCH],
            )
            con.execute(
                f"UPDATE {table} t SET batch_id = owner.batch_id FROM ("
                "SELECT doc_id, min(batch_id) AS batch_id FROM documents GROUP BY doc_id "
                "HAVING count(DISTINCT batch_id) = 1) owner "
                "WHERE t.batch_id IS NULL AND t.dataset = 'corpus' AND t.doc_id = owner.doc_id"
            )
            (n,) = con.execute(f"SELECT count(*) FROM {table} WHERE batch_id IS NULL").fetchone()
            con.execute(f"DELETE FROM {table} WHERE batch_id IS NULL")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        if n:
            dropped[table] = int(n)
    if dropped:
        log.warning(
            "warehouse migrated to batch-keyed spans; rows of doc ids shared by several batches could not be "
            "attributed and were dropped (%s): re-run those batches with `curation run --force --batch-id ID`",
            ", ".join(f"{t}: {n}" for t, n in dropped.items()),
        )
    return dropped
