"""A span found is masked whole: mask spans extended to the structured identifier or word they cut into.

The tagger labels tokens and surprise selects token pieces, so their spans can end inside a value:
``First.Last@host.com`` masked as ``[MASK].[MASK]@host.com`` or ``name@hotmail.`` with the top-level
domain left. A released value with its host or half its local part visible is a partial leak. A name's
honorific goes with it ("Mr J. Smith", "Dra. Ruiz"): it states the person's gender and is part of how
they are named, and a signal that reads names from capitals or context can leave it out. Policy, applied
after the calibrated combination chose its spans: no detection runs here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from curation.core.honorifics import TITLE_GENDER, titles_pattern
from curation.core.identifiers import STRUCTURED_LABELS, identifier_shapes
from curation.core.spans import Span, char_mask, merge, subtract

# An honorific (English, Spanish) right before a name, with its dot and one or two spaces: "MR J. SMITH".
_HONORIFIC_BEFORE = re.compile(
    r"(?<![\w.])(?:" + titles_pattern([*TITLE_GENDER, "don", "dame", "mister"]) + r")\.?[ \t]{1,2}$", re.IGNORECASE
)
_HONORIFIC_LOOKBACK = 12
# Sources whose spans say where a value ends: the rules and Presidio, not the token-level signals.
_TOKEN_SIGNALS = ("tagger", "surprise", "propagation", "supplied_label")


def structured_targets(text: str, found: Sequence[Span]) -> list[Span]:
    """Where structured identifiers are in ``text``: the e-mail / URL / IP shapes plus every detector
    match with a structured label (phones, IBANs, cards), whether or not the combination kept it."""
    matches = [
        s
        for s in found
        if s.label in STRUCTURED_LABELS and s.length and not (s.source or "").startswith(_TOKEN_SIGNALS)
    ]
    return sorted(identifier_shapes(text) + matches, key=lambda s: (s.start, s.end))


def masked_whole(text: str, spans: Sequence[Span], targets: Sequence[Span]) -> list[Span]:
    """``spans`` with every structured target they partly cover masked whole (one span, the target's
    label, so a surrogate replaces the whole value), then every span widened to the edges of the words
    it cuts into (letters and digits on both sides of an edge)."""
    out = merge(spans)
    if not out:
        return out
    covered = np.array(char_mask(out, len(text)), dtype=bool)
    for target in targets:
        part = covered[target.start : target.end]
        if part.any() and not part.all():
            out = [*subtract(out, [target]), Span(target.start, target.end, target.label, target.score, "whole")]
            covered[target.start : target.end] = True
    return merge(_with_honorific(text, _to_word_edges(text, s)) for s in out)


def _with_honorific(text: str, span: Span) -> Span:
    if span.label != "PERSON" or not span.start:
        return span
    lead = _HONORIFIC_BEFORE.search(text, max(0, span.start - _HONORIFIC_LOOKBACK), span.start)
    return Span(lead.start(), span.end, span.label, span.score, span.source) if lead else span


def _to_word_edges(text: str, span: Span) -> Span:
    start, end = span.start, span.end
    while 0 < start < len(text) and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    if (start, end) == (span.start, span.end):
        return span
    return Span(start, end, span.label, span.score, span.source)
