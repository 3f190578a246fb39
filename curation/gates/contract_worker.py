"""The contract server: great_expectations imported and run in a process of its own.

`curation run` starts it as the run starts (`ContractServer`), so its ~2 s import overlaps the CLI's
start and the run's launch instead of sitting inside the `document_contract` step, and no step process
(nor the fork server) imports great_expectations at all. Steps find it through ``CONTRACT_SOCKET_ENV``
(inherited by the run's processes) and send each contract's frame over a Unix socket in a 0700 folder;
the verdict comes back as JSON (BOOLEAN_ONLY: which expectations failed, never a value). A step that
cannot reach it validates in its own process: the contract always runs."""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from curation.gates.contracts import CONTRACT_SOCKET_ENV, read_message, validate_in_process

SOCKET_NAME = "contracts.sock"
PARENT_POLL_S = 2.0  # how often an idle server checks that the process that started it is still alive


def serve(path: str) -> None:
    """Bind first (clients may connect while great_expectations imports), then answer one request per
    connection until the parent stops this process, or ends without stopping it."""
    parent = os.getppid()  # before the import: the parent may end while it runs
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(16)
    import json

    import great_expectations  # noqa: F401  (the point of this process: imported once, before requests)
    import polars as pl

    server.settimeout(PARENT_POLL_S)
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the CLI is gone (even killed): nothing will stop this process
                return
            continue
        conn.settimeout(None)
        with conn, conn.makefile("rb") as stream:
            try:
                message = read_message(stream)
                if message is None:
                    continue
                header, payload = message
                result = validate_in_process(header["kind"], pl.read_ipc(io.BytesIO(payload)))
                answer = {
                    "passed": result.passed,
                    "rows": result.rows,
                    "failed_expectations": result.failed_expectations,
                }
            except Exception as exc:  # the step falls back to validating itself; the type only, no values
                answer = {"error": type(exc).__name__}
            conn.sendall(json.dumps(answer).encode() + b"\n")


class ContractServer:
    """A contract server for this process and its children: started on enter (the socket's folder is
    private, 0700), its address exported in ``CONTRACT_SOCKET_ENV``, stopped and removed on exit."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.process: subprocess.Popen | None = None
        self._previous: str | None = None

    def __enter__(self) -> ContractServer:
        self.folder = Path(tempfile.mkdtemp(prefix="curation-contracts-"))  # mkdtemp: mode 0700
        path = str(self.folder / SOCKET_NAME)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "curation.gates.contract_worker", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "GX_ANALYTICS_ENABLED": "False"},
        )
        self._previous = os.environ.get(CONTRACT_SOCKET_ENV)
        os.environ[CONTRACT_SOCKET_ENV] = path
        return self

    def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """True once the socket is bound (tests; clients need not wait: the backlog queues them)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.folder is not None and (self.folder / SOCKET_NAME).exists():
                return True
            if self.process is None or self.process.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def __exit__(self, *exc_info) -> None:
        if self._previous is None:
            os.environ.pop(CONTRACT_SOCKET_ENV, None)
        else:
            os.environ[CONTRACT_SOCKET_ENV] = self._previous
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    serve(sys.argv[1])
