"""The residual audit's independent second signal: name-variant scan (blocking) and surprise (advisory)."""

from __future__ import annotations

import dataclasses
import json

import polars as pl

from curation import gates
from curation.config import CurationConfig
from curation.residual_signals import name_variant_scan
from curation.warehouse import Warehouse

TEXT = "customer: This is Quillon Vasquez-Ardent.\nagent: Thanks Quillon, and hello again Ms. Vasquez-Ardent."


def _batch(tmp_path, redacted: str, surrogate: str, ranges: list[list[int]]) -> tuple[CurationConfig, Warehouse]:
    warehouse = Warehouse(tmp_path / "w.duckdb")
    row = {"batch_id": ["b"], "doc_id": ["d1"], "scope_id": ["conv-1"], "kind": ["chat"]}
    warehouse.append("documents", pl.DataFrame({**row, "text": [TEXT]}))
    start = TEXT.index("Quillon Vasquez-Ardent")
    warehouse.append(
        "mask_spans",
        pl.DataFrame(
            {"batch_id": ["b"], "doc_id": ["d1"], "start": [start], "end": [start + 22], "label": ["PERSON"],
             "score": [1.0], "source": ["detector"], "calibration_id": ["c"]}
        ),
    )  # fmt: skip
    warehouse.append("redacted_view", pl.DataFrame({**row, "text": [redacted]}))
    warehouse.append(
        "surrogate_view",
        pl.DataFrame(
            {**row, "text": [surrogate], "n_replacements": [len(ranges)], "replaced_ranges": [json.dumps(ranges)]}
        ),
    )
    return dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id="b"), warehouse


def test_a_left_name_word_fails_the_scan_in_either_view(tmp_path):
    redacted = "customer: This is [PERSON].\nagent: Thanks Quillon, and hello again Ms. Vasquez-Ardent."
    surrogate = "customer: This is Mara Lindqvist.\nagent: Thanks Quillon, and hello again Ms. Vasquez-Ardent."
    config, warehouse = _batch(tmp_path, redacted, surrogate, [[18, 32]])
    result = name_variant_scan(config, warehouse)
    assert not result["passed"]
    assert result["leaked_name_words"] == 4 and result["leaks_by_view"] == {"redacted": 2, "surrogate": 2}
    assert result["people"] == 1 and "Quillon" not in json.dumps(result)  # counts only, never a value


def test_fully_masked_release_passes_and_our_surrogates_do_not_count(tmp_path):
    redacted = "customer: This is [PERSON].\nagent: Thanks [PERSON], and hello again [PERSON]."
    surrogate = "customer: This is Quillon Berg.\nagent: Thanks Quillon, and hello again Ms. Berg."
    # the surrogate happens to reuse the first name: it is ours (replaced range), not a leftover
    ranges = [[18, 30], [45, 52], [69, 77]]
    config, warehouse = _batch(tmp_path, redacted, surrogate, ranges)
    result = name_variant_scan(config, warehouse)
    assert result["passed"] and result["leaked_name_words"] == 0 and result["texts_scanned"] == 2


def test_no_release_text_is_no_evidence(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    config = dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id="empty")
    result = name_variant_scan(config, warehouse)
    assert not result["passed"] and result["reason"] == "no release text to scan"


def test_gate_on_a_real_run_reports_both_signals(e2e):
    """On the tiny end-to-end run (real model scores, stored calibration): the gate passed, the surprise
    signal is computed from the stored calibration, and the card shows both."""
    _, config = e2e
    warehouse = Warehouse(config.warehouse_path)
    model_key = warehouse.query("SELECT model_key FROM calibration LIMIT 1").item()
    result = gates.residual_independent_audit(warehouse, config, model_key)
    assert result.passed, result.detail
    names, surprise = result.detail["name_variant_scan"], result.detail["surprise_signal"]
    assert names["people"] > 0 and names["texts_scanned"] > 0
    assert surprise["available"] and 0 <= surprise["flagged_rate"] <= 1 and surprise["released_chars"] > 0
    assert 0 < surprise["expected_rate_on_clean_text"] <= 0.1 and surprise["blocking"] is False
    assert 0 < surprise["recall_on_calibration_targets"] <= 1
    releases = sorted(config.releases_path.iterdir())
    card = (releases[-1] / "README.md").read_text()
    assert "## Independent residual signals" in card and "name-variant scan (blocking)" in card
    assert "residual_independent_audit" in json.loads((releases[-1] / "manifest.json").read_text())["gates"]
