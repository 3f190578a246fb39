"""One type per identity within a scope (#36): mentions of one value get one label."""

import unicodedata

from curation.core.spans import ORGANIZATION, PERSON, SURPRISE, Span
from curation.policy.identity_types import one_type_per_identity


def _spans(text: str, *mentions: tuple[str, str, int]) -> list[Span]:
    out = []
    for value, label, nth in mentions:
        start = -1
        for _ in range(nth + 1):
            start = text.index(value, start + 1)
        out.append(Span(start, start + len(value), label, 0.9, "detector"))
    return out


def test_a_decomposed_accent_mention_typed_as_organization_becomes_the_person() -> None:
    name = "Ren\u00e9e Quarrington"
    nfd = unicodedata.normalize("NFD", name)
    text = f"Caller: {name} about the refund. {nfd} will call back on Monday. RENEE QUARRINGTON agreed."
    spans = _spans(text, (name, PERSON, 0), (nfd, ORGANIZATION, 0), ("RENEE QUARRINGTON", PERSON, 0))
    out, relabeled = one_type_per_identity({"d": text}, {"d": spans}, {"d": "s"})
    assert [s.label for s in out["d"]] == [PERSON, PERSON, PERSON] and relabeled == 1


def test_ties_surprise_and_other_scopes() -> None:
    text = "Hollowmere Ltd wrote. Hollowmere replied. Hollowmere again."
    spans = _spans(text, ("Hollowmere", ORGANIZATION, 0), ("Hollowmere", PERSON, 1), ("Hollowmere", SURPRISE, 2))
    out, _ = one_type_per_identity({"a": text, "b": text}, {"a": spans, "b": spans[1:2]}, {"a": "s1", "b": "s2"})
    assert [s.label for s in out["a"]] == [PERSON, PERSON, PERSON]  # a tie goes to PERSON; SURPRISE takes it
    assert [s.label for s in out["b"]] == [PERSON]  # another scope is its own vote
    text2 = "Hollowmere Ltd, Hollowmere Ltd, Hollowmere Ltd"
    spans2 = _spans(text2, ("Hollowmere", ORGANIZATION, 0), ("Hollowmere", ORGANIZATION, 1), ("Hollowmere", PERSON, 2))
    out2, relabeled = one_type_per_identity({"c": text2}, {"c": spans2}, {"c": "s"})
    assert {s.label for s in out2["c"]} == {ORGANIZATION} and relabeled == 1  # the majority wins
