"""Shared pieces of the rule detectors: the Rule type, conflict tiers, document kinds, common word lists."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from curation.core.spans import Span

# Document kinds that are source code / config / logs.  On them Presidio only sees comments and docstrings
# and only full PERSON names are kept: elsewhere spaCy tags identifiers as names/orgs and the URL
# recognizer tags ``resp.json``-like attribute chains (code_secrets.jsonl, all labels: precision
# 0.73 -> 0.98 at equal recall); prose-only rules (ages, titles, dates, addresses) are skipped too.
CODE_KINDS = frozenset({"code", "config", "log"})


# Conflict resolution: higher tier wins an overlap, then the longer span, then the higher score.
_TIER_DENY, _TIER_CREDENTIAL, _TIER_VALIDATED, _TIER_PATTERN, _TIER_NER = 5, 4, 3, 2, 1


class DetectorError(RuntimeError):
    """A detector failed; the message names the detector and the error type, never the text."""


@dataclass(frozen=True)
class Rule:
    """A regex detector; only the ``v`` group (if present) is labeled, e.g. the value of ``key = "..."``."""

    name: str
    label: str
    pattern: re.Pattern[str]
    score: float
    tier: int = _TIER_PATTERN
    validator: Callable[[str], bool] | None = None
    credential: bool = False  # part of the credential rule set (DetectorConfig.use_credentials)
    prose_only: bool = False  # skipped on CODE_KINDS, where e.g. "name: Optional" or "Named Tuple" abound
    languages: frozenset[str] | None = None  # language codes it runs on (None: every language)

    def find(self, text: str) -> Iterator[Span]:
        """Yield validated spans; the match text stays local to this generator."""
        for m in self.pattern.finditer(text):
            group = "v" if "v" in self.pattern.groupindex and m.group("v") is not None else 0
            start, end = m.span(group)
            while end > start and text[end - 1] in ".,;:)]}>'\"`" and not _balanced(text[start:end]):
                end -= 1
            if end <= start:
                continue
            value = text[start:end]
            if self.validator is not None and not self.validator(value):
                continue
            yield Span(start, end, self.label, self.score, f"pattern:{self.name}")

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, {self.label})"


def _balanced(value: str) -> bool:
    """Keep a trailing bracket/quote only when it closes one opened inside the value."""
    last = value[-1]
    pairs = {")": "(", "]": "[", "}": "{", ">": "<"}
    if last in pairs:
        return value.count(pairs[last]) >= value.count(last)
    return False


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _query_value(keys: str) -> re.Pattern[str]:
    """The value of a URL query parameter named by ``keys`` (a regex, matched case-insensitively), in group
    ``v``: ``?key=v`` after a path character, or ``&key=v`` / ``&amp;key=v`` after a value, up to the next
    ``&``, ``#``, whitespace, quote or backslash (a JSON-escaped URL).  Never ``key=v`` on its own."""
    return _c(
        rf"(?i)(?:(?<=[\w/.%-]\?)|(?<=[^\s&]&)|(?<=[^\s]&amp;))(?:{keys})=(?P<v>[^&#\s\"'`<>\\]{{3,512}})"
        r"(?![^&#\s\"'`<>\\])"
    )


_NOT_PLACES = frozenset(
    "thanks thank regards best cheers please hi hello dear sincerely kind yours sent from to subject date "
    "phone tel email e-mail mobile fax cc note ps the this that we i you he she it they my our your call "
    "contact".split()
)


_GREETING = _c(
    r"^(?:(?:hello|hi|hey|dear|thanks|thank you|good (?:morning|afternoon|evening)|morning|welcome|sorry|yes"
    r"|no|ok|okay|congrats|congratulations|attn|cc)\b[ \t,:]*)+",
    re.IGNORECASE,
)
