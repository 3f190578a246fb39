"""The surrogate vault and the HMAC key: what links a release back to its originals, kept apart.

The vault is a separate DuckDB file, readable only by its owner, holding keyed HMACs of the
normalized originals (never the originals) next to their surrogates. An auditor holding the key
can test whether a release token equals a recorded original with :func:`hmac_value`, but the
vault alone reveals nothing about the original values.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import stat
import tempfile
import unicodedata
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from curation.core import spans as S
from curation.core.honorifics import titles_pattern
from curation.core.private import private_db_files, private_dir, private_file
from curation.core.textnorm import fold

RELEASE_ID_COLUMNS = {"doc_id": "doc", "scope_id": "scope"}

log = logging.getLogger(__name__)

DEFAULT_KEY_ENV = "CURATION_HMAC_KEY"
DEFAULT_DEV_KEY_FILE = Path(".curation") / "dev-hmac.key"
DEV_KEY_HEADER = "# curation DEV hmac key: not for releases"
MIN_KEY_BYTES = 16

_TITLE_RE = re.compile(r"^(?:(?:" + titles_pattern() + r")\.?\s+)+", re.IGNORECASE)
_POSSESSIVE_RE = re.compile(r"['\u2019]s?$")


@dataclass(frozen=True, slots=True)
class VaultRecord:
    """One original -> surrogate mapping, with the original only as a keyed HMAC."""

    scope_id: str
    entity_type: str
    value_hmac: str
    surrogate: str
    key_id: str
    # How the text was made (the convention's style: surrogate, date_shift, generalize, typed_tag, ...).
    # Only invented values ("surrogate") must differ from every original; a shifted date may equal
    # another original date, and a tag or a generalization is no value of its own.
    style: str = "surrogate"


@dataclass(frozen=True)
class KeyInfo:
    """The HMAC key with a short public fingerprint; the key itself never appears in reprs."""

    key: bytes = field(repr=False)
    key_id: str
    is_dev: bool


class HmacKeyError(LookupError):
    """No usable HMAC key; the message says where one was looked for, never the key material."""


def normalize_value(entity_type: str, value: str) -> str:
    """Canonical form of an original, so trivially different spellings share one HMAC: "Zan\u200bgwill"
    (a zero-width space) and a Cyrillic-"а" spelling are the person "Zangwill" (``textnorm.fold``); a
    credential keeps its exact characters (NFKC only)."""
    if entity_type in S.CREDENTIAL_LABELS:
        return unicodedata.normalize("NFKC", value).strip()
    text = fold(value).strip()
    if entity_type == S.PERSON:
        text = _POSSESSIVE_RE.sub("", _TITLE_RE.sub("", text))
        return " ".join(re.split(r"[\s,]+", text.casefold())).strip()
    if entity_type in (S.PHONE_NUMBER, S.CREDIT_CARD, S.US_SSN):
        digits = re.sub(r"\D", "", text)
        return digits or text.casefold()
    if entity_type in (S.IBAN_CODE, S.ACCOUNT_ID, S.ID_NUMBER):
        return re.sub(r"[\s-]", "", text).upper()
    if entity_type == S.IP_ADDRESS:
        try:
            return ipaddress.ip_address(text).compressed
        except ValueError:
            return text.casefold()
    return " ".join(text.casefold().split())


def hmac_value(key: bytes, value: str, entity_type: str) -> str:
    """Scope-free hex HMAC of a normalized original: what the vault stores and an auditor recomputes."""
    message = _frame("value", entity_type, normalize_value(entity_type, value))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def public_id(key: bytes, batch_id: str, id_kind: str, original_id: str, prefix: str = "doc") -> str:
    """The id a release carries instead of a record id (which may itself be private, e.g. an email):
    a keyed HMAC of (batch, kind, id), stable across re-runs of the batch, unlinkable across batches and
    not reversible without the key. The vault keeps the map back (`Vault.replace_release_ids`)."""
    digest = hmac.new(key, _frame("release-id", batch_id, id_kind, original_id), hashlib.sha256).hexdigest()
    return f"{prefix}-{digest[:20]}"


def _frame(*parts: str) -> bytes:
    """Length-prefixed join, so no choice of parts can collide with another (unlike a '|' join)."""
    out = bytearray()
    for part in parts:
        raw = part.encode("utf-8")
        out += len(raw).to_bytes(4, "big") + raw
    return bytes(out)


def key_fingerprint(key: bytes) -> str:
    """Short public id of a key: first 12 hex of sha256("curation-key-id"|key)."""
    return hashlib.sha256(b"curation-key-id|" + key).hexdigest()[:12]


def load_key(
    env_var: str = DEFAULT_KEY_ENV,
    key_file: Path | str | None = None,
    create_dev_key: bool = False,
) -> KeyInfo:
    """The HMAC key from ``env_var`` (hex or base64), else ``key_file``, else a new dev key file."""
    raw = os.environ.get(env_var)
    if raw:
        key = _decode_key(raw, f"environment variable {env_var}")
        return KeyInfo(key, key_fingerprint(key), False)
    path = Path(key_file) if key_file is not None else DEFAULT_DEV_KEY_FILE
    if path.exists():
        return _read_key_file(path)
    if not create_dev_key:
        raise HmacKeyError(
            f"no HMAC key: set {env_var} (hex or base64, >= {MIN_KEY_BYTES} bytes) or provide "
            f"a key file (looked for {path}); pass create_dev_key=True for a local dev key"
        )
    return _create_dev_key(path)


def configured_key(config) -> KeyInfo:
    """The key a run with this `CurationConfig` uses: env var, else the configured key file, else (when the
    config allows dev keys) `.curation/dev-hmac.key`, created on first use."""
    s = config.surrogates
    key_file = config.path(s.key_file) if s.key_file else config.path(".curation/dev-hmac.key")
    return load_key(env_var=s.key_env, key_file=key_file, create_dev_key=s.allow_dev_key)


def _decode_key(raw: str, where: str) -> bytes:
    text = raw.strip()
    key: bytes | None = None
    if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
        key = bytes.fromhex(text)
    else:
        for altchars in (None, b"-_"):
            try:
                key = base64.b64decode(text + "=" * (-len(text) % 4), altchars=altchars, validate=True)
                break
            except (binascii.Error, ValueError):
                continue
    if key is None:
        raise HmacKeyError(f"{where} is neither hex nor base64")
    if len(key) < MIN_KEY_BYTES:
        raise HmacKeyError(f"{where} decodes to {len(key)} bytes; need at least {MIN_KEY_BYTES}")
    return key


def _read_key_file(path: Path) -> KeyInfo:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        warnings.warn(f"key file {path} was readable by group/others (mode {mode:o}); made it 0600", stacklevel=3)
        private_file(path)
    lines = [ln.strip() for ln in path.read_text(encoding="ascii").splitlines() if ln.strip()]
    is_dev = DEV_KEY_HEADER in lines
    body = [ln for ln in lines if not ln.startswith("#")]
    if len(body) != 1:
        raise HmacKeyError(f"key file {path} must hold exactly one hex or base64 line")
    key = _decode_key(body[0], f"key file {path}")
    key_id = key_fingerprint(key)
    return KeyInfo(key, f"dev-{key_id}" if is_dev else key_id, is_dev)


def _create_dev_key(path: Path) -> KeyInfo:
    private_dir(path.parent)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(f"{DEV_KEY_HEADER}\n{key.hex()}\n")
    os.chmod(path, 0o600)
    key_id = f"dev-{key_fingerprint(key)}"
    log.info("created a development HMAC key %s at %s; do not use it for releases", key_id, path)  # callers say it once
    return KeyInfo(key, key_id, True)


def _create_private_db(path: Path) -> None:
    """Create an empty DuckDB file at ``path`` that is 0600 from its first byte.

    The name is claimed with os.open(0o600) first; duckdb rejects an empty file, so the database
    is initialized inside a private (0700) temporary directory and renamed over the placeholder.
    A concurrent run that claimed the name first wins; this one waits for its file to be complete.
    """
    import duckdb

    private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        _wait_until_initialized(path)
        return
    os.chmod(path, 0o600)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".vault-") as tmp:
        staged = Path(tmp) / path.name
        duckdb.connect(str(staged)).close()
        os.chmod(staged, 0o600)
        os.replace(staged, path)
    os.chmod(path, 0o600)


def _wait_until_initialized(path: Path, timeout_s: float = 30.0) -> None:
    """Another process claimed the vault's name and is initializing it: wait for a non-empty file."""
    import time

    deadline = time.monotonic() + timeout_s
    while path.exists() and path.stat().st_size == 0 and time.monotonic() < deadline:
        time.sleep(0.05)


class Vault:
    """DuckDB file mapping (scope, type, HMAC of original) -> surrogate, private to its owner."""

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS surrogate_map (
            scope_id VARCHAR NOT NULL,
            entity_type VARCHAR NOT NULL,
            value_hmac VARCHAR NOT NULL,
            surrogate VARCHAR NOT NULL,
            key_id VARCHAR NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (scope_id, entity_type, value_hmac)
        );
        CREATE TABLE IF NOT EXISTS audit_copy (
            batch_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            PRIMARY KEY (batch_id, doc_id)
        );
        CREATE TABLE IF NOT EXISTS batch_surrogates (
            batch_id VARCHAR NOT NULL,
            scope_id VARCHAR NOT NULL,
            entity_type VARCHAR NOT NULL,
            value_hmac VARCHAR NOT NULL,
            surrogate VARCHAR NOT NULL,
            key_id VARCHAR NOT NULL,
            style VARCHAR NOT NULL DEFAULT 'surrogate'
        );
        ALTER TABLE batch_surrogates ADD COLUMN IF NOT EXISTS style VARCHAR DEFAULT 'surrogate';
        CREATE TABLE IF NOT EXISTS release_ids (
            batch_id VARCHAR NOT NULL,
            id_kind VARCHAR NOT NULL,
            original_id VARCHAR NOT NULL,
            public_id VARCHAR NOT NULL,
            key_id VARCHAR NOT NULL,
            PRIMARY KEY (batch_id, id_kind, original_id)
        )
    """

    def __init__(self, path: Path | str, lock_timeout_s: float = 300.0) -> None:
        # local: keeps `import curation.views.surrogates` free of the database driver
        from curation.core.warehouse import _connect_when_free

        self.path = Path(path)
        if not self.path.exists():
            _create_private_db(self.path)
        else:
            private_dir(self.path.parent)
        # DuckDB allows one writing process: a concurrent batch waits for its turn, like the warehouse
        self._con = _connect_when_free(self.path, read_only=False, timeout_s=lock_timeout_s)
        self._con.execute(self.SCHEMA)
        self._tighten()

    def __repr__(self) -> str:
        return f"Vault({str(self.path)!r})"

    def _tighten(self) -> None:
        private_db_files(self.path)

    def upsert(self, records: Iterable[VaultRecord]) -> int:
        """Insert or update records (key: scope, type, value HMAC); returns how many were written."""
        import polars as pl

        columns = ("scope_id", "entity_type", "value_hmac", "surrogate", "key_id")
        rows = [(r.scope_id, r.entity_type, r.value_hmac, r.surrogate, r.key_id) for r in records]
        if not rows:
            return 0
        incoming = pl.DataFrame(rows, schema=dict.fromkeys(columns, pl.String), orient="row").unique(
            subset=["scope_id", "entity_type", "value_hmac"], keep="last", maintain_order=True
        )
        self._con.register("_incoming", incoming.to_arrow())  # bulk through Arrow, not row by row
        try:
            self._con.execute(
                """
                INSERT INTO surrogate_map (scope_id, entity_type, value_hmac, surrogate, key_id)
                SELECT scope_id, entity_type, value_hmac, surrogate, key_id FROM _incoming
                ON CONFLICT (scope_id, entity_type, value_hmac)
                DO UPDATE SET surrogate = excluded.surrogate, key_id = excluded.key_id
                """
            )
        finally:
            self._con.unregister("_incoming")
        self._con.execute("CHECKPOINT")
        self._tighten()
        return len(rows)

    def known_hmacs(self, entity_type: str | None = None, key_id: str | None = None) -> set[str]:
        """Every recorded value HMAC (optionally of one type / key), for leak audits of release text."""
        sql, params = "SELECT DISTINCT value_hmac FROM surrogate_map WHERE 1=1", []
        if entity_type is not None:
            sql, params = sql + " AND entity_type = ?", [*params, entity_type]
        if key_id is not None:
            sql, params = sql + " AND key_id = ?", [*params, key_id]
        return {row[0] for row in self._con.execute(sql, params).fetchall()}

    def lookup(self, scope_id: str, entity_type: str, value_hmac: str) -> str | None:
        """The surrogate recorded for one original in one scope, or None."""
        row = self._con.execute(
            "SELECT surrogate FROM surrogate_map WHERE scope_id = ? AND entity_type = ? AND value_hmac = ?",
            [scope_id, entity_type, value_hmac],
        ).fetchone()
        return None if row is None else str(row[0])

    def replace_audit_copy(self, batch_id: str, rows: Iterable[tuple[str, str]]) -> int:
        """Store the batch's reviewer copy (doc_id, text with indexed tags such as [PERSON_1]): same value,
        same index within a scope. Kept here, next to the map, because it is for vault holders only."""
        return self._replace_rows("audit_copy", batch_id, [(batch_id, doc_id, text) for doc_id, text in rows], 3)

    def audit_copy(self, batch_id: str) -> dict[str, str]:
        rows = self._con.execute("SELECT doc_id, text FROM audit_copy WHERE batch_id = ?", [batch_id]).fetchall()
        return dict(rows)

    def replace_batch_records(self, batch_id: str, records: Iterable[VaultRecord]) -> int:
        """Store every (scope, type, original HMAC, surrogate) one batch's text uses, replacing that batch's
        previous rows: what `surrogate_consistency` judges the batch by (not other batches' history)."""
        rows = sorted(
            {(batch_id, r.scope_id, r.entity_type, r.value_hmac, r.surrogate, r.key_id, r.style) for r in records}
        )
        return self._replace_rows("batch_surrogates", batch_id, rows, 7)

    def batch_records(self, batch_id: str) -> list[VaultRecord]:
        rows = self._con.execute(
            "SELECT scope_id, entity_type, value_hmac, surrogate, key_id, coalesce(style, 'surrogate') "
            "FROM batch_surrogates "
            "WHERE batch_id = ? ORDER BY ALL",
            [batch_id],
        ).fetchall()
        return [VaultRecord(*row) for row in rows]

    def replace_release_ids(self, batch_id: str, mapping: Iterable[tuple[str, str, str]], key_id: str) -> int:
        """Store a batch's (id kind, original id, public id) map: record ids are data, so releases carry
        only the public ids, and only vault holders can map them back."""
        rows = sorted({(batch_id, kind, original, public, key_id) for kind, original, public in mapping})
        return self._replace_rows("release_ids", batch_id, rows, 5)

    def release_ids(self, batch_id: str, id_kind: str = "doc_id") -> dict[str, str]:
        """Public id -> original id of one batch."""
        rows = self._con.execute(
            "SELECT public_id, original_id FROM release_ids WHERE batch_id = ? AND id_kind = ?", [batch_id, id_kind]
        ).fetchall()
        return dict(rows)

    def _replace_rows(self, table: str, batch_id: str, rows: list[tuple], width: int) -> int:
        """Replace one batch's rows of ``table`` in one transaction, in bulk through Arrow."""
        import polars as pl

        columns = [d[0] for d in self._con.execute(f"SELECT * FROM {table} LIMIT 0").description][:width]
        frame = pl.DataFrame(rows, schema=dict.fromkeys(columns, pl.String), orient="row")
        self._con.execute("BEGIN")
        try:
            self._con.execute(f"DELETE FROM {table} WHERE batch_id = ?", [batch_id])
            self._con.register("_incoming", frame.to_arrow())
            self._con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
            self._con.unregister("_incoming")
        except BaseException:
            self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")
        self._con.execute("CHECKPOINT")
        self._tighten()
        return len(rows)

    def records(self) -> Iterator[VaultRecord]:
        rows = self._con.execute(
            "SELECT scope_id, entity_type, value_hmac, surrogate, key_id FROM surrogate_map ORDER BY ALL"
        ).fetchall()
        for row in rows:
            yield VaultRecord(*row)

    def count(self) -> int:
        row = self._con.execute("SELECT count(*) FROM surrogate_map").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._con.close()
        self._tighten()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The ids a release replaces by public ids (column -> public id prefix); the map is kept in the vault.
