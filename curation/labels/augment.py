"""Mention-swap augmentation: more training text from few labels, with what the project already has.

A labeled record yields variants whose target mentions (people, places, organisations, e-mail addresses)
are replaced by values drawn from the surrogate pools (Faker's person lists of 19 locales and the towns
and companies built from them), the gold offsets moved to match. The tagger then sees the same contexts
with other names in them: what it has to learn from 40 posts is the context, not the 24 names they hold.

Variants are seeded by (seed, record text, variant index), so the same labels give the same variants on
every machine; a mention repeated in a record gets the same replacement in a variant (the record stays
coherent). Other labels keep their original text. The originals' values never reach a log: only counts
leave this module.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from curation.core import spans as S
from curation.core.spans import Span
from curation.labels.sets import LabeledRecord

SWAPPED_LABELS = frozenset({S.PERSON, S.LOCATION, S.ORGANIZATION, S.EMAIL_ADDRESS})
_WORD_RE = re.compile(r"[^\W\d_][\w'\u2019-]*")
_TITLE_RE = re.compile(r"^((?:mr|mrs|ms|miss|dr|prof|sir|judge|mme|herr|frau|sr|sra|dña|don)\.?\s+)+", re.I)


@dataclass(frozen=True)
class AugmentConfig:
    """How many variants each labeled record yields and which records qualify (part of the tagger's key)."""

    variants: int = 0  # 0: off
    max_chars: int = 4000  # longer records (court judgments) already hold many mentions; their variants cost most
    seed: int = 0


def _cased_like(template: str, word: str) -> str:
    """``word`` in the template's case: lower, UPPER or Title (informal posts write names in lower case)."""
    if template.islower():
        return word.lower()
    if template.isupper() and len(template) > 1:
        return word.upper()
    return word


def _person(value: str, rng: random.Random, pool) -> str:
    title = _TITLE_RE.match(value)
    prefix = title.group(0) if title else ""
    words = _WORD_RE.findall(value[len(prefix) :])
    if not words:
        return value
    if len(words) == 1:  # a lone given name or surname: keep which it is likely to be (after a title: surname)
        names = [rng.choice(pool.last if prefix else pool.given)]
    else:
        names = [rng.choice(pool.given)] + [rng.choice(pool.last) for _ in words[1:]]
    return prefix + " ".join(_cased_like(w, n) for w, n in zip(words, names, strict=True))


def _replacement(label: str, value: str, rng: random.Random, pool) -> str:
    from curation.views.surrogates.pools import _city, _company

    if label == S.PERSON:
        return _person(value, rng, pool)
    if label == S.LOCATION:
        return _cased_like(value, _city(rng, pool))
    if label == S.ORGANIZATION:
        return _cased_like(value, _company(rng, pool))
    if label == S.EMAIL_ADDRESS:
        user = f"{rng.choice(pool.given)}.{rng.choice(pool.last)}".lower()
        return f"{user}@{rng.choice(('example.com', 'example.net', 'example.org'))}"
    return value


def swap_mentions(record: LabeledRecord, rng: random.Random, pool, suffix: str = "~swap") -> LabeledRecord | None:
    """One variant of ``record``: its swappable mentions replaced, every span's offsets moved; None when it
    has no swappable mention (a copy would teach nothing new)."""
    spans = sorted(record.spans, key=lambda s: (s.start, s.end))
    if any(b.start < a.end for a, b in itertools.pairwise(spans)):
        return None  # overlapping gold: which text a shifted span covers is ambiguous
    chosen: dict[tuple[str, str], str] = {}
    pieces, new_spans, cursor, shift, swapped = [], [], 0, 0, 0
    for span in spans:
        value = record.text[span.start : span.end]
        new = value
        if span.label in SWAPPED_LABELS and value.strip():
            key = (span.label, value.casefold())
            if key not in chosen:
                chosen[key] = _replacement(span.label, value, rng, pool)
            new = chosen[key]
            swapped += new != value
        pieces += [record.text[cursor : span.start], new]
        start = span.start + shift
        new_spans.append(Span(start, start + len(new), span.label, span.score, span.source))
        shift += len(new) - len(value)
        cursor = span.end
    if not swapped:
        return None
    pieces.append(record.text[cursor:])
    return LabeledRecord(
        id=f"{record.id}{suffix}", text="".join(pieces), spans=new_spans, kind=record.kind,
        scope_id=record.scope_id, language=record.language,
    )  # fmt: skip


def augmented(records: Sequence[LabeledRecord], config: AugmentConfig) -> list[tuple[int, LabeledRecord]]:
    """The variants of ``records`` as (index of the source record, variant): a caller keeps each variant
    with its source (the same cross-validation fold, never judging one by the other)."""
    if config.variants <= 0:
        return []
    from curation.views.surrogates.pools import name_pool

    pool = name_pool()
    out = []
    for index, record in enumerate(records):
        if len(record.text) > config.max_chars:
            continue
        seen = set()
        for k in range(config.variants):
            digest = hashlib.sha256(f"{config.seed}|{k}|{record.text}".encode()).digest()
            variant = swap_mentions(record, random.Random(int.from_bytes(digest[:8], "big")), pool, f"~swap{k}")
            if variant is not None and variant.text not in seen:
                seen.add(variant.text)
                out.append((index, variant))
    return out
