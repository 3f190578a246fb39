"""Finding known values in text the way the residual leak scan does: case- and accent-insensitive runs of
letters and digits on word edges, punctuation, spaces and underscores between runs ignored.

Shared by the leak audit (`curation.gates.audit`) and masking's duplicate propagation (`curation.policy.masking`), so
masking covers exactly what the gate would report.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from curation.core.textnorm import fold_confusables

# Values with fewer normalized characters are not searched (too many chance matches): the leak scan's floor.
KNOWN_VALUE_MIN_CHARS = 4
_ALNUM_RUN = re.compile(r"[^\W_]+")
_NOT_ALNUM = re.compile(r"[\W_]+")


def _fold(run: str) -> str:
    """Casefold one alphanumeric run, drop accents and fold look-alike letters, so 'José', 'JOSE' and a
    Cyrillic-'о' 'Jоse' compare equal (invisible characters such as a zero-width space already separate runs,
    and runs are concatenated, so 'Zan<ZWSP>gwill' is found as 'zangwill')."""
    if run.isascii():
        return run.lower()
    return _NOT_ALNUM.sub("", fold_confusables(unicodedata.normalize("NFKD", run).casefold()))


def normalize_for_match(s: str) -> str:
    """Casefolded, accent-free alphanumerics only, so '555-0134' matches '5550134' and 'Dana  WHITFIELD'."""
    return "".join(_fold(m.group()) for m in _ALNUM_RUN.finditer(s))


@dataclass(frozen=True, slots=True)
class _Raw:
    value: str = field(default="", repr=False)
    lead: int = 0  # non-alphanumeric characters before the first alphanumeric one
    trail: int = 0


class ValueIndex:
    """Normalized values (with their raw spellings per label) and every prefix of them, for pruning."""

    def __init__(self, values: Iterable[tuple[str, str]], min_chars: int) -> None:
        self.by_norm: dict[str, dict[str, list[_Raw]]] = defaultdict(lambda: defaultdict(list))
        self.prefixes: set[str] = set()
        self.checked = self.skipped = 0
        for label, value in values:
            norm = normalize_for_match(value)
            if len(norm) < max(1, min_chars):
                self.skipped += 1
                continue
            self.checked += 1
            runs = list(_ALNUM_RUN.finditer(value))
            raw = _Raw(value, runs[0].start(), len(value) - runs[-1].end())
            if raw not in self.by_norm[norm][label]:
                self.by_norm[norm][label].append(raw)
            self.prefixes.update(norm[:i] for i in range(1, len(norm) + 1))


def _folded_runs(text: str) -> list[str]:
    """Folded alphanumeric runs of ``text`` (empty folds dropped); C-speed for ASCII text."""
    if text.isascii():
        return _ALNUM_RUN.findall(text.lower())
    return [piece for piece in map(_fold, _ALNUM_RUN.findall(text)) if piece]


def _run_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the runs :func:`_folded_runs` returns, built only for documents with a hit."""
    return [m.span() for m in _ALNUM_RUN.finditer(text) if _fold(m.group())]


def matches(text: str, index: ValueIndex) -> Iterator[tuple[int, int, str, dict[str, list[_Raw]]]]:
    """(start, end, normalized value, its raw spellings per label) of every occurrence in ``text`` of an
    indexed value: runs of alphanumerics whose folded concatenation is the value, so a match starts and
    ends on word edges (an underscore or any punctuation is an edge; 'Mark' is not found in 'Market')."""
    folded = _folded_runs(text)
    starters = index.prefixes.intersection(folded)  # one C-level pass; most documents stop here
    if not starters:
        return
    spans: list[tuple[int, int]] = []
    for a, run in enumerate(folded):
        if run not in starters:
            continue
        cand, b = run, a
        while cand in index.prefixes:
            labels = index.by_norm.get(cand)
            if labels:
                spans = spans or _run_spans(text)
                yield spans[a][0], spans[b][1], cand, labels
            b += 1
            if b == len(folded):
                break
            cand += folded[b]


class ValueFinder:
    """Every occurrence of a set of (label, value) pairs that the residual leak scan would report (verbatim
    or normalized), so masking covers exactly what the gate checks. A value given under several labels
    takes the first one."""

    def __init__(self, values: Iterable[tuple[str, str]], min_chars: int = KNOWN_VALUE_MIN_CHARS) -> None:
        self._index = ValueIndex(values, min_chars)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, label) per occurrence."""
        return [(start, end, next(iter(labels))) for start, end, _, labels in matches(text, self._index)]
