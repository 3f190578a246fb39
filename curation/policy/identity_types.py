"""One type per identity within a scope: the mentions of one value get one label, so identity-level
surrogates stay one person (not a person's name in one sentence and a company's in the next).

Detectors type each mention on its own: the second mention of a decomposed-accent name ("Rene\u0301e will call
back") can come out as ORGANIZATION while the first is PERSON. Policy, after propagation: the labels of a
value's mentions (compared case- and accent-insensitively, as the leak scan compares them) are put to a vote;
the majority wins, ties go to the earlier label of ``TIE_ORDER``. Untyped SURPRISE mentions take the
value's typed label and do not vote.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
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
    S.ID_NUMBER,
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


_WORD_SEPARATORS = re.compile(r"[\s\-‐‑–]+")
_APOSTROPHES = re.compile(r"['’]")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{5}")
_HEX_LETTERS = frozenset("abcdef")


def misfiled_names(
    texts: Mapping[str, str], spans: Mapping[str, Sequence[S.Span]]
) -> tuple[dict[str, list[S.Span]], int]:
    """(spans with name-shaped ACCOUNT_ID mentions labeled PERSON, mentions relabeled).

    An id detector or the tagger can file a name as an account id ("ABERNATHY-STRODE", "Abernathy
    Strode"); its surrogate would then be a code, not a name. Run before :func:`one_type_per_identity`, so
    the relabeled mentions vote as names. See :func:`name_shaped` for the rule.
    """
    relabeled = 0
    out: dict[str, list[S.Span]] = {}
    for doc_id, doc_spans in spans.items():
        kept = []
        for span in doc_spans:
            if span.label in (S.ACCOUNT_ID, S.ID_NUMBER) and name_shaped(texts[doc_id][span.start : span.end]):
                span = replace(span, label=S.PERSON)
                relabeled += 1
            kept.append(span)
        out[doc_id] = kept
    return out, relabeled


def name_shaped(value: str) -> bool:
    """Whether an ACCOUNT_ID value is made of words, as a name is, rather than shaped like a code.

    The value has no digit and splits on spaces and hyphens into words (an apostrophe may join letters
    inside a word: "O'Brien"); every word is letters only, >= 2 of them, with a vowel (a, e, i, o, u or y,
    accents ignored) and no run of 5 consonants. Then it is a name if it has >= 2 words, or if its one word
    has >= 5 letters, is not made of hex letters only ("deadbeef") and does not switch case like a random
    token ("xKpQaZ": at most 2 lower-to-upper changes, as in "DiCaprio"). So "ABERNATHY-STRODE",
    "Abernathy Strode" and "ABERNATHY-STRODE CALLED" are names; "AB-12345", "CUST-ORD-7781", "x9f3k2",
    hex, all-digit ids, "QWZXRT" (no vowel) and a single short code such as "ACME" (<= 4 letters) are not.
    """
    if not value.strip() or any(c.isdigit() for c in value):
        return False
    words = [w for w in _WORD_SEPARATORS.split(value.strip()) if w]
    for word in words:
        letters = _APOSTROPHES.sub("", word)
        if len(letters) < 2 or not letters.isalpha() or word[0] in "'’" or word[-1] in "'’":
            return False
        plain = "".join(c for c in unicodedata.normalize("NFD", letters.lower()) if not unicodedata.combining(c))
        if not any(c in "aeiouy" for c in plain) or _CONSONANT_RUN.search(plain):
            return False
    if len(words) >= 2:
        return True
    word = _APOSTROPHES.sub("", words[0]) if words else ""
    case_changes = sum(a.islower() and b.isupper() for a, b in itertools.pairwise(word))
    return len(word) >= 5 and not set(word.lower()) <= _HEX_LETTERS and case_changes <= 2
