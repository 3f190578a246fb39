"""Identity-level masking with the real detector suite (Presidio + rules) and the real surrogate engine."""

from __future__ import annotations

import re

import pytest

from curation.core import spans as S
from curation.core.config import CurationConfig
from curation.detect.suite import detector_suite
from curation.policy.identities import mask_name_variants, name_parts, variant_words
from curation.policy.masking import redact
from curation.views.convention import load_convention
from curation.views.surrogates import Scope, SurrogateEngine

CONVERSATION = {
    "t1": "customer: Hello, this is Quillon Vasquez-Ardent calling about my order.\nagent: Can you confirm the date?",
    "t2": "agent: Thanks Quillon, one moment please. Quillon's parcel left the depot.",
    "t3": "customer: Ms. Vasquez-Ardent here again, any news?",
}
OTHER = {
    "o1": "Grace Hopper wrote the report for Acme Logistics. Hope you are well. Will you check it? Hopper agreed.",
    "o2": "We shipped to New York. The New office is open and Acme answered. Quillon is a word here.",
}
TEXTS = {**CONVERSATION, **OTHER}
SCOPES = {**dict.fromkeys(CONVERSATION, "conv-1"), **dict.fromkeys(OTHER, "conv-2")}


@pytest.fixture(scope="module")
def detected() -> dict[str, list[S.Span]]:
    suite = detector_suite(CurationConfig().detectors)
    return dict(zip(TEXTS, suite.detect(list(TEXTS.values()), ["chat"] * len(TEXTS)), strict=True))


def test_detectors_alone_miss_the_variants(detected):
    """The premise (issue 13.5): the full name comes out as ORGANIZATION and "Thanks Quillon" is missed."""
    labels = {TEXTS["t1"][s.start : s.end]: s.label for s in detected["t1"]}
    assert labels.get("Quillon Vasquez-Ardent") != S.PERSON
    assert "Quillon" in redact(TEXTS["t2"], detected["t2"])


def test_every_variant_of_a_detected_person_is_masked_as_person(detected):
    masked, report = mask_name_variants(TEXTS, detected, SCOPES)
    for doc_id in CONVERSATION:
        out = redact(TEXTS[doc_id], masked[doc_id])
        assert not re.search(r"Quillon|Vasquez|Ardent", out), doc_id
        assert "[ORGANIZATION]" not in out and "[LOCATION]" not in out
    assert report.relabeled_as_person >= 1 and report.variant_spans >= 1
    assert any(s.source == "name_variant" for s in masked["t2"])


def test_no_collateral_on_common_words_places_firms_or_other_scopes(detected):
    masked, _ = mask_name_variants(TEXTS, detected, SCOPES)
    o1 = redact(TEXTS["o1"], masked["o1"])
    o2 = redact(TEXTS["o2"], masked["o2"])
    assert "Hope you are well" in o1 and "Will you check it" in o1  # common words are no variants
    assert "[PERSON] agreed" in o1  # the surname alone is
    assert "The New office" in o2  # a place and a firm spawn no variants
    assert "Quillon is a word here" in o2  # a variant is masked only in its own scope
    assert {TEXTS["o1"][s.start : s.end]: s.label for s in masked["o1"]}["Hopper"] == S.PERSON  # was ORGANIZATION
    assert not [s for s in masked["o2"] if "name_variant" in s.source]


def test_variants_get_the_surrogates_of_one_identity(detected):
    """Surrogate view: the fake first name after "Thanks" is the full name's fake first name; the fake
    surname after "Ms." is its fake surname."""
    masked, _ = mask_name_variants(TEXTS, detected, SCOPES)
    engine = SurrogateEngine(bytes(range(32)), load_convention(), "k1")
    docs = [(TEXTS[d], masked[d], Scope(d, SCOPES[d])) for d in CONVERSATION]
    engine.prepare_documents(docs)
    out = {d: engine.apply(text, spans, scope).text for d, (text, spans, scope) in zip(CONVERSATION, docs, strict=True)}
    full = re.search(r"this is (\S+) (\S+) calling", out["t1"])
    assert full, out["t1"]
    first, last = full.groups()
    assert f"Thanks {first}," in out["t2"] and f"{first}'s parcel" in out["t2"]
    assert f"Ms. {last} here" in out["t3"]
    assert not any(re.search(r"Quillon|Vasquez|Ardent", t) for t in out.values())


def test_name_shapes_and_variant_words():
    assert name_parts("Ms. Vasquez-Ardent") == ["Vasquez-Ardent"]
    assert name_parts("Quillon Vasquez-Ardent's") == ["Quillon", "Vasquez-Ardent"]
    assert name_parts("the customer") is None  # not capitalized: no name
    assert variant_words(["Vasquez-Ardent", "Al", "Will", "June"]) == {"Vasquez-Ardent", "Vasquez", "Ardent"}
