"""Mention-swap augmentation: variants keep their gold spans on the swapped text, are seeded, coherent
within a record, and leave labels it does not swap as they were."""

from __future__ import annotations

from curation.core.spans import Span
from curation.labels.augment import AugmentConfig, augmented
from curation.labels.sets import LabeledRecord

TEXT = "met anna at Dr. Brown's office in Leeds; anna said hi. call 555-0100 or mail anna.b@mail.org"


def _record() -> LabeledRecord:
    def at(value: str, label: str, nth: int = 0) -> Span:
        start = -1
        for _ in range(nth + 1):
            start = TEXT.index(value, start + 1)
        return Span(start, start + len(value), label)

    spans = [
        at("anna", "PERSON"), at("Dr. Brown", "PERSON"), at("Leeds", "LOCATION"), at("anna", "PERSON", 1),
        at("555-0100", "PHONE_NUMBER"), at("anna.b@mail.org", "EMAIL_ADDRESS"),
    ]  # fmt: skip
    return LabeledRecord("r1", TEXT, spans)


def test_variants_move_offsets_and_keep_unswapped_labels() -> None:
    record = _record()
    pairs = augmented([record], AugmentConfig(variants=3, seed=0))
    assert len(pairs) == 3 and all(source == 0 for source, _ in pairs)
    for _, variant in pairs:
        values = [(variant.text[s.start : s.end], s.label) for s in variant.spans]
        assert [label for _, label in values] == [s.label for s in record.spans]
        first, title, place, again, phone, mail = (v for v, _ in values)
        assert first == again and first.islower() and first != "anna"  # one person, one name; case kept
        assert title.startswith("Dr. ") and title != "Dr. Brown"
        assert place != "Leeds" and place[0].isupper()
        assert phone == "555-0100"  # not a swapped label: its text is kept
        assert "@example." in mail and "anna" not in variant.text
        assert variant.text.endswith(mail) and " said hi. call " in variant.text  # the context is untouched


def test_variants_are_seeded_and_off_by_default() -> None:
    record = _record()
    a = augmented([record], AugmentConfig(variants=2, seed=1))
    b = augmented([record], AugmentConfig(variants=2, seed=1))
    c = augmented([record], AugmentConfig(variants=2, seed=2))
    assert [v.text for _, v in a] == [v.text for _, v in b]
    assert [v.text for _, v in a] != [v.text for _, v in c]
    assert augmented([record], AugmentConfig()) == []


def test_records_with_nothing_to_swap_or_too_long_yield_no_variant() -> None:
    phone_only = LabeledRecord("p", "call 555-0100", [Span(5, 13, "PHONE_NUMBER")])
    long = LabeledRecord("l", "x" * 50 + " anna", [Span(51, 55, "PERSON")])
    overlapping = LabeledRecord("o", "anna smith", [Span(0, 10, "PERSON"), Span(5, 10, "PERSON")])
    config = AugmentConfig(variants=2, max_chars=40)
    assert augmented([phone_only, long, overlapping], config) == []
