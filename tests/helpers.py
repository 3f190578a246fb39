"""Helpers the tests share (fixtures live in conftest.py): a small project cut from the bundled data, one
run of the Dagster job as `curation run` starts it, and a free localhost port for the servers tests start."""

from __future__ import annotations

import json
import socket
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "curation" / "data"


def take_records(path: Path, n_by_kind: dict[str, int]) -> list[dict]:
    """The first records of each kind, keeping whole conversations together."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    taken, scopes = [], {}
    for record in records:
        kind = record.get("kind", "text")
        scope = record.get("scope_id") or record["id"]
        if scope in scopes or len({s for s, k in scopes.items() if k == kind}) < n_by_kind.get(kind, 0):
            scopes[scope] = kind
            taken.append(record)
    return taken


def write_project(root: Path, batch_id: str = "tiny", per_kind: int = 3, extra_config: str = "") -> Path:
    """A project folder with a small corpus (``per_kind`` conversations of each kind), a small validation
    set and a config pointing at them; returns the config file."""
    root.mkdir(parents=True, exist_ok=True)
    corpus = take_records(DATA / "sample_corpus.jsonl", {"chat": per_kind, "text": per_kind, "code": per_kind})
    validation = take_records(DATA / "validation.jsonl", {"chat": 14, "text": 10, "code": 10})
    for name, records in (("corpus.jsonl", corpus), ("validation.jsonl", validation)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (root / "curation.yaml").write_text(
        f"input: corpus.jsonl\nvalidation: validation.jsonl\nbatch_id: {batch_id}\n"
        "calibration:\n  min_kind_docs: 8\n"
        "tagger:\n  public_sets: false\n  epochs: 15\n"
        "gates:\n  audit_sample: 50\n  residual_budget: 0.25\n  coverage_goal: 0.7\n"
        "  min_domain_heldout_docs: 5\n  min_domain_target_chars: 100\n" + extra_config,
        encoding="utf-8",
    )
    return root / "curation.yaml"


def run_job(config_path: Path, instance=None, **overrides):
    """Run `curation_job` for the config's batch (a delivery_batch partition), as `curation run` does."""
    import dagster as dg

    from definitions import run_curation
    from resources import CurationSettings

    settings = CurationSettings(config_path=str(config_path), **overrides)
    return run_curation(settings, instance=instance or dg.DagsterInstance.ephemeral())



def free_port() -> int:
    """A port nothing listens on now (the OS picks it), for a server a test starts on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
