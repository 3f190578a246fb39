"""Shouted lines (issue 36): ALL-CAPS names are read through a true-cased view of the line, by NER and by the
reference model (so the tagger), at the original's offsets. The names below are invented for the tests."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from curation.core.casing import case_view, shouted, spelled
from curation.core.spans import PERSON, Span
from curation.detect import DetectorConfig, DetectorSuite

DISPATCH = "NOTE: MR. HENRIK VALDEMARSSON CALLED ABOUT THE REFUND ON TUESDAY."
CALLER = "DISPATCH LOG\nCALLER MARGARETA OYELARAN-BRANDT REPORTS A FALLEN TREE.\nUnit 4 sent at 10:42."
REQUEST = "PLEASE ASK PRIYA RAMANATHAN TO CALL BACK TOMORROW"


def test_view_true_cases_a_shouted_line_at_the_same_offsets() -> None:
    view = case_view(DISPATCH)
    assert view == "Note: Mr. Henrik Valdemarsson called about the refund on Tuesday."
    assert len(view) == len(DISPATCH)


def test_view_leaves_mixed_case_and_code_alone() -> None:
    mixed = "The applicant, MR JOHN DOE, lives in Oslo."
    assert case_view(mixed) is mixed
    for line in ("PASSWORD=HUNTERTWO", "API_KEY = 'ABCDEFGHIJKLMNOP'", "SSN", "const MAX_RETRIES = 5;"):
        assert case_view(line) is line, line
    view = case_view(CALLER)
    assert view.endswith("\nUnit 4 sent at 10:42.") and view.startswith("Dispatch log\nCaller Margareta")


def test_spelling_follows_the_lexicon_and_keeps_acronyms() -> None:
    assert spelled("COURT", sentence_start=False) == "court"
    assert spelled("COURT", sentence_start=True) == "Court"
    assert spelled("LONDON", sentence_start=False) == "London"
    assert spelled("USA", sentence_start=False) == "USA"
    assert spelled("SSN", sentence_start=False) == "SSN"  # unknown and short: an acronym
    assert spelled("VALDEMARSSON", sentence_start=False) == "Valdemarsson"  # unknown: a name
    assert spelled("Mixed", sentence_start=False) == "Mixed"
    assert spelled("SOOOOO", sentence_start=False) == "sooooo"  # drawn out, not a name
    assert shouted("THE FACTS") and not shouted("The FACTS of the case")


@pytest.fixture(scope="module")
def suite() -> DetectorSuite:
    return DetectorSuite(DetectorConfig())


def _person_over(spans: list[Span], text: str, value: str) -> bool:
    start = text.index(value)
    return any(s.label == PERSON and s.start <= start and start + len(value) <= s.end for s in spans)


@pytest.mark.parametrize(
    ("text", "name"),
    [(DISPATCH, "HENRIK VALDEMARSSON"), (CALLER, "MARGARETA OYELARAN-BRANDT"), (REQUEST, "PRIYA RAMANATHAN")],
)
def test_ner_finds_names_in_shouted_lines(suite: DetectorSuite, text: str, name: str) -> None:
    """Each name here was missed before the view (spaCy read the capitals as acronyms or organisations)."""
    assert _person_over(suite.detect([text])[0], text, name)


@pytest.mark.slow
def test_the_model_reads_a_shouted_line_as_its_view() -> None:
    from curation.score.scorer import ReferenceScorer

    scorer = ReferenceScorer()
    ids, starts, ends = scorer.tokenize(DISPATCH)
    assert ids == scorer.tokenize(case_view(DISPATCH))[0]
    assert ids != scorer._tokenizer(DISPATCH, add_special_tokens=False)["input_ids"]
    assert int(ends[-1]) == len(DISPATCH)
    name_start = DISPATCH.index("HENRIK")
    assert name_start in set(starts.tolist()) or name_start - 1 in set(starts.tolist())


def test_apostrophes_in_shouted_lines() -> None:
    """A name's particle keeps both capitals (O'Brien), a contraction its lower-case tail (doesn't)."""
    text = "NOTE: MR. O'BRIEN CALLED. HE DOESN'T KNOW JOHN'S NUMBER"
    assert case_view(text) == "Note: Mr. O'Brien called. He doesn't know John's number"
    assert case_view("I CAN’T FIND D’ANGELO TODAY") == "I can’t find D’Angelo today"


def test_initials_and_honorifics_lead_into_a_name() -> None:
    """An initial stays a capital, an honorific takes its usual spelling, and the word after either is a
    name even where the lexicon spells it in lower case (a surname that is a word) or it is short."""
    text = "THE APPLICANT WAS REPRESENTED BY MS K. DORVANE AND BY Y. KAŞ, LAWYERS PRACTISING IN OSLO."
    assert (
        case_view(text) == "The applicant was represented by Ms K. Dorvane and by Y. Kaş, lawyers practising in Oslo."
    )
    assert case_view("DR BAKER SAW MRS MILLER AT 5 PM") == "Dr Baker saw Mrs Miller at 5 PM"
    assert case_view("THE AGENT, MR J. WOŁĄSKEVIC OF THE MINISTRY") == "The agent, Mr J. Wołąskevic of the Ministry"
    # no name follows: the words keep the lexicon's spelling
    assert case_view("GRADE A. PASSED THE TEST") == "Grade A. Passed the test"
