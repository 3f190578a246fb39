"""Shapes of structured identifiers (e-mail addresses, URLs, IPv4 addresses), independent of any detector.

A mask that covers part of one of these leaves the rest readable (``First.[MASK]@host.com``), so masking
extends partial masks to the whole shape (``policy.extents``) and the release audit counts a shape left
partly masked as a partial leak (``gates.residual_signals``). The shapes are deliberately plain: they say
where a value's edges are, not whether it is private; detection decides that.
"""

from __future__ import annotations

import re

from curation.core.spans import CREDIT_CARD, EMAIL_ADDRESS, IBAN_CODE, IP_ADDRESS, PHONE_NUMBER, URL, US_SSN, Span

# Labels whose values are one structured token: a mask on part of one is extended to all of it.
STRUCTURED_LABELS = frozenset({EMAIL_ADDRESS, URL, IP_ADDRESS, PHONE_NUMBER, IBAN_CODE, CREDIT_CARD, US_SSN})

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # an e-mail, also URL-encoded ('first.last%40host.com' in a query string)
    (EMAIL_ADDRESS, re.compile(r"[A-Za-z0-9._+-]{1,64}(?:@|%40)(?:[A-Za-z0-9-]{1,63}(?:\.|%2[Ee]))+[A-Za-z]{2,24}\b")),
    (URL, re.compile(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`]{3,}|\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\"'`]*")),
    (IP_ADDRESS, re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]|\.\d)")),
)
_TRAILING = ".,;:!?)]}'\""


def identifier_shapes(text: str) -> list[Span]:
    """Every e-mail, URL and IPv4 shape in ``text`` (trailing sentence punctuation left out)."""
    found = []
    for label, pattern in _SHAPES:
        for match in pattern.finditer(text):
            start, end = match.span()
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            if end > start:
                found.append(Span(start, end, label, None, "shape"))
    return sorted(found, key=lambda s: (s.start, s.end))
