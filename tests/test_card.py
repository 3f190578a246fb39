"""The dataset card: valid Hugging Face front matter, the convention verbatim, evidence, no private values."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import polars as pl
import pytest
import yaml

from curation.core import spans as S
from curation.core.matching import normalize_for_match
from curation.delivery.card import SURROGATE_KEY_NOTE, CardInfo, assert_card_clean, render_card, size_category
from curation.delivery.writer import verify_release, write_release
from curation.gates.audit import ResidualAudit
from curation.views.convention import load_convention
from curation.views.vault import key_fingerprint

KEY = bytes(range(32))
PRIVATE = ["Dana Whitfield", "555-0134", "dana.whitfield@acme-corp.com", "ACCT-883920"]
SECTIONS = [
    "## Summary",
    "## Source batches",
    "## Counts",
    "## Redaction convention",
    "## Detectors and versions",
    "## Reference model and thresholds",
    "## Validation and held-out metrics",
    "## Collateral and coverage",
    "## Residual audit",
    "## Gates",
    "## Known limitations",
    "## How to report a leak",
]


def _info(**overrides: object) -> CardInfo:
    audit = ResidualAudit(1000, 200, 0, 0.0, 0.0149, 0.05, 0.95, True, "simple random sample of 200", "ok")
    info = CardInfo(
        pretty_name="Support chats (sanitized)",
        summary="Synthetic support chats with private values replaced by surrogates.",
        release_id="2026-11-30T1805Z-deadbeef",
        tables={"surrogate_view": 1200, "redacted_view": 1200},
        source_batches=[{"batch_id": "2026-11-w48", "documents": 1200}, "2026-11-w47"],
        documents=1200,
        quarantined=3,
        masked_chars=45_210,
        total_chars=900_000,
        spans_per_label={S.PERSON: 310, S.EMAIL_ADDRESS: 120, S.SURPRISE: 45},
        convention_yaml=load_convention().to_yaml(),
        key_id=key_fingerprint(KEY),
        detectors={"presidio-analyzer": "2.2.366", "patterns": {"version": "1", "rules": 41}},
        reference_model={"id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": "gguf-q8"},
        thresholds={"policy": "union", "tau": 3.21, "k": 2, "window": "6 tokens", "objective": "max_f1"},
        validation_metrics={"tpr": 0.91, "fpr": 0.021, "precision": 0.83, "f1": 0.87, "auroc": 0.93},
        held_out_metrics={"TPR": 0.88, "FPR": 0.025, "precision": 0.80, "F1": 0.84, "AUROC": 0.91},
        plots={"ROC curve": "plots/roc.png"},
        collateral={
            "collateral_rate": 0.021,
            "collateral_budget": 0.05,
            "coverage": 0.91,
            "coverage_goal": 0.8,
        },
        residual_audit=audit,
        known_value_findings=0,
        gates={
            "residual_pii_audit": True,
            "coverage_budget": {"passed": False, "detail": "coverage 0.7 < 0.8"},
        },
        contact="privacy@example.org",
    )
    for name, value in overrides.items():
        setattr(info, name, value)
    return info


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_front_matter_is_hugging_face_yaml() -> None:
    meta = _front_matter(render_card(_info()))
    assert meta["pretty_name"] == "Support chats (sanitized)"
    assert meta["license"] == "other" and meta["language"] == ["en"]
    assert meta["task_categories"] == ["text-generation"]
    assert meta["size_categories"] == ["1K<n<10K"]
    assert "privacy" in meta["tags"]
    assert meta["configs"] == [
        {
            "config_name": "surrogate_view",
            "data_files": [{"split": "train", "path": "data/surrogate_view/*.parquet"}],
            "default": True,
        },
        {
            "config_name": "redacted_view",
            "data_files": [{"split": "train", "path": "data/redacted_view/*.parquet"}],
        },
    ]


def test_front_matter_survives_awkward_names() -> None:
    meta = _front_matter(render_card(_info(pretty_name="Chats: v2 --- 'quoted' # not a comment")))
    assert meta["pretty_name"] == "Chats: v2 --- 'quoted' # not a comment"


def test_every_section_is_present_in_order() -> None:
    card = render_card(_info())
    positions = [card.index(heading) for heading in SECTIONS]
    assert positions == sorted(positions)


def test_card_prints_the_convention_verbatim_and_never_the_key() -> None:
    convention = load_convention().to_yaml()
    card = render_card(_info())
    assert f"```yaml\n{convention.rstrip()}\n```" in card
    assert SURROGATE_KEY_NOTE.casefold() in card.casefold()
    assert key_fingerprint(KEY) in card
    assert KEY.hex() not in card


def test_convention_with_backticks_gets_a_longer_fence() -> None:
    card = render_card(_info(convention_yaml="entities:\n  default: {style: typed_tag}  # ```odd```\n"))
    assert "````yaml\nentities:" in card and "```odd```\n````\n" in card


def test_counts_metrics_and_plots() -> None:
    card = render_card(_info())
    assert "| documents | 1,200 |" in card and "| quarantined records | 3 |" in card
    assert "| masked characters | 45,210 |" in card and "| PERSON | 310 |" in card
    assert "| TPR | 0.91 | 0.88 | -0.03 |" in card
    assert "| AUROC | 0.93 | 0.91 | -0.02 |" in card
    assert "Warning" not in card.split("## Validation")[1].split("## Collateral")[0]
    assert "![ROC curve](plots/roc.png)" in card


def test_large_validation_to_held_out_gap_warns() -> None:
    card = render_card(_info(held_out_metrics={"tpr": 0.9, "auroc": 0.53}))
    assert "**Warning:** AUROC differs by 0.400 between validation and held-out data" in card
    assert "| F1 | 0.87 | n/a | n/a |" in card
    no_held_out = render_card(_info(held_out_metrics={}))
    assert "no held-out metrics were measured" in no_held_out


def test_plot_paths_must_be_relative() -> None:
    with pytest.raises(ValueError, match="relative"):
        render_card(_info(plots={"ROC": "/home/me/roc.png"}))
    with pytest.raises(ValueError, match="relative"):
        render_card(_info(plots={"ROC": "../roc.png"}))


def test_residual_audit_gates_and_limitations() -> None:
    card = render_card(_info())
    audit = card.split("## Residual audit")[1].split("## Gates")[0]
    for text in (
        "simple random sample of 200",
        "| sample size | 200 |",
        "| upper confidence bound | 0.0149 |",
        "| budget | 0.05 |",
        "| known-value / vault scan findings | 0 |",
        "| result | pass |",
    ):
        assert text in audit
    assert "| residual_pii_audit | pass |" in card
    assert "| coverage_budget | FAIL | coverage 0.7 < 0.8 |" in card
    limits = card.split("## Known limitations")[1].casefold()
    for phrase in (
        "no formal privacy guarantee",
        "masked tokens still teach through context",
        "masks useful but unfamiliar text",
        "detectors miss novel formats",
        "synthetic",
    ):
        assert phrase in limits
    assert "privacy@example.org" in card.split("## How to report a leak")[1]


def test_missing_evidence_is_called_out() -> None:
    card = render_card(CardInfo(pretty_name="bare"))
    assert "no residual audit was run" in card and "no gate results were recorded" in card
    assert "no address was configured" in card
    assert _front_matter(card)["size_categories"] == ["n<1K"]
    assert "configs" not in _front_matter(card)


def test_size_categories() -> None:
    sizes = (0, 999, 1000, 50_000, 2_000_000_000, 10**13)
    assert [size_category(n) for n in sizes] == ["n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1B<n<10B", "n>1T"]


def test_card_is_clean_of_private_values() -> None:
    card = render_card(_info())
    assert assert_card_clean(card, PRIVATE) == []


def test_planted_private_values_are_reported_by_hash_only() -> None:
    card = render_card(_info(summary="Contact DANA  WHITFIELD at 5550134.", collateral={"acct": "ACCT-883920"}))
    found = assert_card_clean(card, PRIVATE)
    expected = {hashlib.sha256(normalize_for_match(v).encode()).hexdigest() for v in PRIVATE[:2] + PRIVATE[3:]}
    assert set(found) == expected
    assert not any(v in " ".join(found) for v in PRIVATE)


def test_card_ships_in_a_release_that_duckdb_reads(tmp_path: Path) -> None:
    frame = pl.DataFrame({"doc_id": ["a", "b"], "text": ["hi [PERSON]", "call 555-0100"]})
    info = _info(tables={"surrogate_view": 2}, documents=2)
    png = tmp_path / "roc.png"
    png.write_bytes(b"\x89PNG")
    out = write_release(
        tmp_path / "releases",
        "r1",
        {"surrogate_view": frame},
        render_card(info),
        {},
        extra_files={"plots/roc.png": png},
    )
    assert verify_release(out) == []
    card = (out / "README.md").read_text(encoding="utf-8")
    pattern = _front_matter(card)["configs"][0]["data_files"][0]["path"]
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{out / pattern}')").fetchone() == (2,)
    assert (out / "plots/roc.png").exists()


def test_card_says_what_the_chosen_combination_leaves_open() -> None:
    """The spans other signals found that the mask leaves open are counted, by signal and label, never shown."""
    from curation.detect.combination import dropped_spans, dropped_summary

    text = "mail ann@example.com or call Ann Lee at home"
    found = [
        S.Span(5, 20, "EMAIL", 0.9, "rules:email"),
        S.Span(29, 36, "PERSON", 0.8, "tagger"),
        S.Span(40, 44, "LOCATION", 0.6, "tagger"),
    ]
    masked = [S.Span(5, 20, "EMAIL", 0.9, "rules:email"), S.Span(29, 33, "PERSON", 0.8, "tagger")]
    dropped = dropped_spans(len(text), found, masked)
    assert [(s.start, s.end) for s in dropped] == [(40, 44)]  # PERSON is 4/7 masked: more than half, not dropped
    summary = dropped_summary(dropped)
    assert summary == {"spans": 1, "chars": 4, "by_signal": {"tagger": 1}, "by_label": {"LOCATION": 1}}
    card = render_card(
        CardInfo(pretty_name="x", tagger={"detector_combination": ["rules"], "dropped_by_combination": summary})
    )
    assert "leaves open in this batch: 1 span(s), 4 characters" in card and "tagger 1" in card
    assert "home" not in card
    none = render_card(CardInfo(pretty_name="x", tagger={"dropped_by_combination": dropped_summary([])}))
    assert "the combination drops none" in none


def test_policy_rule_line_says_what_was_weighed_or_that_nothing_was():
    from curation.delivery.stage import _policy_rule_line

    weighed = {
        "rule": "one_standard_error", "metric": "f1", "chosen": "detectors", "standard_error": 0.0004,
        "best": {"policy": "union", "params": "p", "f1": 0.9971, "fpr": 0.0}, "detectors": {"f1": 0.9967, "fpr": 0.0},
    }  # fmt: skip
    line = _policy_rule_line(weighed)
    assert line.startswith("detectors (best on calibration: union f1 0.9971") and "one standard error 0.0004" in line
    outright = {**weighed, "best": {"policy": "detectors", "params": "p", "f1": 0.98, "fpr": 0.01}, "standard_error": 0}
    assert "outright: f1 0.98" in _policy_rule_line(outright)


def test_transfer_line_says_when_the_surprise_threshold_fell_back():
    from curation.delivery.stage import _transfer_line

    failed = {
        "calibration_added_fraction": 0.008, "batch_added_fraction": 0.2429, "calibrated_fpr": 0.0099,
        "limit": 0.0281, "held": False, "calibrated_policy": "union", "applied_policy": "detectors",
    }  # fmt: skip
    line = _transfer_line(failed)
    assert line.startswith("did not hold, so union fell back to detectors") and "24.29%" in line
    assert "curation label export" in line
    held = _transfer_line({**failed, "held": True, "batch_added_fraction": 0.01})
    assert held.startswith("held: surprise masks 1.00%")
