"""The residual audit's independent second signal: name-variant scan (blocking) and surprise (advisory)."""

from __future__ import annotations

import dataclasses
import json

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import Warehouse
from curation.gates import release_gates as gates
from curation.gates.residual_signals import name_variant_scan

TEXT = "customer: This is Quillon Vasquez-Ardent.\nagent: Thanks Quillon, and hello again Ms. Vasquez-Ardent."


NAME = "Quillon Vasquez-Ardent"


def _batch(
    tmp_path, redacted: str, surrogate: str, ranges: list[list[int]], text: str = TEXT, name: str = NAME
) -> tuple[CurationConfig, Warehouse]:
    warehouse = Warehouse(tmp_path / "w.duckdb")
    row = {"batch_id": ["b"], "doc_id": ["d1"], "scope_id": ["conv-1"], "kind": ["chat"]}
    warehouse.append("documents", pl.DataFrame({**row, "text": [text]}))
    start = text.index(name)
    warehouse.append(
        "mask_spans",
        pl.DataFrame(
            {"batch_id": ["b"], "doc_id": ["d1"], "start": [start], "end": [start + len(name)], "label": ["PERSON"],
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


def test_a_zero_width_space_in_the_masked_name_does_not_hide_its_leftover(tmp_path):
    """The reported miss: "Perpetua Zan<U+200B>gwill" was masked, "will Perpetua call me back today?" shipped,
    and the audit passed ("0 name words of 22 people left") because the name did not parse."""
    text = "customer: I am Perpetua Zan\u200bgwill.\nagent: will Perpetua call me back today?"
    redacted = "customer: I am [PERSON].\nagent: will Perpetua call me back today?"
    config, warehouse = _batch(tmp_path, redacted, redacted, [], text=text, name="Perpetua Zan\u200bgwill")
    result = name_variant_scan(config, warehouse)
    assert not result["passed"] and result["people"] == 1
    assert result["leaked_name_words"] == 2 and result["leaks_by_view"] == {"redacted": 1, "surrogate": 1}


def test_a_masked_name_with_no_word_to_search_for_is_a_finding(tmp_path):
    text = "customer: signed j. 42\nagent: thanks"
    redacted = "customer: signed [PERSON]\nagent: thanks"
    config, warehouse = _batch(tmp_path, redacted, redacted, [], text=text, name="j. 42")
    result = name_variant_scan(config, warehouse)
    assert result["names_not_name_shaped"] == 1 and result["names_unscannable"] == 1
    assert not result["passed"] and "no word to search" in result["reason"]


def test_names_of_common_words_or_too_short_are_reported_not_failed(tmp_path):
    """"Young" and "April" are names and common words: the variant scan leaves them to the leak scan's
    exact-value search (the bundled sample has both); an initial is too short for any search."""
    for name, key in (("Young", "names_left_to_leak_scan"), ("J.", "names_too_short_to_search")):
        text = f"customer: this is {name}\nagent: thanks"
        redacted = "customer: this is [PERSON]\nagent: thanks"
        config, warehouse = _batch(tmp_path / key, redacted, redacted, [], text=text, name=name)
        result = name_variant_scan(config, warehouse)
        assert result[key] == 1 and result["names_unscannable"] == 0 and result["passed"], result


def test_a_masked_name_not_shaped_like_one_is_searched_by_its_own_words(tmp_path):
    text = "customer: this is dana w. here\nagent: hi Dana"
    redacted = "customer: this is [PERSON] here\nagent: hi Dana"
    config, warehouse = _batch(tmp_path, redacted, redacted, [], text=text, name="dana w.")
    result = name_variant_scan(config, warehouse)
    assert result["names_not_name_shaped"] == 1 and result["names_unscannable"] == 0
    assert not result["passed"] and result["leaked_name_words"] == 2


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
