"""A 2-node Ray cluster on this machine, for the Ray engine's test and benchmark: a head node and a worker
node with its own resource tag (`worker_node`), 1 CPU each. Its processes are found by the cluster's own
temp folder and stopped by pid on exit, even on failure (never `ray stop`, which would stop every cluster
of the machine)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

RAY = Path(sys.executable).parent / "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_pids(temp_dir: str) -> set[int]:
    """Every process whose command line names the cluster's temp folder (raylets, GCS, workers)."""
    import psutil

    pids = set()
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if any(temp_dir in part for part in proc.info["cmdline"] or []):
                pids.add(proc.info["pid"])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return pids


def kill(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def two_node_cluster() -> Iterator[tuple[str, set[int]]]:
    """Yields (GCS address, pids of the worker node's processes)."""
    if not RAY.exists():
        raise RuntimeError(f"{RAY} is missing: ray is a pinned requirement (`make test` installs it)")
    temp_dir = f"/tmp/ray-curation-{os.getpid()}-{free_port()}"  # short: Ray's socket paths have a length limit
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    try:
        subprocess.run(
            [str(RAY), "start", "--head", "--port", str(port), "--num-cpus", "1", "--include-dashboard=false",
             "--temp-dir", temp_dir, "--disable-usage-stats"],
            check=True, env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        head = cluster_pids(temp_dir)
        subprocess.run(
            [str(RAY), "start", "--address", f"127.0.0.1:{port}", "--num-cpus", "1",
             "--resources", json.dumps({"worker_node": 1}), "--disable-usage-stats"],
            check=True, env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        worker: set[int] = set()
        while time.monotonic() < deadline and not worker:
            worker = cluster_pids(temp_dir) - head  # the worker node's raylet and its helpers
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", worker
    finally:
        leave_cluster()  # a driver still joined when the GCS dies aborts itself 60 s later (its exit code with it)
        kill(cluster_pids(temp_dir))
        shutil.rmtree(temp_dir, ignore_errors=True)


def leave_cluster() -> None:
    """Disconnect this process from Ray if a run in it joined the cluster (in-process Dagster runs do)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
