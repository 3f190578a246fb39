"""Per-recognizer choice (#42): a family combination that leaves the rules out still keeps the exact-format
rules whose own precision on the domain's labels holds, so an e-mail the tagger covers in pieces is masked
whole; a recognizer the domain's labels contradict is dropped; every recognizer is listed with counts."""

from __future__ import annotations

import numpy as np

from curation.core.spans import Span, char_mask
from curation.detect.combination import (
    TAGGER,
    choose_detectors,
    label_element,
    recognizer_summary,
    select_sources,
)
from curation.policy.calibration import ScoredDoc
from curation.score.scorer import TokenScores


def _doc(i: int, text: str, gold: list[Span], detected: list[Span]) -> ScoredDoc:
    n = len(text)
    scores = TokenScores(np.array([0]), np.array([n]), np.array([1.0], dtype=np.float32))
    return ScoredDoc(f"cv{i}", text, "text", scores, gold, detected)


def _cv_docs(n: int = 12, email_is_private: bool = True) -> list[ScoredDoc]:
    """CV-like contact blocks: the tagger finds the name and pieces of the e-mail; the rules find the
    e-mail whole, and a broad organization rule fires on the employer, which the labels call public."""
    docs = []
    for i in range(n):
        name = f"Orla Quenby{i:02d}"
        email = f"orla.quenby{i:02d}@brightmail.net"
        text = f"{name}\nEmail: {email}\nEmployer: Northwind Analytics Group Ltd\nSkills: SQL"
        e0 = text.index(email)
        o0 = text.index("Northwind")
        gold = [Span(0, len(name), "PERSON")]
        if email_is_private:
            gold.append(Span(e0, e0 + len(email), "EMAIL_ADDRESS"))
        detected = [
            Span(0, len(name), "PERSON", 0.9, TAGGER),
            Span(e0, e0 + 4, "PERSON", 0.8, TAGGER),  # "orla"
            Span(e0 + 5, e0 + 13, "PERSON", 0.8, TAGGER),  # "quenbyNN", the "." and the host left
            Span(e0, e0 + len(email), "EMAIL_ADDRESS", 1.0, "pattern:email"),
            Span(o0, o0 + 30, "ORGANIZATION", 0.85, "pattern:org_suffix"),
            Span(0, len(name), "PERSON", 0.85, "presidio:SpacyRecognizer"),
        ]
        docs.append(_doc(i, text, gold, detected))
    return docs


def test_a_tagger_only_family_choice_keeps_the_email_rule_and_masks_the_email_whole():
    docs = _cv_docs()
    combination, _, rows = choose_detectors(docs, collateral_budget=0.05)
    assert combination[0] == TAGGER and "rules" not in combination  # the family choice drops the rules
    assert label_element("EMAIL_ADDRESS") in combination
    doc = docs[0]
    email = "orla.quenby00@brightmail.net"
    e0 = doc.text.index(email)
    mask = char_mask(select_sources(len(doc.text), doc.detected, combination), len(doc.text))
    assert all(mask[e0 : e0 + len(email)])  # the whole address, separator and host included
    org = doc.text.index("Northwind")
    assert not any(mask[org : org + 9])  # the broad rule stays dropped with its family
    by_recognizer = {(r["recognizer"], r["label"]): r for r in rows}
    kept = by_recognizer[("pattern:email", "EMAIL_ADDRESS")]
    assert kept["kept"] and kept["spans"] == 12 and kept["hits"] == 12
    dropped = by_recognizer[("pattern:org_suffix", "ORGANIZATION")]
    assert not dropped["kept"] and dropped["hits"] == 0 and dropped["collateral_chars"] == 12 * 30
    summary = recognizer_summary(rows)
    assert summary["EMAIL_ADDRESS"]["kept"] == ["pattern:email"]
    assert summary["ORGANIZATION"]["dropped"] == ["pattern:org_suffix"]


def test_an_exact_format_rule_the_domains_labels_contradict_is_dropped():
    # A domain whose labels call these e-mails public (a directory of role addresses): twelve misses
    # outweigh the prior, the rule is not kept.
    docs = _cv_docs(email_is_private=False)
    combination, _, rows = choose_detectors(docs, collateral_budget=0.05)
    assert label_element("EMAIL_ADDRESS") not in combination
    row = next(r for r in rows if r["recognizer"] == "pattern:email")
    assert not row["kept"] and "precision" in row["reason"] and row["label_posterior_precision"] < 0.5


def test_with_few_labels_the_prior_keeps_an_exact_format_rule():
    # Two labeled documents, one e-mail labeled public: 1 hit in 2 spans, the prior (9 of 10) still holds.
    docs = _cv_docs(n=2)
    docs[1].gold = docs[1].gold[:1]
    combination, _, _ = choose_detectors(docs, collateral_budget=0.5)
    assert label_element("EMAIL_ADDRESS") in combination


def test_label_elements_select_only_their_labels_rule_spans_once():
    doc = _cv_docs(n=1)[0]
    kept = select_sources(len(doc.text), doc.detected, ("rules", label_element("EMAIL_ADDRESS")))
    assert len(kept) == len({(s.start, s.end, s.label, s.source) for s in kept})
    only = select_sources(len(doc.text), doc.detected, (label_element("EMAIL_ADDRESS"),))
    assert [s.source for s in only] == ["pattern:email"]


def test_the_card_lists_each_recognizer_kept_or_dropped_with_counts_and_no_values():
    from curation.delivery.card import _recognizers

    docs = _cv_docs()
    _, _, rows = choose_detectors(docs, collateral_budget=0.05)
    text = _recognizers(rows)
    assert "| pattern:email | EMAIL_ADDRESS | 12 | 12 |" in text
    assert "pattern:org_suffix" in text and "dropped" in text
    assert not any(value in text for value in ("brightmail", "Quenby", "Northwind"))


def test_rules_the_tagger_backs_are_listed_as_kept_that_way():
    from curation.detect.combination import RULES_CONFIRMED

    docs = _cv_docs()
    combination, _, rows = choose_detectors(docs, combinations=((TAGGER, RULES_CONFIRMED),), collateral_budget=0.05)
    assert combination[:2] == (TAGGER, RULES_CONFIRMED)
    person = next(r for r in rows if r["recognizer"] == "presidio:SpacyRecognizer")
    assert person["kept"] and "tagger backs" in person["reason"]


def test_a_pattern_whose_open_matches_are_public_is_not_added():
    """The tagger masks the candidate's profile URL already; the URL pattern also matches the employer's
    website, which the labels call public. Its precision overall is 0.5, its prior keeps it, but every
    span it would add is collateral: dropped, with the open counts in its row."""
    docs = []
    for i in range(12):
        profile, site = f"github.com/oquenby{i:02d}", "www.northwind-analytics.com"
        text = f"Orla Quenby\nWeb: {profile}\nNorthwind Analytics ({site})\n"
        p0, s0 = text.index(profile), text.index(site)
        gold = [Span(0, 11, "PERSON"), Span(p0, p0 + len(profile), "URL")]
        detected = [
            Span(0, 11, "PERSON", 0.9, TAGGER),
            Span(p0, p0 + len(profile), "URL", 0.9, TAGGER),
            Span(p0, p0 + len(profile), "URL", 0.6, "pattern:profile_url"),
            Span(s0, s0 + len(site), "URL", 0.6, "pattern:url"),
        ]
        docs.append(_doc(i, text, gold, detected))
    combination, _, rows = choose_detectors(docs, collateral_budget=0.5)
    assert label_element("URL") not in combination
    url_rows = [r for r in rows if r["label"] == "URL"]
    assert {r["label_open_spans"] for r in url_rows} == {12} and {r["label_open_hits"] for r in url_rows} == {0}
    assert all(not r["kept"] and "combination leaves open" in r["reason"] for r in url_rows)


def test_a_broad_rule_is_added_only_where_it_pays_for_itself():
    """The tagger misses the referee's name; the NER finds it (private) and the organization rule finds
    the employer (public). PERSON's rule spans raise F1 on the labels and are added; ORGANIZATION's are
    all collateral and are not."""
    docs = []
    for i in range(12):
        text = (
            f"Orla Quenby\nReferee: Ilse Vortmann{i:02d}, Northwind Analytics Group Ltd\n"
            "Experience: Northwind Analytics Group Ltd, Bluefield Systems GmbH and Carrow Health Trust\n"
        )
        r0, o0 = text.index("Ilse"), text.index("Experience: ") + 12
        r1 = r0 + len(f"Ilse Vortmann{i:02d}")
        gold = [Span(0, 11, "PERSON"), Span(r0, r1, "PERSON")]
        detected = [
            Span(0, 11, "PERSON", 0.9, TAGGER),
            Span(r0, r1, "PERSON", 0.85, "presidio:SpacyRecognizer"),
            Span(o0, o0 + 78, "ORGANIZATION", 0.85, "pattern:org_suffix"),
        ]
        docs.append(_doc(i, text, gold, detected))
    combination, _, rows = choose_detectors(docs, collateral_budget=0.5)
    assert combination[0] == TAGGER and label_element("PERSON") in combination
    assert label_element("ORGANIZATION") not in combination
    by_label = {r["label"]: r for r in rows}
    assert by_label["PERSON"]["kept"] and by_label["PERSON"]["label_open_hits"] == 12
    assert not by_label["ORGANIZATION"]["kept"] and by_label["ORGANIZATION"]["label_open_hits"] == 0
