"""Data contracts checked with great-expectations 1.x (ephemeral context, BOOLEAN_ONLY results).

BOOLEAN_ONLY keeps failing values out of results, so no private text reaches logs or the event log:
a contract reports which expectation failed, never the offending value.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

import polars as pl

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

CONTRACT_VERSION = "1"  # bump when an expectation changes: stored verdicts are then re-checked


@dataclass
class ContractResult:
    name: str
    passed: bool
    rows: int
    failed_expectations: list[str]

    def to_dict(self) -> dict:
        return {"rows": self.rows, "failed_expectations": self.failed_expectations}


def _expectations(kind: str):
    import great_expectations as gx

    e = gx.expectations
    if kind == "documents":
        return [
            e.ExpectColumnValuesToNotBeNull(column="doc_id"),
            e.ExpectColumnValuesToBeUnique(column="doc_id"),
            e.ExpectColumnValuesToNotBeNull(column="text"),
            e.ExpectColumnValuesToBeBetween(column="n_chars", min_value=1),
            e.ExpectColumnValuesToMatchRegex(column="sha256", regex=r"^[0-9a-f]{64}$"),
            e.ExpectColumnValuesToBeInSet(column="kind", value_set=["text", "code", "chat"]),
        ]
    if kind == "token_scores":
        return [
            e.ExpectColumnValuesToNotBeNull(column="nll"),
            # contrastive scores are differences of NLLs and may be negative
            e.ExpectColumnValuesToBeBetween(column="nll", min_value=-100, max_value=100),
            e.ExpectColumnValuesToBeBetween(column="width", min_value=0),
            e.ExpectColumnValuesToBeBetween(column="char_start", min_value=0),
        ]
    if kind == "mask_spans":
        return [
            e.ExpectColumnValuesToNotBeNull(column="label"),
            e.ExpectColumnValuesToBeBetween(column="start", min_value=0),
            e.ExpectColumnValuesToBeBetween(column="length", min_value=1),
            e.ExpectColumnValuesToBeInSet(column="within_text", value_set=[True]),
        ]
    raise ValueError(f"no contract named {kind!r}")


def frame_digest(kind: str, frame: pl.DataFrame) -> str:
    """Identity of (contract, data): a stored verdict for the same digest is the verdict GX would give,
    so re-runs over unchanged data skip importing and running great-expectations (seconds per check)."""
    import hashlib
    from importlib.metadata import version

    h = hashlib.sha256(json.dumps([kind, CONTRACT_VERSION, version("great_expectations"), pl.__version__]).encode())
    h.update(json.dumps([[name, str(dtype)] for name, dtype in frame.schema.items()]).encode())
    if frame.height:
        h.update(frame.hash_rows(seed=0).sort().to_numpy().tobytes())
    return h.hexdigest()


def check_contract(kind: str, frame: pl.DataFrame) -> ContractResult:
    """Validate ``frame`` against the named contract; an empty frame fails (nothing was checked).

    Where the run has a contract server (``CONTRACT_SOCKET_ENV``: `curation run` starts one as it starts,
    `curation.gates.contract_worker`), great_expectations runs there, imported while the run was starting,
    so the step does not pay its import (~2 s); without one, or if it does not answer, here."""
    if frame.height == 0:
        return ContractResult(kind, False, 0, ["table is empty"])
    remote = _validate_remote(kind, frame)
    return remote if remote is not None else validate_in_process(kind, frame)


CONTRACT_SOCKET_ENV = "CURATION_CONTRACT_SOCKET"
SERVER_TIMEOUT_S = 300.0  # the import (seconds) plus a validation; past it the step validates itself
BIND_WAIT_S = 5.0  # a server just started binds its socket within ~0.5 s


def send_frame(sock, header: dict, frame: pl.DataFrame) -> None:
    """One request: a JSON header line (with the payload's byte count), then the frame as Arrow IPC."""
    import io

    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    payload = buffer.getvalue()
    sock.sendall(json.dumps({**header, "bytes": len(payload)}).encode() + b"\n" + payload)


def read_message(stream) -> tuple[dict, bytes] | None:
    """The header and payload ``send_frame`` wrote (``stream``: a socket's binary file); None at EOF."""
    line = stream.readline()
    if not line:
        return None
    header = json.loads(line)
    payload = stream.read(header["bytes"]) if header["bytes"] else b""
    return header, payload


def _connect(sock, path: str) -> None:
    """Connect, waiting briefly for a server that was started but has not bound its socket yet."""
    import time

    deadline = time.monotonic() + BIND_WAIT_S
    while True:
        try:
            sock.connect(path)
            return
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _validate_remote(kind: str, frame: pl.DataFrame) -> ContractResult | None:
    """The contract server's verdict, or None when there is none or it fails (the caller validates)."""
    import socket

    path = os.environ.get(CONTRACT_SOCKET_ENV)
    if not path:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(SERVER_TIMEOUT_S)
            _connect(sock, path)
            send_frame(sock, {"kind": kind}, frame)
            with sock.makefile("rb") as stream:
                line = stream.readline()
    except OSError as exc:
        logging.getLogger(__name__).warning(
            "contract server unavailable (%s): validating in this step", type(exc).__name__
        )
        return None
    answer = json.loads(line) if line else {"error": "no answer"}
    if "error" in answer:
        logging.getLogger(__name__).warning("contract server failed (%s): validating in this step", answer["error"])
        return None
    return ContractResult(kind, bool(answer["passed"]), int(answer["rows"]), list(answer["failed_expectations"]))


def validate_in_process(kind: str, frame: pl.DataFrame) -> ContractResult:
    """great_expectations' verdict on a non-empty frame, computed in this process."""
    import great_expectations as gx

    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    asset = context.data_sources.add_pandas(f"{kind}_source").add_dataframe_asset(kind)
    batch = asset.add_batch_definition_whole_dataframe("all").get_batch(
        batch_parameters={"dataframe": frame.to_pandas()}
    )
    failed = []
    for expectation in _expectations(kind):
        result = batch.validate(expectation, result_format="BOOLEAN_ONLY")
        if not result.success:
            failed.append(f"{type(expectation).__name__}({getattr(expectation, 'column', '')})")
    return ContractResult(kind, not failed, frame.height, failed)
