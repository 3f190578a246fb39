"""Shared fixtures: a tiny corpus and validation set cut from the bundled data, one real end-to-end run of
the Dagster job on them (real model, real DuckDB, real Presidio), and the small real scorer. Helpers that
tests import live in ``tests/helpers.py``.

Every test that uses a real-model fixture is marked ``slow`` here, so ``pytest -m "not slow and not heavy"``
is the fast subset (tests that load the model another way carry the mark themselves)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_job, write_project

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

@pytest.fixture(scope="session")
def tiny_project(tmp_path_factory) -> Path:
    """A project folder with a small corpus, a small validation set and a config pointing at them."""
    root = tmp_path_factory.mktemp("project")
    write_project(root)
    return root


@pytest.fixture(scope="session")
def e2e(tiny_project):
    """One full run of the job; returns (result, loaded config)."""
    from curation.core.config import load_config

    config_path = tiny_project / "curation.yaml"
    result = run_job(config_path)
    return result, load_config(config_path)


@pytest.fixture()
def scored_copy(e2e, tmp_path) -> Path:
    """A copy of the e2e project whose warehouse already holds the token scores (no re-scoring)."""
    _, config = e2e
    root = tmp_path / "copy"
    shutil.copytree(config.base_dir, root, ignore=shutil.ignore_patterns("releases"))
    return root


@pytest.fixture(scope="session")
def scorer():
    """The real reference model with short windows (fast on small texts), loaded once per session."""
    from curation.score.scorer import ReferenceScorer, ScoringConfig

    scorer = ReferenceScorer(ScoringConfig(max_length=48, min_context=16))
    scorer.load()
    return scorer


# Fixtures that load or run the real reference model (or start the webserver): a test using one is `slow`.
REAL_MODEL_FIXTURES = frozenset(
    {"scorer", "e2e", "scored_copy", "small_batches", "small_batch_scorer", "tiny_probe", "webserver"}
)


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
