"""Identity-level masking: every variant of a detected person goes with the person.

A detector that finds "Quillon Vasquez-Ardent" (under any label) does not necessarily find "Thanks
Quillon" or "Ms. Vasquez-Ardent" three turns later. This policy step groups the masked names of a scope
into people, relabels a name tagged ORGANIZATION/LOCATION as PERSON when the scope shows it is one, and
masks the other mentions of its first name and surname in the scope, so both released views (tags and
surrogates) treat them as one identity (the surrogate engine then gives them agreeing fake names).

Collateral is bounded: a variant is a whole, capitalized word of >= 3 letters that is a part of a name
masked in the *same scope*, never a stop word, common English word, title, month or weekday.
Pure functions over texts and spans (policy, no model).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache

from curation.core import spans as S
from curation.core.spans import Span, merge
from curation.core.textnorm import fold, for_matching

# Labels a detector gives to person names by mistake (spaCy/Presidio NER confuses these three).
NAME_LABELS = frozenset({S.PERSON, S.ORGANIZATION, S.LOCATION})
VARIANT_SOURCE = "name_variant"
MIN_VARIANT_LETTERS = 3
_TITLES = ("mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "madam", "dame", "lady", "lord")
_TITLE = r"(?:" + "|".join(t.capitalize() for t in _TITLES) + r")\.?"
# Words that introduce a person addressed or named: "Thanks Quillon", "Dear Quillon", "cc Quillon".
_VOCATIVE = r"(?:[Tt]hanks|[Tt]hank you|[Hh]i|[Hh]ello|[Hh]ey|[Dd]ear|[Cc]heers|[Ss]incerely|[Rr]egards|[Cc]c)"
NAME_TOKEN = re.compile(r"[^\W\d_][\w'\u2019-]*")  # a word of a name: a letter, then word chars, apostrophes, hyphens
_PARTICLES = frozenset({"van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "la", "le", "bin", "al"})
_CALENDAR = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday"
)
# Words often capitalized in chats and tickets that are roles or parts of a firm's name, not a person's.
_NOT_NAMES = (
    "customer agent support team service services help desk admin administrator user client manager staff "
    "account order ticket thanks thank hello dear regards cheers best kind sincerely sir madam okay ok yes "
    "no please sorry great good morning afternoon evening night today tomorrow yesterday north south east west "
    "new old street road avenue city county state university college school hospital bank group company inc "
    "ltd llc corp corporation limited holdings partners associates consulting systems solutions international"
)


@cache
def common_words() -> frozenset[str]:
    """Casefolded words that are never taken as a name variant on their own."""
    from faker.providers.lorem.en_US import Provider as Lorem
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(
        {w.casefold() for w in Lorem.word_list}
        | set(STOP_WORDS)
        | set(_CALENDAR.split())
        | set(_NOT_NAMES.split())
        | set(_TITLES)
        | _PARTICLES
    )


@cache
def _given_names() -> frozenset[str]:
    from curation.views.surrogates.pools import _first_name_genders

    return frozenset(_first_name_genders())


@cache
def _not_a_person() -> re.Pattern:
    """A name part that marks a firm or a place ("Acme Logistics", "Harbor Street")."""
    from curation.detect.addresses import _ORG_SUFFIX, _USPS_FULL

    return re.compile(rf"^(?:{_ORG_SUFFIX}|(?:{'|'.join(_USPS_FULL)})s?)$")


@dataclass
class IdentityReport:
    """Counts of what the step did (no values): for the mask stage's summary and the card."""

    identities: int = 0
    relabeled_as_person: int = 0
    variant_spans: int = 0
    by_scope: dict[str, int] = field(default_factory=dict, repr=False)

    def add(self, later: IdentityReport) -> IdentityReport:
        """This pass followed by a later one over its output (identities: the later count)."""
        return IdentityReport(
            later.identities,
            self.relabeled_as_person + later.relabeled_as_person,
            self.variant_spans + later.variant_spans,
            {**self.by_scope, **later.by_scope},
        )

    def to_dict(self) -> dict:
        return {
            "identities": self.identities,
            "relabeled_as_person": self.relabeled_as_person,
            "variant_spans": self.variant_spans,
        }


def name_parts(value: str) -> list[str] | None:
    """The first name / middle / surname tokens of a name-shaped value (title, possessive and suffix
    dropped), or None when the value is not shaped like a person's name (1-4 capitalized words).
    The value is read as the matchers read text (``textnorm.fold``): a zero-width space inside a name
    does not make it unparseable."""
    from curation.views.surrogates.names import parse_name

    mention = parse_name(fold(value))
    if mention is None:
        return None
    tokens = [t for t in (mention.first, *mention.middle) if t] + (mention.last.split() if mention.last else [])
    words = [t for t in tokens if t.casefold() not in _PARTICLES]
    if not 1 <= len(words) <= 4 or not all(w[:1].isupper() for w in words):
        return None
    return words


def variant_words(parts: Iterable[str]) -> set[str]:
    """The parts (and parts of hyphenated parts) that can stand for the person on their own."""
    out = set()
    for part in parts:
        for word in {part, *part.split("-")}:
            word = word.rstrip(".")
            letters = sum(c.isalpha() for c in word)
            if letters >= MIN_VARIANT_LETTERS and word.casefold() not in common_words() and NAME_TOKEN.fullmatch(word):
                out.add(word)
    return out


def _is_person(label: str, parts: list[str], scope_text: str, person_words: set[str]) -> bool:
    """A PERSON span is a person; an ORGANIZATION/LOCATION one only with evidence from the scope: two or
    more name words with no firm/place word, and a known given name first, a part that is named as a
    PERSON elsewhere in the scope, or a part after a title or a greeting ("Ms. X", "Thanks X")."""
    if label == S.PERSON:
        return True
    if len(parts) < 2 or any(_not_a_person().match(p) for p in parts):
        return False
    if parts[0].casefold() in _given_names() or {p.casefold() for p in parts} & person_words:
        return True
    return any(
        re.search(rf"(?<![\w-])(?:{_TITLE}|{_VOCATIVE},?)[ \t]+{re.escape(p)}(?![\w-])", scope_text)
        for p in variant_words(parts)
    )


def _occurrences(text: str, words: set[str]) -> Iterable[tuple[int, int]]:
    """Whole-word, capitalized occurrences of ``words`` (an optional title before one is included), found
    on the matching view of ``text`` (zero-width and look-alike characters folded), in original offsets."""
    if not words:
        return
    view = for_matching(text)
    alternatives = "|".join(re.escape(w) for w in sorted({fold(w) for w in words}, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])(?:(?:{_TITLE})[ \t]+)?({alternatives})(?![\w-])", re.IGNORECASE)
    for match in pattern.finditer(view.text):
        word = match.group(1)
        if word[:1].isupper():
            yield view.original_span(match.start(), match.end())


def mask_name_variants(
    texts: Mapping[str, str], spans: Mapping[str, list[Span]], scope_of: Mapping[str, str]
) -> tuple[dict[str, list[Span]], IdentityReport]:
    """Within each scope: find the people among the masked names, relabel them PERSON, and mask every
    other capitalized mention of their name words. Returns the new spans per document and counts."""
    report = IdentityReport()
    groups: dict[str, list[str]] = defaultdict(list)
    for doc_id in texts:
        groups[scope_of.get(doc_id, doc_id)].append(doc_id)
    out = {doc_id: list(spans.get(doc_id, [])) for doc_id in texts}
    for scope, doc_ids in sorted(groups.items()):
        scope_text = "\n".join(fold(texts[d]) for d in doc_ids)
        named = [
            (doc_id, i, span, parts)
            for doc_id in doc_ids
            for i, span in enumerate(out[doc_id])
            if span.label in NAME_LABELS and (parts := name_parts(span.text_of(texts[doc_id])))
        ]
        person_words = {p.casefold() for _, _, s, parts in named if s.label == S.PERSON for p in parts}
        words: set[str] = set()
        people: set[tuple[str, ...]] = set()
        for _, _, span, parts in named:
            if _is_person(span.label, parts, scope_text, person_words):
                people.add(tuple(p.casefold() for p in parts))
                words |= variant_words(parts)
        folded = {w.casefold() for w in words} | {p for person in people for p in person}
        for doc_id, i, span, parts in named:  # a person's name, or a part of it, under another label
            if span.label != S.PERSON and (
                tuple(p.casefold() for p in parts) in people or (len(parts) == 1 and parts[0].casefold() in folded)
            ):
                out[doc_id][i] = replace(span, label=S.PERSON, source=f"{span.source}+identity".lstrip("+"))
                report.relabeled_as_person += 1
        added = 0
        for doc_id in doc_ids:
            taken = out[doc_id]
            new = [
                Span(a, b, S.PERSON, None, VARIANT_SOURCE)
                for a, b in _occurrences(texts[doc_id], words)
                if not any(s.start < b and a < s.end for s in taken)
            ]
            added += len(new)
            out[doc_id] = merge(taken + new) if new else taken
        report.identities += len(people)
        report.variant_spans += added
        if added:
            report.by_scope[scope] = added
    return out, report
