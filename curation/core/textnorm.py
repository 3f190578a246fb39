"""Text as the matchers that decide what is private read it, with a map back to the original characters.

A zero-width space inside a name ("Zan\\u200bgwill"), a full-width letter or a Cyrillic "а" in a Latin word
reads the same to a person but defeats a regex, a word list and an exact-value scan. Every matcher that
decides what is private (detectors, duplicate propagation, name variants, the leak gate, the audits) runs on
:func:`for_matching`'s text and maps what it finds back with :meth:`MatchText.original_span`; the release
keeps the original characters.

The matching text is, per character cluster (a base character and the combining marks after it): dropped
if it is a format character (Unicode category Cf: zero-width space / joiners, soft hyphen, bidi controls,
BOM, tag characters) or a variation selector; else its NFKC form (full-width letters, ligatures, math
letters, no-break spaces) with Cyrillic and Greek letters that look like Latin ones folded to Latin.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from curation.core.spans import Span

# Non-Latin letters drawn like Latin ones (Unicode confusables, the letters seen in names and words).
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
        "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
        "ԝ": "w", "ɡ": "g",
        "А": "A", "В": "B", "Е": "E", "Ё": "E", "Һ": "H", "І": "I", "Ї": "I", "Ј": "J", "К": "K", "М": "M",
        "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q",
        "Ԝ": "W",
        # Greek
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
        "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "τ": "t",
        "υ": "u", "χ": "x", "α": "a",
    }
)  # fmt: skip
_VARIATION_SELECTORS = frozenset(range(0xFE00, 0xFE10)) | frozenset(range(0xE0100, 0xE01F0)) | {0x034F}


def fold_confusables(text: str) -> str:
    """Cyrillic and Greek letters drawn like Latin ones, as Latin (no other change)."""
    return text.translate(_CONFUSABLES)


def invisible(char: str) -> bool:
    """A character with no glyph of its own that can sit inside a word: format characters (Cf) and
    variation selectors / the combining grapheme joiner."""
    return unicodedata.category(char) == "Cf" or ord(char) in _VARIATION_SELECTORS


@lru_cache(maxsize=65536)
def _fold_cluster(cluster: str) -> str:
    folded = fold_confusables(unicodedata.normalize("NFKC", cluster))
    return unicodedata.normalize("NFC", folded)  # a folded letter may now compose with its marks


@dataclass(frozen=True)
class MatchText:
    """``text`` for matching; ``starts[j]`` / ``ends[j]``: the original characters matching char ``j`` came from."""

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @property
    def identical(self) -> bool:
        return self.text is self.original

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original characters behind matching-text ``[start, end)`` (invisible characters inside it
        included, those at its edges not)."""
        if self.identical:
            return start, end
        if start >= end:
            at = self.starts[start] if start < len(self.starts) else len(self.original)
            return at, at
        return self.starts[start], self.ends[end - 1]

    def original_spans(self, spans: list[Span]) -> list[Span]:
        """Spans found on the matching text, in the original's offsets."""
        if self.identical:
            return spans
        return [replace(s, start=a, end=b) for s in spans for a, b in [self.original_span(s.start, s.end)]]


@lru_cache(maxsize=1)
def _invisible_pattern() -> re.Pattern[str]:
    """Every character :func:`invisible` drops, as one character class (built once, on first use)."""
    chars = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf" or c in _VARIATION_SELECTORS]
    return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


def _already_folded(text: str) -> bool:
    """No character the matching view would change (C-speed checks; most non-ASCII prose passes)."""
    return (
        unicodedata.is_normalized("NFKC", text)
        and fold_confusables(text) == text
        and _invisible_pattern().search(text) is None
    )


def for_matching(text: str) -> MatchText:
    """The matching view of ``text`` (the same object, no copy, when it needs no folding)."""
    if text.isascii() or _already_folded(text):
        return MatchText(text, text, (), ())
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        if invisible(text[i]):
            i = j
            continue
        while j < n and (unicodedata.combining(text[j]) or invisible(text[j])):
            j += 1  # the marks of this base character, and any invisible characters between them
        while j > i + 1 and invisible(text[j - 1]):
            j -= 1  # invisible characters after the last mark belong to no cluster
        folded = _fold_cluster("".join(c for c in text[i:j] if not invisible(c)))
        out.append(folded)
        starts.extend([i] * len(folded))
        ends.extend([j] * len(folded))
        i = j
    folded_text = "".join(out)
    if folded_text == text:
        return MatchText(text, text, (), ())
    return MatchText(text, folded_text, tuple(starts), tuple(ends))


def fold(text: str) -> str:
    """Only the matching text (for comparing values: "Zan\\u200bgwill" == "Zangwill")."""
    return for_matching(text).text
