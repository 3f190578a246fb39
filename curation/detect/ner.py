"""Cleaning of spaCy NER output (edges, greetings, relative dates) and the text Presidio is given
(comment runs of code, chunks, true-cased capitals)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from curation.core.spans import DATE_TIME, LOCATION, NRP, ORGANIZATION, PERSON
from curation.detect.addresses import _ORG_SUFFIX
from curation.detect.base import _GREETING, _c
from curation.detect.titles import _occupation_word

_MONTH_OR_DAY = _c(
    r"(?i)\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s(?:day)?)?"
    r"|wed(?:nesday)?|thu(?:rs(?:day)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|christmas|easter|thanksgiving"
    r"|new year'?s)\b"
)
_DATE_DIGITS = _c(r"\b(?:1[0-9]|20)\d\d\b|\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{1,4})?|\d{1,2}:\d{2}")
# Glossary acronyms the small spaCy model tags as ORG/PERSON/GPE in support-style text.
_NOT_NAMES = frozenset(
    "SSN IBAN ATM ASAP PIN ID DOB SWIFT BIC API URL CVV CVC OTP FAQ PDF USD EUR GBP TV CEO CTO CFO HR IT "
    "VIP FYI RSVP ETA OK AM PM PS PO ZIP SMS GPS DNS SQL JSON XML HTML HTTP HTTPS SSH SSL TLS VPN PR QA UI "
    "UX CPU GPU RAM OS IP MAC EMAIL E-MAIL PHONE FAX LLC INC LTD WAN LAN SSO SCIM MFA 2FA SAML LDAP MRN BP "
    "LDL HDL ICU ER GP RMA SKU UPC PST EST CST MST UTC GMT".split()
)


def _clean_ner(label: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    """Trim or drop NER output that identifies nobody.

    Relative dates ("next week") and durations are dropped; entities are cut at a line break (spaCy runs
    names into the next line of a form); PERSON loses a leading greeting ("Hello Sra") and may not hold
    digits; glossary acronyms (SSN, WAN, MRN) are not organisations.
    """
    value = text[start:end]
    if label == DATE_TIME:
        if _RELATIVE_DAY.match(value.strip()):
            return None
        return (start, end) if _MONTH_OR_DAY.search(value) or _DATE_DIGITS.search(value) else None
    if "\n" in value.strip():
        offset = len(value) - len(value.lstrip())
        first = value.strip().split("\n", 1)[0]
        start, end = start + offset, start + offset + len(first.rstrip())
        value = text[start:end]
    if label == PERSON:
        greet = _GREETING.match(value)
        if greet:
            start += greet.end()
            value = text[start:end]
        if any(c.isdigit() for c in value):
            return None
    if label in (PERSON, ORGANIZATION, LOCATION, NRP):
        trimmed = _trim_name_edges(label, text, start, end)
        if trimmed is None:
            return None
        start, end = trimmed
        value = text[start:end]
    v = value.strip(" \t,.;:")
    if len(v) < 2 or v.upper() in _NOT_NAMES or not any(c.isalpha() for c in v):
        return None
    return start, end


# Edges of a name that are not part of it: "the University of Oslo" / "Ada Lovelace's" / "Smith of" /
# "Producer Ada Lovelace" (an occupation before a person's name).
_LEADING_ARTICLE = _c(r"^(?:the|The|THE)[ \t]+(?=\S)")
# "Southern Italy": a region descriptor before a place name (places, and places mis-tagged as
# organisations), except in names of their own ("Northern Ireland", "Central Bank")
_LEADING_COMPASS = _c(
    r"^(?:Southern|Northern|Eastern|Western|Central|Greater|Upper|Lower|Inner|Outer|South-?[Ee]astern"
    r"|South-?[Ww]estern|North-?[Ee]astern|North-?[Ww]estern)[ \t]+"
    r"(?!(?:Ireland|Territory|Territories|Cape|Australia|Sahara|Mariana|Rhodesia|Province|Macedonia"
    r"|African|America|Manchester|London|Antilles|Transvaal|Highlands|Hemisphere)\b)(?=[A-Z])"
)
_ORG_NAME_CUE = _c(
    rf"(?:^|[ \t]){_ORG_SUFFIX}(?![\w'’-])|\b(?:Trust|Railways?|Railroad|Airlines?|Airways|Energy|Power|Gas"
    r"|Water|Electric|University|College|School|Hospital|Council|Authority|Police|Church|Club|Federal)\b"
)
# "next Sunday", "the last Friday": relative to an unknown date, identifies nothing
_RELATIVE_DAY = _c(
    r"(?i)^(?:the[ \t]+)?(?:last|next|this|coming|following|previous|past|every|each|same|that|on)[ \t]+"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:[ \t]+(?:morning|afternoon|evening|night))?$"
)
_TRAILING_JUNK = _c(r"(?:['’]s|(?<=s)['’]|[ \t]+(?:of|and|as|at|for|in|on|to|from|with|by|&)|[\s,;:]+)$")
_LEADING_WORD = _c(r"^([A-Za-z][a-z'’-]+)[ \t]+(?=\S)")
# "ex-Zombie Ahtisaari", "former Mayor X": a lower-case leading word before a capitalised name (particles
# such as "van" / "de" stay: "van de Noort").
_LEADING_LOWER = _c(r"^(?![a-z]{1,3}[ \t])(?:[a-z]+-\S+|[a-z]{4,})[ \t]+(?=[A-Z])")


# Occupations that are also common surnames ("Mrs. Baker"): never cut from or dropped as a PERSON.
_SURNAME_OCCUPATIONS = frozenset(
    "baker barber bishop brewer butcher butler carpenter carter chaplain cook cooper dean dyer farmer fisher "
    "fisherman forester gardener glazier governor guard judge marshal mason miller minister painter porter "
    "priest sawyer shepherd singer skinner steward tailor tanner thatcher turner usher walker warden weaver "
    "webster".split()
)


def _person_role_word(word: str) -> bool:
    return (
        _occupation_word(word)
        and word.lower().rstrip("s") not in _SURNAME_OCCUPATIONS
        and (word.lower() not in _SURNAME_OCCUPATIONS)
    )


def _trim_name_edges(label: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    """Cut leading articles, trailing possessives / prepositions / whitespace and, for PERSON, leading
    occupation words; None when nothing of the name is left (a PERSON that is only "Salesperson")."""
    while True:
        value = text[start:end]
        m = _LEADING_ARTICLE.match(value)
        if m is None and label in (LOCATION, NRP, ORGANIZATION):
            m = _LEADING_COMPASS.match(value)
            if m is not None and label == ORGANIZATION and _ORG_NAME_CUE.search(value):
                m = None
        if m is None and label == PERSON:
            m = _LEADING_WORD.match(value)
            if m is not None and not _person_role_word(m.group(1)):
                m = None
        if m is None and label in (PERSON, ORGANIZATION):
            m = _LEADING_LOWER.match(value)
        if m is not None:
            start += m.end()
            continue
        m = _TRAILING_JUNK.search(value)
        if m is not None and m.start() > 0:
            end = start + m.start()
            continue
        break
    value = text[start:end]
    if label == PERSON and all(_person_role_word(w) for w in value.split()):
        return None
    return (start, end) if end > start else None


_COMMENT = _c(
    r"(?m)(?:^|(?<=[ \t]))(?:#(?![!{])|//|--[ \t])[^\n]*|/\*[\s\S]*?\*/|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''"
    r"|<!--[\s\S]*?-->"
)


def _comment_name_ok(label: str, value: str) -> bool:
    """In code comments keep only full names ("Ada Lovelace"): single capitalised words there are mostly
    sentence starts ("Deploy", "Scratch"), and the rules already cover everything but names."""
    words = value.strip("#/*-! \t").split()
    return label == PERSON and len(words) >= 2 and all(w[:1].isupper() for w in words)


_CAPS_RUN = _c(
    r"(?<![\w'’-])(?:[^\W\d_a-zß-ÿ]{4,}|[^\W\d_a-zß-ÿ]{2,3}(?=[ \t'’-]+[^\W\d_a-zß-ÿ]{4,}))"
    r"(?:[ \t'’-]+[^\W\d_a-zß-ÿ]{2,})*(?![\w'’-])"
)


def _truecase(text: str) -> str:
    """Title-case ALL-CAPS words ("UPTON SCUDAMORE") in mixed-case prose for NER, which the small spaCy
    model reads as acronyms and skips; offsets are preserved (length-changing case maps are left alone)."""
    words = re.findall(r"[^\W\d_]+", text)
    caps = sum(w.isupper() for w in words)
    if not caps or 2 * caps > len(words):
        return text  # nothing to do, or a shouted / all-caps text where case carries no signal

    def fix(m: re.Match[str]) -> str:
        titled = m.group(0).title()
        return titled if len(titled) == len(m.group(0)) and m.group(0).upper() not in _NOT_NAMES else m.group(0)

    return _CAPS_RUN.sub(fix, text)


def _comments(text: str, max_chars: int = 20_000) -> Iterator[tuple[int, str]]:
    """Comment and docstring runs of source code, where names of people (authors, owners) live.

    Consecutive line comments are joined so NER sees whole sentences.
    """
    runs: list[list[int]] = []
    for m in _COMMENT.finditer(text):
        if runs and not text[runs[-1][1] : m.start()].strip() and m.end() - runs[-1][0] <= max_chars:
            runs[-1][1] = m.end()
        else:
            runs.append([m.start(), m.end()])
    for start, end in runs:
        yield start, text[start:end]


def _chunks(text: str, size: int) -> Iterator[tuple[int, str]]:
    """Split long texts at line breaks (else spaces) so spaCy's memory stays bounded."""
    if len(text) <= size:
        yield 0, text
        return
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind("\n", start + size // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + size // 2, end)
            end = cut + 1 if cut >= 0 else end
        yield start, text[start:end]
        start = end
