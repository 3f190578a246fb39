"""The one span type every stage uses, and plain functions over lists of spans.

Offsets are character offsets into the document text, half-open ``[start, end)``.
Detectors, surprise masking, gold labels, masks and surrogates all speak ``Span``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

# Entity labels shared by detectors, gold data and the redaction convention.
# Presidio's names are kept where they exist so its results map one to one.
PERSON = "PERSON"
EMAIL_ADDRESS = "EMAIL_ADDRESS"
PHONE_NUMBER = "PHONE_NUMBER"
CREDIT_CARD = "CREDIT_CARD"
IBAN_CODE = "IBAN_CODE"
US_SSN = "US_SSN"
IP_ADDRESS = "IP_ADDRESS"
STREET_ADDRESS = "STREET_ADDRESS"
LOCATION = "LOCATION"
DATE_TIME = "DATE_TIME"
ORGANIZATION = "ORGANIZATION"
TITLE = "TITLE"  # job title / occupation: a quasi-identifier next to a name or employer
# Nationality, religious or political group (Presidio's NRP, spaCy's NORP): "Italian", "Catholics",
# "Democrats".  A quasi-identifier (and a GDPR special category): it narrows a person down.
NRP = "NRP"
URL = "URL"
ACCOUNT_ID = "ACCOUNT_ID"
# An identifier of a person issued by an authority or an institution: a national id (DNI/NIE), a patient
# number, an insurance or a professional licence number. Apart from ACCOUNT_ID (accounts, references,
# case numbers) because every clinical de-identification scheme lists it as PHI of its own.
ID_NUMBER = "ID_NUMBER"
# A person's age ("70 años", "aged 45"): PHI in clinical text, released as a band.
AGE = "AGE"
USERNAME = "USERNAME"
PASSWORD = "PASSWORD"
API_KEY = "API_KEY"
PRIVATE_KEY = "PRIVATE_KEY"
CONNECTION_STRING = "CONNECTION_STRING"
SECRET = "SECRET"
# Spans selected by surprise masking carry no entity type of their own.
SURPRISE = "SURPRISE"

CREDENTIAL_LABELS = frozenset({PASSWORD, API_KEY, PRIVATE_KEY, CONNECTION_STRING, SECRET})


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A labeled character range ``[start, end)`` with the score and source that produced it."""

    start: int
    end: int
    label: str = SURPRISE
    score: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span [{self.start}, {self.end}): need 0 <= start <= end")

    @property
    def length(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end

    def text_of(self, text: str) -> str:
        return text[self.start : self.end]

    def to_dict(self) -> dict:
        return {
            "start": self.start,
            "end": self.end,
            "label": self.label,
            "score": self.score,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Span:
        return cls(
            start=int(data["start"]),
            end=int(data["end"]),
            label=str(data.get("label") or SURPRISE),
            score=None if data.get("score") is None else float(data["score"]),
            source=str(data.get("source") or ""),
        )


def merge(spans: Iterable[Span], *, gap: int = 0, keep_labels: bool = False) -> list[Span]:
    """Merge overlapping (or within ``gap`` chars) spans; the merged span keeps the max score.

    With ``keep_labels`` only spans of the same label merge; otherwise the label of the
    longest contributing span wins (ties: the earliest), so typed tags stay meaningful.
    """
    ordered = sorted((s for s in spans if s.length > 0), key=lambda s: (s.start, s.end))
    if keep_labels:
        by_label: dict[str, list[Span]] = {}
        for span in ordered:
            by_label.setdefault(span.label, []).append(span)
        merged = [m for group in by_label.values() for m in merge(group, gap=gap)]
        return sorted(merged, key=lambda s: (s.start, s.end))
    out: list[Span] = []
    longest: list[Span] = []
    for span in ordered:
        if out and span.start <= out[-1].end + gap:
            last = out[-1]
            if span.length > longest[-1].length:
                longest[-1] = span
            out[-1] = Span(
                last.start,
                max(last.end, span.end),
                longest[-1].label,
                _max_score(last.score, span.score),
                _join_sources(last.source, span.source),
            )
        else:
            out.append(span)
            longest.append(span)
    return out


def subtract(spans: Iterable[Span], holes: Iterable[Span]) -> list[Span]:
    """Parts of ``spans`` not covered by any of ``holes`` (labels and scores kept)."""
    hole_list = merge(holes)
    out: list[Span] = []
    for span in sorted(spans):
        pieces = [(span.start, span.end)]
        for hole in hole_list:
            if hole.end <= span.start or hole.start >= span.end:
                continue
            next_pieces = []
            for a, b in pieces:
                if hole.start > a:
                    next_pieces.append((a, min(b, hole.start)))
                if hole.end < b:
                    next_pieces.append((max(a, hole.end), b))
            pieces = [(a, b) for a, b in next_pieces if b > a]
        out.extend(replace(span, start=a, end=b) for a, b in pieces)
    return out


def intersect(spans: Iterable[Span], others: Iterable[Span]) -> list[Span]:
    """Parts of ``spans`` that are also covered by ``others`` (labels of ``spans`` kept)."""
    other_list = merge(others)
    out: list[Span] = []
    for span in sorted(spans):
        for other in other_list:
            a, b = max(span.start, other.start), min(span.end, other.end)
            if b > a:
                out.append(replace(span, start=a, end=b))
    return out


def covered_chars(spans: Iterable[Span]) -> int:
    """Number of distinct characters covered by ``spans``."""
    return sum(s.length for s in merge(spans))


def char_mask(spans: Iterable[Span], n_chars: int) -> list[bool]:
    """Per-character boolean coverage of ``spans`` clipped to ``n_chars``."""
    mask = [False] * n_chars
    for span in spans:
        for i in range(max(0, span.start), min(n_chars, span.end)):
            mask[i] = True
    return mask


def blanked(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    """``text`` with the characters of ``ranges`` replaced by spaces, offsets kept: what leak audits read
    (a masked value, or text the pipeline wrote itself, can neither leak nor be matched across)."""
    chars = list(text)
    for a, b in ranges:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def spans_from_mask(mask: Sequence[bool], label: str = SURPRISE, source: str = "") -> list[Span]:
    """Maximal runs of True in a per-character mask, as spans."""
    out: list[Span] = []
    start = None
    for i, flag in enumerate(mask):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append(Span(start, i, label, None, source))
            start = None
    if start is not None:
        out.append(Span(start, len(mask), label, None, source))
    return out


def validate_spans(spans: Iterable[Span], n_chars: int) -> list[str]:
    """Problems that make spans unusable on a text of ``n_chars`` characters (empty = fine)."""
    problems = []
    for span in spans:
        if span.end > n_chars:
            problems.append(f"span [{span.start}, {span.end}) {span.label} ends past the text ({n_chars} chars)")
        elif span.length == 0:
            problems.append(f"span [{span.start}, {span.end}) {span.label} is empty")
    return problems


def _max_score(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _join_sources(a: str, b: str) -> str:
    parts = sorted({p for p in (a.split("+") + b.split("+")) if p})
    return "+".join(parts)
