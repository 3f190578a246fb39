"""Leakage report: direct leak per view, retention, format kept, inference probe; on the real e2e run."""

from __future__ import annotations

import json

import pytest

from curation.core.config import load_config
from curation.core.spans import Span
from curation.core.warehouse import Warehouse
from curation.delivery.card import CardInfo, render_card
from curation.evaluation import leakage as L


def test_released_text_only_blanks_what_we_wrote():
    text = "Hi [PERSON], call Mark Lee"
    out = L.released_text_only(text, [(18, 26)])
    assert len(out) == len(text) and "[PERSON]" not in out and "Mark" not in out and out.startswith("Hi ")


def test_value_pattern_is_case_and_space_insensitive_on_word_edges():
    pattern = L.value_pattern("Dana Whitfield")
    assert pattern.search("hello DANA   whitfield!")
    assert not pattern.search("Danaa Whitfield")


def test_shape_keeps_digits_and_letter_case_runs():
    assert L.shape("(415) 293-0187") == L.shape("(212) 555-0100")
    assert L.shape("(415) 293-0187") != L.shape("415-293-0187")
    assert L.shape("Julian Thomson") == L.shape("Mark Lee") == "Aa Aa"
    assert L.shape("SO95963835") == L.shape("XY12345678") != L.shape("xy12345678")


def test_replacements_pair_with_their_original_spans():
    original = "Call Dana at 555-0134 now."
    spans = [Span(5, 9, "PERSON"), Span(13, 21, "PHONE_NUMBER")]
    view = "Call Robert at 555-0199 now."
    pairs = L.paired_replacements(original, view, spans, [(5, 11), (15, 23)])
    assert [(s.label, view[a:b]) for s, (a, b) in pairs] == [("PERSON", "Robert"), ("PHONE_NUMBER", "555-0199")]
    assert L.paired_replacements(original, "something else entirely", spans, [(5, 11), (15, 23)]) is None
    redacted = "Call [PERSON] at [PHONE_NUMBER] now."
    assert [redacted[a:b] for _, (a, b) in L.redacted_positions(original, spans)] == ["[PERSON]", "[PHONE_NUMBER]"]


def test_retention_counts_only_non_target_characters_kept():
    original = "Call Dana at home."
    kept, total = L.retention(original, "Call [PERSON] at home.", [Span(5, 9, "PERSON")])
    assert total == len(original) - 4 and kept == total
    kept, total = L.retention(original, "Call [PERSON] at work.", [Span(5, 9, "PERSON")])
    assert kept < total


def test_decoys_are_other_same_label_values_then_same_shape_strings():
    import random

    pool = {"PERSON": ["Dana Lee", "Mark Cole", "dana lee"]}
    decoys = L.decoys_for("Dana Lee", "PERSON", pool, 3, random.Random(0))
    assert "Mark Cole" in decoys and "Dana Lee" not in decoys and "dana lee" not in decoys and len(decoys) == 3


@pytest.fixture(scope="module")
def e2e_report(e2e):
    _, config = e2e
    warehouse = Warehouse(config.warehouse_path)
    return L.leakage_report(warehouse, config.batch_id, L.LeakageSettings(values_per_label=1, decoys=3)), config


def test_report_finds_no_detected_value_in_any_view(e2e_report):
    report, _ = e2e_report
    assert report["detected_values"] > 0
    assert report["direct_leak_rate_detected"] == 0.0
    for name in L.VIEWS:
        view = report["views"][name]
        assert view["direct_leak_rate_detected"] == 0.0, name
        assert view["per_label"]
    for name in ("surrogate", "redacted"):
        assert 0.5 < report["views"][name]["retention"] <= 1.0
        assert report["views"][name]["inference_probed"] > 0
        assert 0.0 <= report["views"][name]["inference_leak_rate"] <= 1.0
    assert 0.5 < report["views"]["training_view"]["retention_loss_tokens"] <= 1.0
    assert 0.0 <= report["views"]["surrogate"]["format_kept"] <= 1.0


def test_report_holds_no_private_value(e2e_report):
    report, config = e2e_report
    text = json.dumps(report)
    values = [v for _, v, _ in L.original_values(L.load_batch(Warehouse(config.warehouse_path), config.batch_id))]
    assert values
    assert not [v for v in values if len(v) >= 6 and v in text]


def test_a_value_left_in_a_view_counts_as_a_direct_leak(scored_copy):
    config = load_config(scored_copy / "curation.yaml", base_dir=str(scored_copy))
    warehouse = Warehouse(config.warehouse_path)
    batch = L.load_batch(warehouse, config.batch_id)
    doc_id, spans = next((d, s) for d, s in sorted(batch.masks.items()) if any(x.length >= 6 for x in s))
    span = next(x for x in spans if x.length >= 6)
    value = batch.originals[doc_id][span.start : span.end]
    with warehouse.connect() as con:
        con.execute(
            "UPDATE redacted_view SET text = text || ? WHERE doc_id = ? AND batch_id = ?",
            [f" {value}", doc_id, config.batch_id],
        )
        con.execute(  # the loss mask drops the span: its tokens now carry loss
            "UPDATE training_view SET loss_mask_spans = '[]' WHERE doc_id = ? AND batch_id = ?",
            [doc_id, config.batch_id],
        )
    report = L.leakage_report(warehouse, config.batch_id, L.LeakageSettings(inference=False))
    assert report["views"]["redacted"]["per_label"][span.label]["direct_leak_exact"] > 0
    assert report["views"]["training_view"]["per_label"][span.label]["direct_leak_loss"] > 0
    assert report["views"]["surrogate"]["direct_leak_rate_detected"] == 0.0
    assert report["direct_leak_rate_detected"] > 0


def test_card_shows_privacy_evidence_only_when_it_ran():
    assert "Privacy evidence" not in render_card(CardInfo(pretty_name="x"))
    summary = {
        "table": [
            {"variant": v, "duplicates": d, "canaries": 2, "exposure_bits": 1.5, "extraction_rate": 0.0,
             "heldout_ppl": 9.0}
            for v in ("untrained", "raw") for d in (1, 4, 16)
        ],
        "metrics": {"ppl_ratio_training_vs_raw": 1.01},
        "settings": {"duplicates": [1, 4, 16], "steps": 30, "batch_size": 4, "seq_len": 128, "seed": 1,
                     "candidates": 63},
        "max_rank_exposure_bits": 6.0,
        "canaries": 18,
        "canaries_missed_by_detection": 3,
    }  # fmt: skip
    leakage = {"views": {"surrogate": {"direct_leak_rate_detected": 0.0, "retention": 0.97, "format_kept": 0.9}}}
    card = render_card(
        CardInfo(
            pretty_name="x",
            privacy_evidence={"canary": summary, "leakage": leakage, "canary_plot": "plots/canary_exposure.png"},
        )
    )
    assert "## Privacy evidence" in card and "### Canary memorization probe" in card
    assert "plots/canary_exposure.png" in card and "| raw | 16 | 2 |" in card
    with pytest.raises(ValueError, match="relative"):
        render_card(CardInfo(pretty_name="x", privacy_evidence={"canary": summary, "canary_plot": "/abs.png"}))
