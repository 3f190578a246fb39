"""A span found is masked whole (#42): no mask ends inside an e-mail, URL, IP, phone match or word."""

from curation.core.identifiers import identifier_shapes
from curation.core.spans import EMAIL_ADDRESS, PERSON, PHONE_NUMBER, URL, Span
from curation.policy.extents import honorific_evidence, masked_whole, structured_targets
from curation.policy.masking import redact


def _tagger(text: str, *pieces: str, label: str = PERSON) -> list[Span]:
    out = []
    for piece in pieces:
        start = text.index(piece)
        out.append(Span(start, start + len(piece), label, 0.9, "tagger"))
    return out


def test_tagger_pieces_of_an_email_become_one_email_mask() -> None:
    text = "Write to Orla.Quenby@brightmail.net today."
    # a tagger-only calibration: the tagger tagged the two name pieces and kept the separator and the host
    spans = _tagger(text, "Orla", "Quenby")
    whole = masked_whole(text, spans, structured_targets(text, []))
    assert redact(text, whole) == "Write to [EMAIL_ADDRESS] today."
    assert [s.label for s in whole] == [EMAIL_ADDRESS]


def test_half_masked_email_and_url_and_url_encoded_email() -> None:
    text = "me: tamsin@hotmail.co.uk, see https://example.org/u/tamsin-v, log ?email=first.last%40host.org&x=1"
    spans = _tagger(text, "tamsin@hotmail.", "tamsin-v", "last%40")
    released = redact(text, masked_whole(text, spans, structured_targets(text, [])))
    assert "hotmail" not in released and "co.uk" not in released
    assert "example.org" not in released and "host.org" not in released
    assert "[URL]" in released and released.count("[EMAIL_ADDRESS]") == 2


def test_phone_match_the_combination_dropped_still_bounds_a_partial_mask() -> None:
    text = "Call +44 20 7946 0958 after six."
    start = text.index("+44")
    rule = Span(start, start + len("+44 20 7946 0958"), PHONE_NUMBER, 0.7, "pattern:phone")
    spans = _tagger(text, "7946", label=PHONE_NUMBER)
    assert redact(text, masked_whole(text, spans, structured_targets(text, [rule]))) == "Call [PHONE_NUMBER] after six."


def test_word_edges_and_untouched_values() -> None:
    text = "Dr Bartholomew Okonkwo-Reyes wrote to info@example.com"
    spans = _tagger(text, "tholom", "Okon")
    whole = masked_whole(text, spans, structured_targets(text, []))
    # no mask ends in a word, and the name's honorific goes with it
    assert redact(text, whole) == "[PERSON] [PERSON]-Reyes wrote to info@example.com"
    assert masked_whole(text, [], structured_targets(text, [])) == []  # an unmasked e-mail stays a detector's call


def test_shapes_trim_sentence_punctuation() -> None:
    text = "See https://example.org/a. Or mail a.b@c.io."
    assert [(text[s.start : s.end], s.label) for s in identifier_shapes(text)] == [
        ("https://example.org/a", URL),
        ("a.b@c.io", EMAIL_ADDRESS),
    ]


def test_a_names_honorific_is_masked_with_it_in_capitals_and_in_spanish() -> None:
    """A title states the person's gender; the tagger reading a shouted line can leave it out (#36)."""
    text = "REPRESENTED BY THEIR AGENT, MR J. WOLASIEWICZ, AND BY MRS. O'NEILL; la Dra.  Ruiz y Don Pérez."
    spans = _tagger(text, "J. WOLASIEWICZ", "O'NEILL", "Ruiz", "Pérez")
    released = redact(text, masked_whole(text, spans, []))
    assert released == "REPRESENTED BY THEIR AGENT, [PERSON], AND BY [PERSON]; la [PERSON] y [PERSON]."
    # only before a name, only a whole word: "Dramas" or a place after "Dr" stay as they are
    text = "Dramas Ruiz met Dr Bern in Bern."
    spans = [*_tagger(text, "Ruiz"), Span(text.rindex("Bern"), text.rindex("Bern") + 4, "LOCATION", 0.9, "tagger")]
    assert redact(text, masked_whole(text, spans, [])) == "Dramas [PERSON] met Dr Bern in [LOCATION]."


def test_the_domains_labels_say_whether_a_title_is_masked_with_its_name() -> None:
    """Court labels put "Mr" inside the name, MEDDOCAN-style labels leave "Dr." out, presidio-research
    labels it TITLE: private, public, private. No evidence: masked (a title states gender)."""
    court = ("Mr J. Smith, the agent", [Span(0, 11, PERSON)])
    clinical = ("la Dra. Ruiz firma", [Span(8, 12, PERSON)])
    titled = ("Mrs. Lee called", [Span(0, 4, "TITLE"), Span(5, 8, PERSON)])
    assert honorific_evidence([court, titled]) == {"private": 2, "public": 0, "masked": True}
    assert honorific_evidence([clinical, clinical, court]) == {"private": 1, "public": 2, "masked": False}
    assert honorific_evidence([]) == {"private": 0, "public": 0, "masked": True}
    text = "la Dra. Ruiz firma"
    untitled = masked_whole(text, _tagger(text, "Ruiz"), [], with_honorifics=False)
    assert redact(text, untitled) == "la Dra. [PERSON] firma"
