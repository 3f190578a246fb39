"""PII pattern rules: emails, checksum-validated numbers, URLs, ids, dates, ages, person and firm cues, and phone
numbers validated with ``phonenumbers``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from curation.core.spans import (
    ACCOUNT_ID,
    AGE,
    CREDIT_CARD,
    DATE_TIME,
    EMAIL_ADDRESS,
    IBAN_CODE,
    IP_ADDRESS,
    ORGANIZATION,
    PERSON,
    PHONE_NUMBER,
    URL,
    US_SSN,
    USERNAME,
    Span,
)
from curation.detect.addresses import _PNAME, _STOP
from curation.detect.base import _TIER_PATTERN, _TIER_VALIDATED, Rule, _c, _query_value
from curation.detect.validators import (
    _card_ok,
    _encoded_email_ok,
    _id_value_ok,
    _ipv4_ok,
    _ipv6_ok,
    _private_url,
    _profile_handle_ok,
    _query_phone_ok,
    _query_username_ok,
    _ssn_ok,
    _username_ok,
    iban_ok,
)

# --- phones ---------------------------------------------------------------------------------------------
_PHONE_CANDIDATE = _c(
    r"(?<![\w+/.-])(?:(?:\+|00)\d{1,3}[ \t.-]?)?(?:\(0\)[ \t]?)?(?:\(\d{1,5}\)[ \t.-]?)?(?:\d{7,15}"
    r"|\d{1,6}(?:[ \t.-]\d{1,8}){1,5})(?:[ \t]*(?:x|ext\.?)[ \t]*\d{1,5})?(?![\w/]|[.-]\d)"
)
_PHONE_CONTEXT = _c(
    r"(?i)\b(?:phone|telephone|mobile|cell|cellphone|call|called|calling|fax|contact|number|whatsapp|sms"
    r"|text|reach|dial|desk|office|home|work|landline)\b|\b(?i:tel|mob|ph|m|t|f|p)[ \t]*[.:]"
)
# Dates and year ranges look like digit groups too.
_YEAR_RANGE = _c(r"^(?:1[89]|20)\d\d[ \t]*[-–][ \t]*(?:(?:1[89]|20)\d\d|\d\d)$")
_YMD = _c(r"^(\d{4})[-./](\d{1,2})[-./](\d{1,2})(?:[ \tT]\d{1,2})?$")
_DMY = _c(r"^(\d{1,2})[-./](\d{1,2})[-./](\d{2}|\d{4})$")


def _looks_like_date(cand: str) -> bool:
    if _YEAR_RANGE.match(cand):
        return True
    m = _YMD.match(cand)
    if m:
        return 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31
    m = _DMY.match(cand)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        return 1 <= a <= 31 and 1 <= b <= 31 and min(a, b) <= 12
    return False


class _PhoneFinder:
    """Candidate digit groups validated with ``phonenumbers`` (the library Presidio uses) across regions."""

    def __init__(self, regions: Sequence[str]) -> None:
        import phonenumbers

        self._pn = phonenumbers
        self._regions = tuple(regions)

    def find(self, text: str, need_context: bool = False) -> Iterator[Span]:
        """Phones in ``text``; ``need_context`` (code) demands a phone word nearby, as digits abound there."""
        pn = self._pn
        for m in _PHONE_CANDIDATE.finditer(text):
            cand = m.group(0)
            digits = re.sub(r"\D", "", cand)
            if not 7 <= len(digits) <= 15 or _looks_like_date(cand) or len(set(digits)) < 3:
                continue
            separated = bool(re.search(r"[ \t.()+-]", cand))
            context = _PHONE_CONTEXT.search(text, max(0, m.start() - 40), m.start()) is not None or (
                _PHONE_CONTEXT.match(text, m.end() + 1) is not None
            )
            if not context and (need_context or not separated):
                continue
            valid = possible = False
            regions: Sequence[str | None] = (None,) if cand.startswith(("+", "00")) else self._regions
            for region in regions:
                try:
                    num = pn.parse(cand.replace("00", "+", 1) if cand.startswith("00") else cand, region)
                except pn.NumberParseException:
                    continue
                if pn.is_valid_number(num):
                    valid = True
                    break
                possible = possible or pn.is_possible_number(num)
            if valid and (context or separated):
                score = 0.75 if context else 0.55
            elif possible and context and separated:
                score = 0.5
            else:
                continue
            yield Span(m.start(), m.end(), PHONE_NUMBER, score, "pattern:phone")


class _AgeRule(Rule):
    """Age digits sit in group ``v`` or ``w`` depending on the phrasing."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            g = next(k for k in ("v", "w", "x") if m.group(k) is not None)
            start, end = m.span(g)
            if 0 < int(m.group(g)) < 125:
                yield Span(start, end, self.label, self.score, f"pattern:{self.name}")


_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_FIRM_WORD = rf"(?!(?:{_STOP}|{_WEEKDAY})\b)[A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž-]+"

PII_RULES: tuple[Rule, ...] = (
    Rule(
        "email",
        EMAIL_ADDRESS,
        _c(r"\b[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}\b"),
        0.9,
        _TIER_VALIDATED,
    ),
    Rule(
        "url_encoded_email",
        EMAIL_ADDRESS,
        # percent-encoded, as in a query string or a logged redirect: orla.quenby%40host.net,
        # orla%2Equenby%40host%2Enet, orla%2Bnews%40host.net, double-encoded %2540; the whole address is
        # labeled (not an "email=" key before it), and it must decode to a plain address
        _c(
            r"(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z0-9._%+-]))[A-Za-z0-9_](?:[A-Za-z0-9._+-]|%(?:25)?(?:2[BbDdEe]"
            r"|5[Ff])){0,63}(?:@|%(?:25)?40)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.|%(?:25)?2[Ee]))+"
            r"[A-Za-z]{2,24}(?![A-Za-z0-9-])"
        ),
        0.9,
        _TIER_VALIDATED,
        _encoded_email_ok,
    ),
    Rule(
        "credit_card",
        CREDIT_CARD,
        _c(r"(?<![\d.,-])\d(?:[ -]?\d){11,18}(?![\d-]|[.,]\d)"),
        0.95,
        _TIER_VALIDATED,
        _card_ok,
    ),
    Rule(
        "iban",
        IBAN_CODE,
        _c(r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,4})?\b"),
        0.95,
        _TIER_VALIDATED,
        iban_ok,
    ),
    Rule(
        "ipv4",
        IP_ADDRESS,
        _c(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]|\.\d)"),
        0.8,
        _TIER_VALIDATED,
        _ipv4_ok,
    ),
    Rule(
        "ipv6",
        IP_ADDRESS,
        _c(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])"),
        0.8,
        _TIER_VALIDATED,
        _ipv6_ok,
    ),
    Rule(
        "us_ssn",
        US_SSN,
        _c(r"\b\d{3}-\d{2}-\d{4}\b|(?i:ssn|social security)[^\n\d]{0,25}(?P<v>\d{3} ?\d{2} ?\d{4})\b"),
        0.85,
        _TIER_VALIDATED,
        _ssn_ok,
    ),
    Rule(
        "url",
        URL,
        _c(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`]{3,}|\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\"'`]*"),
        0.6,
        _TIER_PATTERN,
        _private_url,
    ),
    # A profile page on a social or code-hosting site names one person: "github.com/handle",
    # "linkedin.com/in/handle", with or without a scheme (CVs and signatures drop it). Only a single handle
    # segment: "github.com/org/repo" (code's everyday link) is not a profile. Prose only.
    Rule(
        "profile_url",
        URL,
        _c(
            r"(?i)(?<![\w./@-])(?:https?://)?(?:www\.)?(?:linkedin\.com/(?:in|pub)/|(?:github|gitlab)\.com/"
            r"|bitbucket\.org/|behance\.net/|dribbble\.com/|(?:twitter|x|instagram|facebook|threads)\.(?:com|net)/"
            r"|(?:medium|tiktok|youtube)\.com/@|kaggle\.com/|stackoverflow\.com/users/\d+/)"
            r"(?P<handle>[a-z0-9][a-z0-9._-]{0,60})/?(?![\w/-])"
        ),
        0.6,
        _TIER_PATTERN,
        _profile_handle_ok,
        prose_only=True,
    ),
    Rule(
        "home_path_user",
        USERNAME,
        _c(
            r"(?:/home/|/Users/|/usr/home/|[A-Za-z]:\\{1,2}Users\\{1,2}"
            r"|[A-Za-z]:/Users/)(?P<v>[A-Za-z0-9._-]{2,64})"
        ),
        0.8,
        _TIER_PATTERN,
        _username_ok,
    ),
    Rule(
        "query_username",
        USERNAME,
        # ?user=orla77 / &login=... in a URL query string (an e-mail value is the email rules')
        _query_value(r"user|username|user_name|login|login_name"),
        0.7,
        _TIER_PATTERN,
        _query_username_ok,
    ),
    Rule(
        "query_phone",
        PHONE_NUMBER,
        _query_value(r"phone|phone_?number|tel|telephone|mobile|mobile_?number|cell|msisdn"),
        0.7,
        _TIER_PATTERN,
        _query_phone_ok,
    ),
    Rule(
        "prefixed_id",
        ACCOUNT_ID,
        _c(
            r"\b(?:ACCT?|ORD|INV|CUST?|TKT|TCK|TXN|REF|MBR|MEM|PO|SO|CASE|BKG|RES|UID|EMP|CLM|POL|PAT"
            r"|SUB)[-_#]?\d[A-Z0-9-]{3,30}\b|\b(?:cus|acct|sub|ch|pi|pm|in|txn|ord|usr)_[A-Za-z0-9]{8,40}\b"
        ),
        0.7,
        _TIER_PATTERN,
        lambda v: (
            sum(c.isdigit() for c in v) >= 4
            or ("_" in v and any(c.isdigit() or c.isupper() for c in v.split("_", 1)[1]))
        ),
    ),
    Rule(
        "generic_prefixed_id",
        ACCOUNT_ID,
        # any short upper-case prefix + a long number (MRN-2103844), or #123-4567890 order numbers;
        # prose only, since in code these are issue references (GH#12345, ARROW-17192)
        _c(r"\b[A-Z]{2,5}[-_#]\d{5,12}\b|(?<![\w&#])#\d{2,}-\d{3,}(?:-\d+)*\b"),
        0.6,
        _TIER_PATTERN,
        prose_only=True,
    ),
    Rule(
        "labeled_id",
        ACCOUNT_ID,
        _c(
            r"(?i)\b(?:account|acct|a/c|order|invoice|customer|member(?:ship)?|policy|ticket|case|reference"
            r"|ref|confirmation|tracking|booking|reservation|transaction|loyalty|patient|employee|student"
            r"|licen[cs]e|passport|routing|sort code|tax|vat|national id|id card|driver'?s? licen[cs]e|id"
            r"|mrn|rma|record|authori[sz]ation|badge|serial|claim|shipment|parcel|subscription|contract"
            r"|application)[ \t]*(?:number|no\.?|num|#|id|code)?[ \t]*(?:is|:|="
            r"|#)?[ \t]*#?[ \t]*(?P<v>(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{3,30}[A-Z0-9])\b"
        ),
        0.6,
        _TIER_PATTERN,
        _id_value_ok,
        prose_only=True,
    ),
    Rule(
        "datetime",
        DATE_TIME,
        _c(
            r"\b(?:1[6-9]|20)\d\d-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12]\d|3[01])(?:[T ](?:[01]?\d"
            r"|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?)?(?![\w-])|\b(?:0?[1-9]"
            r"|[12]\d|3[01])[/.](?:0?[1-9]|[12]\d|3[01])[/.](?:1[6-9]|20)?\d\d\b(?![/.]\d)|\b(?:[01]?\d"
            r"|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:[ \t]?[AaPp]\.?[Mm]\b\.?)?(?![\d:])"
        ),
        0.6,
        _TIER_PATTERN,
        prose_only=True,
    ),
    _AgeRule(
        "age",
        AGE,
        _c(
            r"(?i)\b(?P<v>\d{1,3})[ -]?(?:years?|yrs?|y)[ -]?(?:old|/o|o\b)|\b(?:aged?|age of|turn(?:ed|s"
            r"|ing)?|i'?m|i am)[ \t]+(?P<w>\d{1,3})\b(?![.,:/-]?\d)|\b(?:he|she|i|they|who)[ \t]+(?:was|is"
            r"|am|were)[ \t]+(?P<x>\d{1,3})(?=[ \t]*(?:[.,;!?]|$|years))"
        ),
        0.6,
        _TIER_PATTERN,
        prose_only=True,
    ),
    Rule(
        "introduced_person",
        PERSON,
        _c(
            rf"(?:\b[Mm]y name is|\b[Mm]y name's|\bname is|\b(?:[Ff]ull )?[Nn]ame[ \t]*:|\bcalled|\bnamed"
            rf"|\bsigned|\b[Rr]egards,|\b[Ss]incerely,|\b[Tt]hanks,"
            rf"|\b[Cc]heers,)[ \t]*\n?[ \t]*(?P<v>{_PNAME}(?:[ \t]+(?:{_PNAME}"
            rf"|[A-Z]\.?(?=[ \t]+[A-Z]))){{0,3}})"
        ),
        0.6,
        _TIER_PATTERN,
        prose_only=True,
    ),
    Rule(
        "initialed_person",
        PERSON,
        _c(rf"\b{_PNAME}[ \t]+[A-Z]\.?[ \t]+{_PNAME}(?![\w'’-])"),
        0.55,
        _TIER_PATTERN,
        prose_only=True,
    ),
    Rule(
        "firm_name",
        ORGANIZATION,
        # partnership names: "Clark, Romero and Hall", "Hubbard, Fox & Gillespie", "Thomas and Sons"
        _c(
            rf"(?<!,[ \t])(?<!,)\b{_FIRM_WORD},[ \t]+{_FIRM_WORD},?[ \t]+(?:and|&)[ \t]+{_FIRM_WORD}"
            r"(?=['’]s\b|(?![\w'’-]))"
            rf"|\b{_FIRM_WORD}[ \t]+(?:and|&)[ \t]+(?:Sons|Daughters|Partners|Associates|Brothers)\b"
        ),
        0.6,
        _TIER_PATTERN,
        prose_only=True,
    ),
)


_CARD_CONTEXT = _c(r"(?i)\b(?:card|cc|visa|master ?card|amex|american express|discover|maestro|pan|payment)\b")


def _card_context(text: str, span: Span) -> bool:
    """In code a bare Luhn-valid literal is more often a seed than a card: need grouping or a word."""
    value = text[span.start : span.end]
    return " " in value or "-" in value or _CARD_CONTEXT.search(text, max(0, span.start - 60), span.start) is not None
