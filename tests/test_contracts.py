"""Data contracts (great-expectations, BOOLEAN_ONLY) and the digest that lets unchanged data skip them."""

from __future__ import annotations

import polars as pl

from curation.gates.contracts import check_contract, frame_digest

SHA = "a" * 64


def _docs(**overrides) -> pl.DataFrame:
    data = {"doc_id": ["d1", "d2"], "text": [True, True], "n_chars": [5, 7], "sha256": [SHA, SHA], "kind": ["text"] * 2}
    return pl.DataFrame({**data, **overrides})


def test_documents_contract_passes_and_fails_without_values_in_the_result():
    assert check_contract("documents", _docs()).passed
    bad = check_contract("documents", _docs(doc_id=["d1", "d1"], sha256=["secret-value-1", SHA]))
    assert not bad.passed and bad.failed_expectations
    assert "secret-value-1" not in str(bad.to_dict())


def test_empty_table_fails():
    result = check_contract("documents", _docs().head(0))
    assert not result.passed and result.failed_expectations == ["table is empty"]


def test_frame_digest_is_order_free_and_sees_every_change():
    frame = _docs()
    assert frame_digest("documents", frame) == frame_digest("documents", frame.reverse())
    assert frame_digest("documents", frame) != frame_digest("documents", _docs(n_chars=[5, 8]))
    assert frame_digest("documents", frame) != frame_digest("mask_spans", frame)
    assert frame_digest("documents", frame) != frame_digest("documents", frame.head(1))


CLIENT = """
import json, sys
import polars as pl
from curation.gates.contracts import check_contract
sha = "a" * 64
good = pl.DataFrame({"doc_id": ["d1", "d2"], "text": [True, True], "n_chars": [5, 7], "sha256": [sha, sha],
                     "kind": ["text", "code"]})
bad = good.with_columns(pl.Series("doc_id", ["d1", "d1"]), pl.Series("sha256", ["secret-value-1", sha]))
verdicts = [check_contract("documents", f) for f in (good, bad)]
out = [v.to_dict() | {"passed": v.passed} for v in verdicts]
print(json.dumps({"results": out, "gx_imported": "great_expectations" in sys.modules}))
"""


def _client(env: dict) -> dict:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", CLIENT], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_contract_server_gives_the_in_process_verdicts_and_the_step_never_imports_gx():
    import os
    import stat

    from curation.gates.contract_worker import SOCKET_NAME, ContractServer
    from curation.gates.contracts import CONTRACT_SOCKET_ENV

    plain = _client({k: v for k, v in os.environ.items() if k != CONTRACT_SOCKET_ENV})
    assert plain["gx_imported"]
    with ContractServer() as server:
        assert server.wait_ready()
        folder = server.folder
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / SOCKET_NAME).stat().st_mode) == 0o600
        served = _client(dict(os.environ))
    assert not served["gx_imported"], "the step imported great_expectations although a server was up"
    assert served["results"] == plain["results"]
    assert served["results"][0]["passed"] and not served["results"][1]["passed"]
    assert "secret-value-1" not in str(served["results"])
    assert not folder.exists() and CONTRACT_SOCKET_ENV not in os.environ


def test_a_step_that_cannot_reach_the_server_validates_itself(monkeypatch, tmp_path):
    from curation.gates import contracts

    monkeypatch.setenv(contracts.CONTRACT_SOCKET_ENV, str(tmp_path / "gone.sock"))
    monkeypatch.setattr(contracts, "BIND_WAIT_S", 0.1)
    assert check_contract("documents", _docs()).passed
    assert not check_contract("documents", _docs(doc_id=["d1", "d1"])).passed


def test_the_contract_server_ends_with_the_process_that_started_it(tmp_path):
    """A CLI killed without cleanup leaves no server behind: it notices its parent is gone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    sock = str(tmp_path / "s.sock")
    starter = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'curation.gates.contract_worker', {sock!r}])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
    server_pid = int(parent.stdout.readline())
    deadline = time.monotonic() + 30
    while not (tmp_path / "s.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:  # gone, or a zombie waiting for a container's init to reap it: ended either way
            state = open(f"/proc/{server_pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.2)
    os.kill(server_pid, signal.SIGKILL)
    raise AssertionError("the contract server outlived the process that started it")
