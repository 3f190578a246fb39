"""The matching view of text: invisible and look-alike characters never hide a private value."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from curation.core import spans as S
from curation.core.spans import Span
from curation.core.textnorm import fold, for_matching
from curation.policy.identities import mask_name_variants, name_parts
from curation.views.vault import normalize_value

ZWSP, SOFT_HYPHEN, ZWJ = "\u200b", "\u00ad", "\u200d"


def test_invisible_characters_are_dropped_and_offsets_map_back() -> None:
    text = f"call Perpetua Zan{ZWSP}gwill now"
    view = for_matching(text)
    assert view.text == "call Perpetua Zangwill now"
    start = view.text.index("Zangwill")
    assert text[slice(*view.original_span(start, start + len("Zangwill")))] == f"Zan{ZWSP}gwill"


def test_full_width_ligatures_and_cyrillic_look_alikes_fold_to_latin() -> None:
    assert fold("Ｐｅｒｐｅｔｕａ") == "Perpetua"
    assert fold("\ufb01le") == "file"  # the 'fi' ligature
    assert fold("Реrpetua") == "Perpetua"  # Cyrillic Р and е
    assert fold("Jose\u0301") == "José"  # a combining accent composes
    assert fold(f"pass{SOFT_HYPHEN}word{ZWJ}") == "password"


def test_plain_ascii_is_returned_as_is() -> None:
    text = "nothing to fold here"
    view = for_matching(text)
    assert view.text is text and view.original_span(3, 7) == (3, 7)


PIECES = ["a", "B", " ", ZWSP, SOFT_HYPHEN, "Ｃ", "е", "e\u0301", "\u0301", "\ufb01"]


@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_every_matching_character_maps_to_original_characters_that_fold_to_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    view = for_matching(text)
    for j in range(len(view.text)):
        a, b = view.original_span(j, j + 1)
        assert 0 <= a < b <= len(text)
        assert view.text[j] in fold(text[a:b])
    assert fold(view.text) == view.text  # idempotent


def test_a_name_with_a_zero_width_space_parses_and_its_other_mentions_are_masked() -> None:
    """The reported leak: the masked "Perpetua Zan<ZWSP>gwill" was skipped by name_parts, so the later
    "will Perpetua call me back today?" shipped."""
    name = f"Perpetua Zan{ZWSP}gwill"
    assert name_parts(name) == ["Perpetua", "Zangwill"]
    text = f"Hi, this is {name} about my order. ... will Perpetua call me back today? Zan{ZWSP}gwill again."
    start = text.index(name)
    spans, report = mask_name_variants({"d": text}, {"d": [Span(start, start + len(name), S.PERSON)]}, {})
    masked = [text[s.start : s.end] for s in spans["d"]]
    assert "Perpetua" in masked and f"Zan{ZWSP}gwill" in masked and report.variant_spans == 2


def test_spellings_that_read_alike_share_one_vault_identity() -> None:
    assert normalize_value(S.PERSON, f"Perpetua Zan{ZWSP}gwill") == normalize_value(S.PERSON, "Perpetua Zangwill")
    assert normalize_value(S.EMAIL_ADDRESS, "dаna@example.org") == "dana@example.org"  # Cyrillic а
    assert normalize_value(S.PASSWORD, "pаss") != normalize_value(S.PASSWORD, "pass")  # a secret stays exact


def test_detectors_read_the_matching_view_and_answer_in_original_offsets() -> None:
    from curation.detect import DetectorConfig, DetectorSuite

    suite = DetectorSuite(DetectorConfig(use_presidio=False))
    texts = [
        f"mail dana{ZWSP}@example.org today",
        "mail d\u0430na@example.org today",  # a Cyrillic а
        f"call 555{ZWSP}-0134 or Ｄana@example.org",
    ]
    detected = zip(texts, suite.detect(texts), strict=True)
    found = [[(s.label, text[s.start : s.end]) for s in spans] for text, spans in detected]
    assert found[0] == [(S.EMAIL_ADDRESS, f"dana{ZWSP}@example.org")]
    assert found[1] == [(S.EMAIL_ADDRESS, "d\u0430na@example.org")]
    assert (S.PHONE_NUMBER, f"555{ZWSP}-0134") in found[2] and (S.EMAIL_ADDRESS, "Ｄana@example.org") in found[2]


def test_the_leak_matcher_finds_a_value_through_invisible_and_look_alike_characters() -> None:
    from curation.core.matching import ValueFinder

    finder = ValueFinder([(S.PERSON, "Perpetua Zangwill")])
    for text in (f"ask Perpetua Zan{ZWSP}gwill", "ask Реrpetua Zangwill", "ask Ｐｅｒｐｅｔｕａ Zangwill"):
        assert [label for _, _, label in finder.find(text)] == [S.PERSON], text
