"""Overlap resolution between detectors and per-line splitting of multi-line addresses."""

from __future__ import annotations

import re
from collections.abc import Sequence

from curation.core.spans import (
    CREDENTIAL_LABELS,
    DATE_TIME,
    LOCATION,
    STREET_ADDRESS,
    Span,
    merge,
    subtract,
)
from curation.detect.base import _TIER_CREDENTIAL, _TIER_DENY, _TIER_NER, _TIER_PATTERN, _TIER_VALIDATED


def _tier(span: Span) -> int:
    best = _TIER_NER
    for part in span.source.split("+"):
        if part == "deny_list":
            t = _TIER_DENY
        elif part.startswith(("credsweeper", "pattern:")) and span.label in CREDENTIAL_LABELS:
            t = _TIER_CREDENTIAL
        elif part in _SOURCE_TIERS:
            t = _SOURCE_TIERS[part]
        elif part.startswith("pattern:"):
            t = _TIER_PATTERN
        else:
            t = _TIER_NER
        best = max(best, t)
    return best


_SOURCE_TIERS = {
    "pattern:email": _TIER_VALIDATED,
    "pattern:url_encoded_email": _TIER_VALIDATED,
    "pattern:credit_card": _TIER_VALIDATED,
    "pattern:iban": _TIER_VALIDATED,
    "pattern:ipv4": _TIER_VALIDATED,
    "pattern:ipv6": _TIER_VALIDATED,
    "pattern:us_ssn": _TIER_VALIDATED,
}

_TRIM = " \t\r\n,;:.!?\"'`()[]{}<>"


def _trim(text: str, span: Span, *, left: bool = True, right: bool = True) -> Span | None:
    """Strip separators left at cut edges after overlap trimming; drop pieces with no word characters."""
    start, end = span.start, span.end
    while left and start < end and text[start] in _TRIM:
        start += 1
    while right and end > start and text[end - 1] in _TRIM and not (text[end - 1] == "." and end - start <= 4):
        end -= 1
    piece = text[start:end]
    if sum(c.isalnum() for c in piece) < 2 and not (span.label == DATE_TIME and piece.isdigit()):
        return None
    if start == span.start and end == span.end:
        return span
    return Span(start, end, span.label, span.score, span.source)


def resolve(text: str, candidates: Sequence[Span]) -> list[Span]:
    """Non-overlapping spans: same-label overlaps merge; across labels the higher tier, then longer, wins.

    The loser is trimmed to the parts not already claimed rather than dropped, so coverage never shrinks.
    """
    merged = merge(candidates, keep_labels=True)
    ordered = sorted(merged, key=lambda s: (-_tier(s), -s.length, -(s.score or 0.0), s.start))
    accepted: list[Span] = []
    for cand in ordered:
        pieces = subtract([cand], accepted) if accepted else [cand]
        for piece in pieces:
            kept = _trim(text, piece, left=piece.start != cand.start, right=piece.end != cand.end)
            if kept is not None and kept.length > 0:
                accepted.append(kept)
    return sorted(accepted)


# A postal address written over several lines is several values: the line breaks, indentation and
# commas between its lines are layout, not private content, and leaving them keeps the document's shape.
LINE_SPLIT_LABELS = frozenset({STREET_ADDRESS, LOCATION})


def split_lines(text: str, spans: Sequence[Span]) -> list[Span]:
    """Multi-line address/location spans as one span per line (separators trimmed)."""
    out: list[Span] = []
    for span in spans:
        value = span.text_of(text)
        if span.label not in LINE_SPLIT_LABELS or "\n" not in value:
            out.append(span)
            continue
        position = span.start
        for line in value.split("\n"):
            kept = _trim(text, Span(position, position + len(line), span.label, span.score, span.source))
            if kept is not None and kept.length > 0:
                out.append(kept)
            position += len(line) + 1
    return out


def _literal_pattern(values: Sequence[str]) -> re.Pattern[str] | None:
    """One alternation over exact values, longest first, bounded so 'Ann' does not hit 'Annual'."""
    cleaned = sorted({v.strip() for v in values if v and v.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    parts = []
    for v in cleaned:
        left = r"(?<!\w)" if v[0].isalnum() or v[0] == "_" else ""
        right = r"(?!\w)" if v[-1].isalnum() or v[-1] == "_" else ""
        parts.append(f"{left}{re.escape(v)}{right}")
    return re.compile("|".join(parts), re.IGNORECASE)
