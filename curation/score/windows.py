"""Windows over scored tokens, window scores, and the per-character score a window choice implies.

A window is a contiguous token range ``[tok_start, tok_end)``. Its score is the mean token NLL
(the paper's definition) or NLL per character (total NLL / characters covered), which keeps long
ordinary words from looking surprising. A window with a missing or non-finite score is invalid and
never selected; tokens outside every valid window get no window-based selection.

Consensus ``k`` turns into a per-token score: a token is masked at threshold tau when at least k
selected windows cover it, i.e. when the k-th largest score among its covering windows is >= tau.
So every (window choice, k) pair is one per-character score, and calibration is an ROC sweep.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from curation.score.scorer import TokenScores

WINDOW_KINDS = ("fixed", "line", "sentence", "field", "turn")
SCORE_TYPES = ("mean_nll", "nll_per_char")


@dataclass(frozen=True)
class WindowSpec:
    """Which windows to build and how to score them."""

    kind: str = "fixed"
    size: int = 8  # tokens, fixed windows only
    stride: int = 1
    score_type: str = "nll_per_char"

    def __post_init__(self) -> None:
        if self.kind not in WINDOW_KINDS:
            raise ValueError(f"window kind {self.kind!r} is not one of {WINDOW_KINDS}")
        if self.score_type not in SCORE_TYPES:
            raise ValueError(f"score type {self.score_type!r} is not one of {SCORE_TYPES}")
        if self.size < 1 or self.stride < 1:
            raise ValueError("window size and stride must be >= 1")

    @property
    def name(self) -> str:
        base = f"fixed{self.size}s{self.stride}" if self.kind == "fixed" else self.kind
        return f"{base}/{self.score_type}"


@dataclass
class Windows:
    """Windows of one document: token ranges and their scores (NaN = invalid)."""

    tok_start: np.ndarray
    tok_end: np.ndarray
    score: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return np.isfinite(self.score)

    def __len__(self) -> int:
        return int(self.score.shape[0])


def fixed_ranges(n_tokens: int, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Fully contained windows of ``size`` tokens every ``stride``, plus one ending at the last token.

    A document shorter than ``size`` gets one window over all of it, so short records are not
    exempt from selection.
    """
    if n_tokens == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n_tokens <= size:
        return np.array([0]), np.array([n_tokens])
    starts = np.arange(0, n_tokens - size + 1, stride)
    if starts[-1] != n_tokens - size:
        starts = np.append(starts, n_tokens - size)
    return starts, starts + size


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_FIELD_VALUE = re.compile(
    r"""(?:^|[\s,{])["']?[\w.\-]+["']?\s*(?::|=|=>)\s*(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s,;}\]]+[^\n,;}]*)""",
    re.MULTILINE,
)
_TURN_START = re.compile(r"^[A-Za-z_][\w \-]{0,30}:\s", re.MULTILINE)


def structural_char_ranges(text: str, kind: str) -> list[tuple[int, int]]:
    """Character ranges of lines, sentences, field values or chat turns."""
    if kind == "line":
        return _split_ranges(text, re.compile(r"\n"))
    if kind == "sentence":
        return _split_ranges(text, _SENTENCE_END)
    if kind == "field":
        ranges = [(m.start("value"), m.end("value")) for m in _FIELD_VALUE.finditer(text)]
        return [(a, b) for a, b in ranges if b > a] or _split_ranges(text, re.compile(r"\n"))
    if kind == "turn":
        starts = [m.start() for m in _TURN_START.finditer(text)]
        if not starts:
            return [(0, len(text))] if text else []
        bounds = ([0] if starts[0] > 0 else []) + starts + [len(text)]
        return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]
    raise ValueError(f"no structural ranges for window kind {kind!r}")


def _split_ranges(text: str, separator: re.Pattern) -> list[tuple[int, int]]:
    ranges, start = [], 0
    for match in separator.finditer(text):
        if match.start() > start:
            ranges.append((start, match.start()))
        start = match.end()
    if start < len(text):
        ranges.append((start, len(text)))
    return ranges


def char_ranges_to_tokens(
    ranges: list[tuple[int, int]], char_start: np.ndarray, char_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Token range overlapping each character range (ranges holding no token are dropped)."""
    starts, ends = [], []
    for a, b in ranges:
        lo = int(np.searchsorted(char_end, a, side="right"))
        hi = int(np.searchsorted(char_start, b, side="left"))
        if hi > lo:
            starts.append(lo)
            ends.append(hi)
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def build_windows(scores: TokenScores, spec: WindowSpec, text: str = "", exclude: np.ndarray | None = None) -> Windows:
    """Windows of one document with their scores.

    ``exclude`` marks tokens whose NLL must not count (e.g. tokens already inside detector spans,
    for surprise-on-the-residual); a window whose tokens are all excluded is invalid.
    """
    if spec.kind == "fixed":
        tok_start, tok_end = fixed_ranges(scores.n_tokens, spec.size, spec.stride)
    else:
        ranges = structural_char_ranges(text, spec.kind)
        tok_start, tok_end = char_ranges_to_tokens(ranges, scores.char_start, scores.char_end)
    nll = scores.nll.astype(np.float64)
    if exclude is not None:
        nll = np.where(exclude, np.nan, nll)
    return Windows(tok_start, tok_end, window_scores(nll, scores, tok_start, tok_end, spec.score_type))


def window_scores(
    nll: np.ndarray, scores: TokenScores, tok_start: np.ndarray, tok_end: np.ndarray, score_type: str
) -> np.ndarray:
    """Mean NLL per token, or total NLL per character, of each window (NaN if no finite token)."""
    if len(tok_start) == 0:
        return np.zeros(0)
    finite = np.isfinite(nll)
    total = np.concatenate([[0.0], np.cumsum(np.where(finite, nll, 0.0))])
    count = np.concatenate([[0], np.cumsum(finite)])
    sums = total[tok_end] - total[tok_start]
    counts = count[tok_end] - count[tok_start]
    if score_type == "mean_nll":
        denom = counts.astype(np.float64)
    else:
        widths = np.where(finite, scores.char_end - scores.char_start, 0)
        width_sum = np.concatenate([[0], np.cumsum(widths)])
        denom = (width_sum[tok_end] - width_sum[tok_start]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = sums / denom
    out[(counts == 0) | (denom <= 0)] = np.nan
    return out


def consensus_token_scores(windows: Windows, n_tokens: int, k: int = 1) -> np.ndarray:
    """Per token, the k-th largest score of the valid windows covering it (-inf if fewer than k)."""
    if k < 1:
        raise ValueError("consensus k must be >= 1")
    covering: list[list[float]] = [[] for _ in range(n_tokens)]
    for a, b, s in zip(windows.tok_start, windows.tok_end, windows.score, strict=True):
        if np.isfinite(s):
            for t in range(int(a), int(b)):
                covering[t].append(float(s))
    out = np.full(n_tokens, -np.inf)
    for t, values in enumerate(covering):
        if len(values) >= k:
            out[t] = sorted(values, reverse=True)[k - 1]
    return out


def local_rank_token_scores(windows: Windows, n_tokens: int, neighbours: int = 32) -> np.ndarray:
    """Local selection as a score: minus the rank of each window's mean log-prob among neighbours.

    A window's rank is the number of windows among up to ``neighbours`` around it (fewer at the
    edges) whose log-prob is <= its own (ties count against selection). Selecting rank < r_max is
    then ``score >= -r_max + 1``; each token takes the best (max) score of its covering windows.
    """
    logprob = -windows.score
    ranks = np.full(len(windows), np.nan)
    half = neighbours // 2
    for j in range(len(windows)):
        if not np.isfinite(logprob[j]):
            continue
        lo, hi = max(0, j - half), min(len(windows), j + half + 1)
        others = np.concatenate([logprob[lo:j], logprob[j + 1 : hi]])
        others = others[np.isfinite(others)]
        ranks[j] = int(np.sum(others <= logprob[j]))
    ranked = Windows(windows.tok_start, windows.tok_end, -ranks)
    return consensus_token_scores(ranked, n_tokens, k=1)


def char_scores(token_score: np.ndarray, char_start: np.ndarray, char_end: np.ndarray, n_chars: int) -> np.ndarray:
    """Per-character score inherited from the covering token.

    Characters between two tokens take the lower of the two scores, so a threshold selects a gap
    exactly when it selects both neighbours; characters outside all tokens get -inf.
    """
    out = np.full(n_chars, -np.inf)
    for t in range(len(token_score)):
        out[char_start[t] : char_end[t]] = token_score[t]
    for t in range(len(token_score) - 1):
        gap_a, gap_b = char_end[t], char_start[t + 1]
        if gap_b > gap_a:
            out[gap_a:gap_b] = min(token_score[t], token_score[t + 1])
    return out
