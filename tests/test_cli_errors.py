"""The real CLI answers a user mistake in two lines (what and where, what to do) with a non-zero exit code,
never a traceback; `--debug` shows one. Each case fails before any run is launched (no model, no Dagster run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _curation(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAGSTER_HOME": str(cwd / "dagster_home"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "curation.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _assert_two_line_error(result: subprocess.CompletedProcess, *expected: str) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("curation run: error: "), result.stderr
    assert "--debug" in lines[1]
    for text in expected:
        assert text in result.stderr, result.stderr
    return result.stderr


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "dagster_home").mkdir()
    records = [{"id": f"r{i}", "text": f"Record {i}: Ann Example wrote to ann{i}@example.org."} for i in range(3)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tmp_path


def test_gates_out_of_bounds(project: Path) -> None:
    (project / "c.yaml").write_text(
        "input: corpus.jsonl\ngates:\n  masked_fraction_min: 0.9\n  masked_fraction_max: 0.1\n"
    )
    err = _assert_two_line_error(_curation("run", "--config", "c.yaml", cwd=project), "c.yaml: gates:")
    assert "masked_fraction_min=0.9" in err and "fix that setting" in err


def test_unknown_key_suggests_the_known_one(project: Path) -> None:
    (project / "c.yaml").write_text("input: corpus.jsonl\ngates:\n  residual_budgett: 0.1\n")
    _assert_two_line_error(
        _curation("run", "--config", "c.yaml", cwd=project), "unknown key(s) ['residual_budgett']", "'residual_budget'"
    )


def test_missing_input_file(project: Path) -> None:
    result = _curation("run", "--input", "nope.jsonl", "--out", str(project), cwd=project)
    assert result.returncode == 2 and "Traceback" not in result.stdout + result.stderr
    assert f"input {project / 'nope.jsonl'} does not exist" in result.stderr
    assert not (project / ".curation" / "warehouse.duckdb").exists()  # nothing was launched


def test_validation_span_out_of_range_names_file_and_line(project: Path) -> None:
    records = [{"id": "v1", "text": "short text", "spans": []}, {"id": "v2", "text": "Ann", "spans": []}]
    records[1]["spans"] = [{"start": 0, "end": 40, "label": "PERSON"}]
    (project / "val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (project / "c.yaml").write_text("input: corpus.jsonl\nvalidation: val.jsonl\n")
    _assert_two_line_error(
        _curation("run", "--config", "c.yaml", cwd=project), f"{project / 'val.jsonl'}:2: span 0 [0, 40)", "outside"
    )


@pytest.mark.parametrize("content", ["", "\n\n", "id,text\n"], ids=["empty", "blank-lines", "csv-header-only"])
def test_empty_input_is_an_error_not_a_failed_check(project: Path, content: str) -> None:
    name = "empty.csv" if content.startswith("id,") else "empty.jsonl"
    (project / name).write_text(content, encoding="utf-8")
    result = _curation("run", "--input", name, "--out", str(project), cwd=project)
    _assert_two_line_error(result, f"input {project / name} is empty: no records")


def test_debug_shows_the_traceback(project: Path) -> None:
    (project / "c.yaml").write_text("inputt: corpus.jsonl\n")
    plain = _curation("run", "--config", "c.yaml", cwd=project)
    _assert_two_line_error(plain, "unknown setting 'inputt' (did you mean 'input'?)")
    debug = _curation("run", "--config", "c.yaml", "--debug", cwd=project)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "ConfigError" in debug.stderr
