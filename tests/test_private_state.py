"""Private state stays private and concurrent runs take turns: `.curation/`, the warehouse (raw text), the
vault and the key are 0700/0600 whatever the umask and the key source; two processes writing the vault at
once both succeed (the second waits for DuckDB's lock, as the warehouse does)."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import polars as pl
import pytest

from curation.core.config import load_config
from curation.core.warehouse import Warehouse
from curation.views.vault import Vault, VaultRecord, configured_key


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def loose_umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def _write_documents(config) -> None:
    Warehouse(config.warehouse_path).append(
        "documents", pl.DataFrame({"doc_id": ["d1"], "batch_id": ["b"], "text": ["Ann Example, 555-0100"]})
    )


def test_state_is_private_with_a_real_key(tmp_path: Path, loose_umask, monkeypatch) -> None:
    """The issue's case: with CURATION_HMAC_KEY set no key file is written first, and `.curation/` used to
    inherit the umask (0755) with a world-readable warehouse (0644)."""
    monkeypatch.setenv("CURATION_HMAC_KEY", "ab" * 32)
    config = load_config(None, base_dir=str(tmp_path))
    assert not configured_key(config).is_dev
    _write_documents(config)
    with Vault(config.vault_path) as vault:
        vault.upsert([VaultRecord("s", "PERSON", "h" * 64, "Bo Surrogate", "k")])
    state = tmp_path / ".curation"
    assert _mode(state) == 0o700
    assert _mode(config.warehouse_path) == 0o600
    assert _mode(config.vault_path) == 0o600
    leftovers = [p for p in state.iterdir() if p.is_file() and _mode(p) != 0o600]
    assert leftovers == []


def test_state_is_private_with_the_dev_key(tmp_path: Path, loose_umask, monkeypatch) -> None:
    monkeypatch.delenv("CURATION_HMAC_KEY", raising=False)
    config = load_config(None, base_dir=str(tmp_path))
    _write_documents(config)  # the warehouse first, then the key: the order no longer matters
    info = configured_key(config)
    assert info.is_dev
    key_file = tmp_path / ".curation" / "dev-hmac.key"
    assert _mode(key_file) == 0o600 and _mode(tmp_path / ".curation") == 0o700


def test_existing_loose_state_folder_and_key_file_are_tightened(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CURATION_HMAC_KEY", raising=False)
    state = tmp_path / ".curation"
    state.mkdir()
    state.chmod(0o755)
    key_file = tmp_path / "delivery.key"
    key_file.write_text("cd" * 32 + "\n", encoding="ascii")
    key_file.chmod(0o644)
    config = load_config(None, base_dir=str(tmp_path), surrogates={"key_file": "delivery.key"})
    with pytest.warns(UserWarning, match="made it 0600"):
        info = configured_key(config)
    assert not info.is_dev and _mode(key_file) == 0o600
    _write_documents(config)
    assert _mode(state) == 0o700 and _mode(config.warehouse_path) == 0o600


def _vault_writer(path: str, worker: int, hold_s: float, started, results) -> None:
    """One process: open the vault, write its records, keep the file (and its lock) for a while."""
    import time

    try:
        asked = time.monotonic()
        with Vault(path, lock_timeout_s=60) as vault:
            opened_after = time.monotonic() - asked
            started.set()
            vault.upsert([VaultRecord(f"scope-{worker}", "PERSON", f"{worker:064x}", f"Name {worker}", "k")])
            time.sleep(hold_s)
        results.put((worker, ("ok", opened_after)))
    except Exception as exc:  # reported to the test, which fails on it
        results.put((worker, (f"{type(exc).__name__}: {exc}", None)))

@pytest.mark.slow

def test_two_concurrent_vault_writers_both_succeed(tmp_path: Path) -> None:
    path = str(tmp_path / ".curation" / "vault.duckdb")
    ctx = multiprocessing.get_context("spawn")
    started, results = ctx.Event(), ctx.Queue()
    first = ctx.Process(target=_vault_writer, args=(path, 1, 2.0, started, results))
    first.start()
    assert started.wait(60), "the first writer never opened the vault"
    second_started = ctx.Event()
    second = ctx.Process(target=_vault_writer, args=(path, 2, 0.0, second_started, results))
    second.start()  # starts while the first holds the lock
    first.join(90)
    second.join(90)
    outcomes = dict(results.get(timeout=5) for _ in range(2))
    assert {worker: status for worker, (status, _) in outcomes.items()} == {1: "ok", 2: "ok"}
    assert outcomes[2][1] > 0.5, "the second writer should have waited for the first one's lock"
    with Vault(path) as vault:
        assert {r.scope_id for r in vault.records()} == {"scope-1", "scope-2"}
