"""Residual-leak audits of release text: known values, vault HMACs, and a sampled residual rate.

Every result holds hashes and counts only, never a matched value, so it can go into Dagster
metadata, the warehouse's ``audit_findings`` table and the dataset card. Note that an unkeyed
sha256 of a low-entropy value (a phone number, an SSN) can be reversed by enumeration: pass
``key`` to get keyed digests when findings leave the trusted side.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from curation.core.matching import KNOWN_VALUE_MIN_CHARS, ValueIndex, matches
from curation.views.vault import hmac_value

log = logging.getLogger(__name__)

Kind = Literal["exact", "normalized", "vault"]
BOUNDS = ("clopper-pearson", "wilson")
DEFAULT_MAX_WORDS = 8
_TOKEN = re.compile(r"\S+")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>*\u00ab\u00bb\u201c\u201d\u2018\u2019"
_INNER_SPLIT = re.compile(r"[=;,|<>()\[\]{}\"'`]+")


@dataclass(frozen=True, slots=True)
class Finding:
    """One value found in one document: which label, a digest of the value, how, how often."""

    doc_id: str
    label: str
    value_sha256: str  # sha256 (or keyed HMAC) of the normalized value; for vault hits, the vault HMAC
    kind: Kind
    count: int


AuditFinding = Finding


class Findings(list[Finding]):
    """Findings plus the scan's own counts (values skipped as too short, documents scanned)."""

    def __init__(
        self,
        items: Iterable[Finding] = (),
        *,
        values_checked: int = 0,
        values_skipped: int = 0,
        docs_scanned: int = 0,
    ) -> None:
        super().__init__(items)
        self.values_checked = values_checked
        self.values_skipped = values_skipped
        self.docs_scanned = docs_scanned

    def summary(self) -> dict[str, int]:
        """Counts for check metadata: documents hit, findings by kind, scan sizes."""
        by_kind = Counter(f.kind for f in self)
        return {
            "docs_scanned": self.docs_scanned,
            "docs_with_findings": len({f.doc_id for f in self}),
            "distinct_values_found": len({f.value_sha256 for f in self}),
            "values_checked": self.values_checked,
            "values_skipped_too_short": self.values_skipped,
            **{f"findings_{kind}": n for kind, n in sorted(by_kind.items())},
        }

    def __repr__(self) -> str:
        return (
            f"Findings({list.__repr__(self)}, values_checked={self.values_checked}, "
            f"values_skipped={self.values_skipped}, docs_scanned={self.docs_scanned})"
        )


# --------------------------------------------------------------------------------------------
# Known values (gold targets, originals kept by the supplier)


def value_digest(normalized: str, key: bytes | None = None) -> str:
    """Hex sha256 of a normalized value, or its keyed HMAC-SHA256 when ``key`` is given."""
    if key is None:
        return hashlib.sha256(normalized.encode("utf-8")).hexdigest()
    return hmac.new(key, b"curation-audit|" + normalized.encode("utf-8"), hashlib.sha256).hexdigest()


def _scan_doc(text: str, index: ValueIndex) -> Counter[tuple[str, str, Kind]]:
    """(label, normalized value, kind) -> occurrences; a match must start and end on word edges."""
    hits: Counter[tuple[str, str, Kind]] = Counter()
    for start, end, cand, labels in matches(text, index):
        for label, raws in labels.items():
            exact = any(r.lead <= start and text[start - r.lead : end + r.trail] == r.value for r in raws)
            hits[(label, cand, "exact" if exact else "normalized")] += 1
    return hits


def find_known_values(
    texts: Iterable[tuple[str, str]],
    values: Iterable[tuple[str, str]],
    min_chars: int = KNOWN_VALUE_MIN_CHARS,
    *,
    key: bytes | None = None,
) -> Findings:
    """Direct leaks: each (label, value) found verbatim ("exact") or only after normalization.

    Matches are aligned to word edges (so 'Mark' is not found inside 'Market') and found with one
    hash lookup per word plus one per extra word of a matching prefix: roughly linear in text size,
    independent of the number of values. Values under ``min_chars`` normalized characters are
    skipped and counted in ``Findings.values_skipped``: they would match almost anywhere.
    """
    index = ValueIndex(values, min_chars)
    out = Findings(values_checked=index.checked, values_skipped=index.skipped)
    digests: dict[str, str] = {}
    for doc_id, text in texts:
        out.docs_scanned += 1
        if not index.checked:
            continue
        for (label, norm, kind), count in sorted(_scan_doc(text, index).items()):
            digest = digests.get(norm) or digests.setdefault(norm, value_digest(norm, key))
            out.append(Finding(doc_id, label, digest, kind, count))
    if out.values_skipped:
        log.info("known-value audit skipped %d values shorter than %d characters", out.values_skipped, min_chars)
    return out


# --------------------------------------------------------------------------------------------
# Vault values (only keyed HMACs of the originals are available)


def _candidates(text: str, max_words: int) -> dict[str, list[tuple[int, int]]]:
    """Token n-grams (up to ``max_words``), raw and with edge punctuation stripped, with their spans."""
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, (start, tok_end) in enumerate(tokens):
        for j in range(i, min(len(tokens), i + max_words)):
            end = tokens[j][1]
            raw = text[start:end]
            for cand in {raw, raw.strip(_EDGE_PUNCT), raw.rstrip(_EDGE_PUNCT)}:
                if cand:
                    out[cand].append((start, end))
        for piece in _INNER_SPLIT.split(text[start:tok_end]):
            if stripped := piece.strip(_EDGE_PUNCT):
                out[stripped].append((start, tok_end))
    return out


def _occurrences(spans: list[tuple[int, int]]) -> int:
    """Distinct occurrences: overlapping candidate spans that hit the same HMAC are one occurrence."""
    count, reach = 0, -1
    for start, end in sorted(set(spans)):
        if start >= reach:
            count += 1
        reach = max(reach, end)
    return count


def find_vault_values(
    texts: Iterable[tuple[str, str]],
    key: bytes,
    known: set[str],
    labels: Iterable[str],
    max_words: int | Mapping[str, int] = DEFAULT_MAX_WORDS,
) -> Findings:
    """Originals recorded in the vault that still occur in release text, found via their HMACs.

    Every whitespace-token n-gram up to ``max_words`` (raw, with edge punctuation stripped, and
    single tokens split at ``= ; , | ( ) < >`` and quotes) goes through ``vault.hmac_value`` per
    label and is looked up in ``known``. Cost: a 300-token document gives ~2,600 candidates at 8
    words, and each HMAC (dominated by ``normalize_value``) takes 5-20 us, so ~15-60 ms per label
    per document: 10k documents x 5 labels is roughly 30 minutes on one core. To go faster pass only
    the labels present in the vault, a per-label ``max_words`` mapping (e.g. PERSON: 4; labels it
    omits get 8), or split documents across partitions. A value glued inside a longer token without
    a separator (e.g. 'nameDana') is not found.
    """
    labels = list(dict.fromkeys(labels))
    caps = _word_caps(labels, max_words)
    out = Findings(values_checked=len(known))
    for doc_id, text in texts:
        out.docs_scanned += 1
        if not known or not labels:
            continue
        hits: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        for cand, spans in _candidates(text, max(caps.values())).items():
            words = len(cand.split())
            for label in labels:
                if words > caps[label]:
                    continue
                digest = hmac_value(key, cand, label)
                if digest in known:
                    hits[(label, digest)].extend(spans)
        for (label, digest), spans in sorted(hits.items()):
            out.append(Finding(doc_id, label, digest, "vault", _occurrences(spans)))
    return out


def _word_caps(labels: list[str], max_words: int | Mapping[str, int]) -> dict[str, int]:
    """Longest n-gram tried per label (from one int, or a mapping with 8 for labels it omits)."""
    if isinstance(max_words, Mapping):
        caps = {label: int(max_words.get(label, DEFAULT_MAX_WORDS)) for label in labels}
    else:
        caps = dict.fromkeys(labels, int(max_words))
    if not isinstance(max_words, Mapping) and max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    too_small = sorted(label for label, cap in caps.items() if cap < 1)
    if too_small:
        raise ValueError(f"max_words must be >= 1 for every label, not for {too_small}")
    return caps


# --------------------------------------------------------------------------------------------
# Confidence bounds and the sampled residual audit


def _check_counts(k: int, n: int, confidence: float) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def wilson_upper(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Wilson score upper bound on a rate from k of n; n == 0 gives 1.0 (no evidence)."""
    _check_counts(k, n, confidence)
    if n == 0:
        return 1.0
    z = NormalDist().inv_cdf(confidence)
    p = k / n
    center = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (center + spread) / (1 + z * z / n))


def clopper_pearson_upper(k: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact (Clopper-Pearson) upper bound: the p with P(X <= k | n, p) = 1 - confidence."""
    _check_counts(k, n, confidence)
    if n in (0, k):
        return 1.0
    try:
        from scipy.stats import beta  # local: optional, and slow to import
    except ImportError:
        return _cp_upper_bisect(k, n, confidence)
    return float(beta.ppf(confidence, k + 1, n - k))


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space so large n does not underflow."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    logs = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq for i in range(k + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def _cp_upper_bisect(k: int, n: int, confidence: float) -> float:
    """Clopper-Pearson upper bound without scipy: the binomial CDF falls as p rises, so bisect."""
    alpha, lo, hi = 1.0 - confidence, k / n, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return hi


@dataclass(frozen=True, slots=True)
class ResidualAudit:
    """Result of a sampled residual audit: counts, the rate, its upper bound and the verdict."""

    population: int
    sampled: int
    with_residual: int
    rate: float
    upper_bound: float
    budget: float
    confidence: float
    passed: bool
    method: str
    reason: str = ""


def audit_sample(doc_ids: list[str], sample_size: int, seed: int) -> list[str]:
    """The seeded sample `sampled_residual_audit` checks (a function of the seed and the id set only), so
    a caller can prepare its documents' evidence in one batch before the audit asks for it."""
    population = sorted(set(doc_ids))
    return random.Random(seed).sample(population, min(sample_size, len(population)))


def sampled_residual_audit(
    doc_ids: list[str],
    has_residual: Callable[[str], bool],
    sample_size: int,
    seed: int,
    confidence: float,
    budget: float,
    *,
    allow_empty: bool = False,
    bound: str = "clopper-pearson",
) -> ResidualAudit:
    """Check a seeded simple random sample of documents; pass when the upper bound <= budget.

    The sample depends only on the seed and the set of ids (not their order), so it can be
    re-drawn by a reviewer. An empty batch fails unless ``allow_empty``: no evidence is no pass.
    """
    _check_audit_args(sample_size, confidence, budget, bound)
    population = sorted(set(doc_ids))
    upper = wilson_upper if bound == "wilson" else clopper_pearson_upper
    if not population:
        reason = "empty batch: nothing to audit" + (" (allowed)" if allow_empty else "")
        method = f"no documents to sample; one-sided {confidence:.0%} {bound} upper bound"
        return ResidualAudit(0, 0, 0, 0.0, 1.0, budget, confidence, allow_empty, method, reason)
    sample = audit_sample(population, sample_size, seed)
    found = sum(1 for doc_id in sample if has_residual(doc_id))
    if len(sample) == len(population):
        # A batch no larger than the sample is audited in full: its residual rate is measured, not estimated,
        # so the decision is on the rate itself. (A confidence bound on a census would fail every clean batch
        # under ~3/budget documents: 0 of 20 gives a 95% Clopper-Pearson bound of 0.139.)
        rate = found / len(population)
        passed = rate <= budget
        method = (
            f"all {len(population)} documents audited (the batch is no larger than the sample size {sample_size}); "
            "the residual rate is measured exactly, no sampling bound"
        )
        reason = (
            f"all documents audited: {found} of {len(population)} with a residual, rate {rate:.4f} "
            f"{'within' if passed else 'over'} budget {budget:.4f}"
        )
        counts = (len(population), len(sample), found, rate)
        return ResidualAudit(*counts, rate, budget, confidence, passed, method, reason)
    bound_value = upper(found, len(sample), confidence)
    passed = bound_value <= budget
    method = (
        f"simple random sample of {len(sample)} of {len(population)} documents (seed {seed}); "
        f"one-sided {confidence:.0%} {bound} upper bound on the residual rate"
    )
    reason = f"upper bound {bound_value:.4f} {'within' if passed else 'over'} budget {budget:.4f}"
    counts = (len(population), len(sample), found, found / len(sample))
    return ResidualAudit(*counts, bound_value, budget, confidence, passed, method, reason)


def _check_audit_args(sample_size: int, confidence: float, budget: float, bound: str) -> None:
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
    if sample_size < 1:
        raise ValueError(f"sample_size must be >= 1, got {sample_size}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"budget is a rate in [0, 1], got {budget}")
    _check_counts(0, 0, confidence)
