"""One type per identity within a scope (#36): mentions of one value get one label."""

import unicodedata

import pytest

from curation.core.spans import ACCOUNT_ID, ORGANIZATION, PERSON, SURPRISE, Span
from curation.policy.identity_types import misfiled_names, name_shaped, one_type_per_identity


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


# --- misfiled names (#36): an ACCOUNT_ID made of words is a name --------------------------------------------
MISFILED = ["ABERNATHY-STRODE", "Abernathy Strode", "ABERNATHY-STRODE CALLED", "Quillon", "O'Marra-Tevesby"]
REAL_IDS = ["INV-20931", "AB-12345", "CUST-ORD-7781", "x9f3k2", "deadbeef", "4417002231", "QWZXRT", "ACME", "Ax"]


@pytest.mark.parametrize("value", MISFILED)
def test_a_name_filed_as_account_id_becomes_a_person(value: str) -> None:
    text = f"Ticket holder: {value}; status open."
    out, relabeled = misfiled_names({"d": text}, {"d": _spans(text, (value, ACCOUNT_ID, 0))})
    assert [s.label for s in out["d"]] == [PERSON] and relabeled == 1


@pytest.mark.parametrize("value", REAL_IDS)
def test_real_account_ids_stay_account_ids(value: str) -> None:
    text = f"Reference {value} on file."
    out, relabeled = misfiled_names({"d": text}, {"d": _spans(text, (value, ACCOUNT_ID, 0))})
    assert [s.label for s in out["d"]] == [ACCOUNT_ID] and relabeled == 0
    assert not name_shaped(value)


def test_only_account_ids_are_relabeled_and_then_vote_as_names() -> None:
    text = "Abernathy Strode wrote. Ref Abernathy Strode, again Abernathy Strode. Strode Holdings replied."
    spans = _spans(
        text,
        ("Abernathy Strode", PERSON, 0),
        ("Abernathy Strode", ACCOUNT_ID, 1),
        ("Abernathy Strode", ACCOUNT_ID, 2),
        ("Strode Holdings", ORGANIZATION, 0),
    )
    fixed, relabeled = misfiled_names({"d": text}, {"d": spans})
    assert relabeled == 2 and [s.label for s in fixed["d"]] == [PERSON, PERSON, PERSON, ORGANIZATION]
    out, _ = one_type_per_identity({"d": text}, fixed, {"d": "s"})
    assert [s.label for s in out["d"]] == [PERSON, PERSON, PERSON, ORGANIZATION]  # 2 ACCOUNT_ID votes otherwise


def test_eval_masking_relabels_misfiled_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """``curation eval`` (gold.masked_predictions) applies the same policy as the mask stage."""
    from curation.evaluation import gold
    from curation.policy.calibration import ScoredDoc

    text = "Caller ABERNATHY-STRODE asked for invoice INV-20931 to be resent."
    spans = _spans(text, ("ABERNATHY-STRODE", ACCOUNT_ID, 0), ("INV-20931", ACCOUNT_ID, 0))
    doc = ScoredDoc("d", text, "text", None, [], spans)  # type: ignore[arg-type]
    monkeypatch.setattr(gold, "predictions", lambda docs, calibration: {d.doc_id: list(d.detected) for d in docs})
    _, predicted = gold.masked_predictions([doc], None)
    labels = {text[s.start : s.end]: s.label for s in predicted["d"]}
    assert labels == {"ABERNATHY-STRODE": PERSON, "INV-20931": ACCOUNT_ID}
