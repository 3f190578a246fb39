"""A span found is masked whole: mask spans extended to the structured identifier or word they cut into.

The tagger labels tokens and surprise selects token pieces, so their spans can end inside a value:
``First.Last@host.com`` masked as ``[MASK].[MASK]@host.com`` or ``name@hotmail.`` with the top-level
domain left. A released value with its host or half its local part visible is a partial leak. A name's
honorific goes with it ("Mr J. Smith", "Dra. Ruiz") where the domain's labels count titles as private (court
cases do, clinical notes labeled MEDDOCAN-style do not: ``honorific_evidence``): it states the person's
gender, and a signal that reads names from capitals or context can leave it out. Policy, applied after the
calibrated combination chose its spans: no detection runs here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from curation.core.honorifics import TITLE_GENDER, titles_pattern
from curation.core.identifiers import STRUCTURED_LABELS, identifier_shapes
from curation.core.spans import PERSON, Span, char_mask, merge, subtract

# An honorific (English, Spanish) right before a name, with its dot and one or two spaces: "MR J. SMITH".
_HONORIFIC_WORDS = titles_pattern([*TITLE_GENDER, "don", "dame", "mister"])
_HONORIFIC_BEFORE = re.compile(r"(?<![\w.])(?:" + _HONORIFIC_WORDS + r")\.?[ \t]{1,2}$", re.IGNORECASE)
_HONORIFIC_AT = re.compile(r"(?:" + _HONORIFIC_WORDS + r")\.?[ \t]", re.IGNORECASE)  # a span starting with one
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


def masked_whole(
    text: str, spans: Sequence[Span], targets: Sequence[Span], with_honorifics: bool = True
) -> list[Span]:
    """``spans`` with every structured target they partly cover masked whole (one span, the target's
    label, so a surrogate replaces the whole value), then every span widened to the edges of the words
    it cuts into (letters and digits on both sides of an edge), and a name to its honorific when
    ``with_honorifics``."""
    out = merge(spans)
    if not out:
        return out
    covered = np.array(char_mask(out, len(text)), dtype=bool)
    for target in targets:
        part = covered[target.start : target.end]
        if part.any() and not part.all():
            out = [*subtract(out, [target]), Span(target.start, target.end, target.label, target.score, "whole")]
            covered[target.start : target.end] = True
    widened = (_to_word_edges(text, s) for s in out)
    return merge(_with_honorific(text, s) for s in widened) if with_honorifics else merge(widened)


def honorific_evidence(labeled: Iterable[tuple[str, Sequence[Span]]]) -> dict:
    """How a domain's labels treat the honorifics of names: of the titles right before or at the start of a
    gold PERSON span, how many lie inside gold spans (private: part of the name, or a TITLE of its own)
    and how many outside. ``masked``: whether masking takes a name's title in; without evidence it does
    (a title states the person's gender)."""
    private = public = 0
    for text, gold in labeled:
        covered = char_mask(gold, len(text))
        for span in gold:
            if span.label != PERSON:
                continue
            lead = _HONORIFIC_BEFORE.search(text, max(0, span.start - _HONORIFIC_LOOKBACK), span.start)
            if lead is not None:
                title = range(lead.start(), lead.end())
                if all(covered[k] for k in title if not text[k].isspace()):
                    private += 1
                else:
                    public += 1
            elif _HONORIFIC_AT.match(text, span.start, span.end):
                private += 1
    return {"private": private, "public": public, "masked": private >= public}


def _with_honorific(text: str, span: Span) -> Span:
    if span.label != PERSON or not span.start:
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
