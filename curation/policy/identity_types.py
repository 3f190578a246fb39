"""One type per identity within a scope: the mentions of one value get one label, so identity-level
surrogates stay one person (not a person's name in one sentence and a company's in the next).

Detectors type each mention on its own: the second mention of a decomposed-accent name ("Rene\u0301e will call
back") can come out as ORGANIZATION while the first is PERSON. Policy, after propagation: the labels of a
value's mentions (compared case- and accent-insensitively, as the leak scan compares them) are put to a vote;
the majority wins, ties go to the earlier label of ``TIE_ORDER``. Untyped SURPRISE mentions take the
value's typed label and do not vote.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from curation.core import spans as S
from curation.core.matching import normalize_for_match

# Ties: the type whose surrogate hides the most identifying kind of value first.
TIE_ORDER = (
    S.PERSON,
    S.EMAIL_ADDRESS,
    S.USERNAME,
    S.PHONE_NUMBER,
    S.STREET_ADDRESS,
    S.ACCOUNT_ID,
    S.ORGANIZATION,
    S.LOCATION,
)


def one_type_per_identity(
    texts: Mapping[str, str], spans: Mapping[str, Sequence[S.Span]], scope_of: Mapping[str, str]
) -> tuple[dict[str, list[S.Span]], int]:
    """(spans with one label per (scope, normalized value), mentions relabeled)."""
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for doc_id, doc_spans in spans.items():
        for span in doc_spans:
            key = _key(texts, scope_of, doc_id, span)
            if span.label != S.SURPRISE and key[1]:
                votes[key][span.label] += 1
    rank = {label: i for i, label in enumerate(TIE_ORDER)}
    winner = {
        key: min(counts, key=lambda label: (-counts[label], rank.get(label, len(rank)), label))
        for key, counts in votes.items()
    }
    relabeled = 0
    out: dict[str, list[S.Span]] = {}
    for doc_id, doc_spans in spans.items():
        kept = []
        for span in doc_spans:
            label = winner.get(_key(texts, scope_of, doc_id, span), span.label)
            if label != span.label:
                relabeled += 1
                span = replace(span, label=label)
            kept.append(span)
        out[doc_id] = kept
    return out, relabeled


def _key(texts: Mapping[str, str], scope_of: Mapping[str, str], doc_id: str, span: S.Span) -> tuple[str, str]:
    return scope_of.get(doc_id, doc_id), normalize_for_match(texts[doc_id][span.start : span.end])
