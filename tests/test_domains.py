"""A batch belongs to a domain: its calibration comes from that domain's labels, or it says it is unverified."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from curation.core.config import load_config
from curation.delivery.card import CardInfo, render_card
from curation.gates import release_gates as gates
from curation.ingest.inbox import DOMAIN_MARKER, scan_inbox


def _labeled(path: Path, n: int = 3) -> Path:
    rows = [{"id": f"r{i}", "text": f"Call Dana at 555-010{i}.", "spans": [{"start": 5, "end": 9, "label": "PERSON"}]}
            for i in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_domain_with_labels_calibrates_on_them_and_the_tagger_reads_them_once(tmp_path):
    _labeled(tmp_path / "forum.jsonl")
    (tmp_path / "c.yaml").write_text('tagger:\n  labeled_sets: ["forum=forum.jsonl"]\n  public_sets: false\n')
    base = load_config(tmp_path / "c.yaml")
    assert (base.batch_domain, base.calibration_domain) == ("support", "support")
    assert [d for d, _ in base.tagger_sets()] == ["forum"]

    forum = load_config(tmp_path / "c.yaml", domain="forum")
    assert (forum.batch_domain, forum.calibration_domain) == ("forum", "forum")
    assert forum.validation_path.resolve() == (tmp_path / "forum.jsonl").resolve()
    assert forum.tagger_sets() == []  # the validation set is read once, as the validation set
    assert forum.for_domain("forum") == forum  # idempotent


def test_a_domain_without_labels_keeps_the_configured_calibration_and_says_whose_it_is(tmp_path):
    (tmp_path / "c.yaml").write_text("tagger:\n  public_sets: false\n")
    posts = load_config(tmp_path / "c.yaml", domain="posts")
    assert (posts.batch_domain, posts.calibration_domain) == ("posts", "support")
    assert posts.validation_path == load_config(tmp_path / "c.yaml").validation_path
    # the bundled public sets count as a domain's labels: court text calibrates on the TAB set
    court = load_config(None, domain="court", base_dir=str(tmp_path))
    assert court.calibration_domain == "court" and court.validation_path.name == "tab_echr.jsonl"


def test_inbox_domain_folders_hold_batches_of_their_domain(tmp_path):
    inbox = tmp_path / "inbox"
    (inbox / "court").mkdir(parents=True)
    (inbox / "court" / "c1.jsonl").write_text("{}\n")
    (inbox / "posts").mkdir()
    (inbox / "posts" / DOMAIN_MARKER).write_text("")
    (inbox / "posts" / "p1.jsonl").write_text("{}\n")
    (inbox / "folder_batch").mkdir()
    (inbox / "folder_batch" / "part.jsonl").write_text("{}\n")
    batches = {b.key: b.domain for b in scan_inbox(inbox, ["court"]).batches}
    assert batches == {"c1": "court", "p1": "posts", "folder_batch": None}

    config = load_config(None, base_dir=str(tmp_path))
    c1 = config.for_batch("c1")  # court: a known domain (the bundled TAB set)
    assert (c1.batch_domain, c1.calibration_domain, c1.input_path.name) == ("court", "court", "c1.jsonl")
    p1 = config.for_batch("p1")
    assert (p1.batch_domain, p1.calibration_domain) == ("posts", "support")


def _summary(domain: str, heldout_docs: int, target_chars: int) -> dict:
    return {
        "domain": domain,
        "validation": {"documents": 70},
        "heldout": {
            "documents": heldout_docs,
            "metrics": {"target_chars": target_chars, "tpr": 0.9, "precision": 0.8, "f1": 0.85, "fpr": 0.01},
            "intervals": {"tpr": [0.85, 0.94], "f1": [0.8, 0.9]},
        },
    }


def test_calibration_coverage_warns_on_another_domain_or_too_little_and_passes_on_enough(tmp_path):
    config = load_config(None, base_dir=str(tmp_path), domain="posts")
    other = gates.calibration_coverage(_summary("support", 90, 4000), config)
    assert not other.passed and other.detail["advisory"]
    assert "unverified for domain posts: calibrated on support" in other.detail["reason"]
    assert "curation label export" in other.detail["reason"]

    own = load_config(None, base_dir=str(tmp_path))
    few = gates.calibration_coverage(_summary("support", 5, 4000), own)
    assert not few.passed and "5 held-out documents" in few.detail["reason"]
    enough = gates.calibration_coverage(_summary("support", 90, 4000), own)
    assert enough.passed

    strict = load_config(None, base_dir=str(tmp_path), domain="posts", gates={"require_domain_labels": True})
    blocked = gates.calibration_coverage(_summary("support", 90, 4000), strict)
    assert not blocked.passed and not blocked.detail["advisory"]
    assert gates.CALIBRATION_COVERAGE in gates.required_gates(strict)
    assert gates.CALIBRATION_COVERAGE not in gates.required_gates(own)
    assert gates.is_advisory(gates.CALIBRATION_COVERAGE, other.detail)
    assert not gates.is_advisory(gates.CALIBRATION_COVERAGE, blocked.detail)


def test_detectors_masking_far_more_of_a_batch_than_of_their_calibration_fail_coverage(tmp_path):
    """The label-free guard for the detectors (issue 38): English NER on Spanish notes masked 30% of the
    clean text; a batch whose detector share is past what the budget allows cannot carry the card's collateral."""
    from curation.policy.masking import detector_transfer

    own = load_config(None, base_dir=str(tmp_path))
    held = detector_transfer(0.10, 0.11, collateral_budget=0.03, calibrated_fpr=0.01)
    broke = detector_transfer(0.10, 0.30, collateral_budget=0.03, calibrated_fpr=0.01)
    assert held["held"] and not broke["held"] and broke["limit"] == 0.12
    assert gates.calibration_coverage(_summary("support", 90, 4000), own, {"detector_transfer": held}).passed
    failed = gates.calibration_coverage(_summary("support", 90, 4000), own, {"detector_transfer": broke})
    assert not failed.passed and "the detectors mask 30.0% of this batch" in failed.detail["reason"]
    strict = load_config(None, base_dir=str(tmp_path), gates={"require_domain_labels": True})
    blocked = gates.calibration_coverage(_summary("support", 90, 4000), strict, {"detector_transfer": broke})
    assert not blocked.passed and not gates.is_advisory(gates.CALIBRATION_COVERAGE, blocked.detail)


def test_the_card_opens_with_the_coverage_statement(tmp_path):
    config = load_config(None, base_dir=str(tmp_path), domain="posts")
    unverified = gates.calibration_coverage(_summary("support", 90, 4000), config)
    card = render_card(CardInfo(pretty_name="x", calibration_coverage={"passed": False, **unverified.detail}))
    summary = card.split("## Summary\n\n", 1)[1]
    assert summary.startswith("**Calibration coverage: unverified.** collateral and recall are unverified for domain")

    own = gates.calibration_coverage(_summary("support", 90, 4000), load_config(None, base_dir=str(tmp_path)))
    card = render_card(
        CardInfo(
            pretty_name="x",
            calibration_coverage={"passed": True, **own.detail},
            held_out_metrics={"tpr": 0.9, "precision": 0.8, "f1": 0.85, "fpr": 0.01},
        )
    )
    summary = card.split("## Summary\n\n", 1)[1]
    assert summary.startswith("**Calibration coverage:** domain `support`, calibrated on 70 labeled documents")
    assert "recall 0.900 [0.850, 0.940]" in summary and "F1 0.850 [0.800, 0.900]" in summary


def test_bootstrap_intervals_resample_documents_and_bracket_the_pooled_value():
    from curation.policy.calibration import bootstrap_intervals

    rng = np.random.default_rng(1)
    counts = np.array([[rng.integers(5, 20), rng.integers(0, 5), 20, 200] for _ in range(40)])
    tp, fp, pos, neg = counts.sum(axis=0)
    recall = tp / pos
    band = bootstrap_intervals(counts)
    assert band["tpr"][0] < recall < band["tpr"][1]
    assert band["fpr"][0] <= fp / neg <= band["fpr"][1]
    assert bootstrap_intervals(counts) == band  # seeded
    wide = bootstrap_intervals(counts[:4])
    assert wide["tpr"][1] - wide["tpr"][0] > band["tpr"][1] - band["tpr"][0]  # fewer documents, wider
