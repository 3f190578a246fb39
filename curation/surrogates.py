"""Deterministic, format-preserving surrogates for detected entities, driven by the convention.

Every replacement is chosen by HMAC-SHA256(key, scope | entity type | normalized value), so the
same original gets the same surrogate within a scope, unrelated ones across scopes, and entirely
new ones after a key rotation, without storing anything but keyed HMACs. Replacement values come
only from name lists or fictional and reserved ranges (Faker's person lists of several locales,
example.* domains, 555-01xx phones, 9xx SSNs, documentation IP ranges) or, for nationalities /
religious / political groups, from a built-in list of such groups, and never equal an original seen in the batch (see
:meth:`SurrogateEngine.register_originals` for exactly what is guaranteed).

Nothing here (reprs, exceptions, log lines) ever contains an original value.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import hmac
import ipaddress
import logging
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from faker import Faker

from curation import spans as S
from curation.convention import Convention, Rule
from curation.vault import VaultRecord, _frame, hmac_value, normalize_value, public_id

log = logging.getLogger(__name__)

MAX_DRAWS = 200
STRICT_NAME_DRAWS = 32
EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")
DOC_V4_NETS = ("192.0.2", "198.51.100", "203.0.113")
MASK_CHAR = "*"
DATE_OFFSET_DRAWS = 64
DAYS_PER_MONTH = 365.25 / 12
# Labels whose surrogates may not share a whole word (>= 3 letters) with any registered original.
WORD_CHECKED_LABELS = frozenset({S.PERSON, S.LOCATION, S.ORGANIZATION, S.NRP, S.USERNAME})
_WORD_RE = re.compile(r"[^\W\d_]+")


def _words(text: str) -> set[str]:
    """Casefolded alphabetic tokens of at least 3 letters ('whole words' for collision checks)."""
    return {w.casefold() for w in _WORD_RE.findall(text) if len(w) >= 3}


def _folded(text: str) -> str:
    """Plain comparison form: casefolded, whitespace collapsed."""
    return " ".join(text.casefold().split())


# --------------------------------------------------------------------------------------------
# Public value types


@dataclass(frozen=True, slots=True)
class Scope:
    """Ids of the nested scopes a text belongs to; a rule's ``scope`` picks which id links values.

    A missing conversation/account id falls back to the next narrower one (never wider), so
    leaving it out can only make linking stricter.
    """

    document: str
    conversation: str | None = None
    account: str | None = None

    def key_for(self, level: str) -> str:
        if level == "global":
            return "global"
        chain = {"document": ("document",), "conversation": ("conversation", "document")}
        for name in chain.get(level, ("account", "conversation", "document")):
            value = getattr(self, name)
            if value:
                return f"{name}:{value}"
        raise SurrogateError("scope has no document id")


ScopeLike = str | Scope


@dataclass(frozen=True, slots=True)
class Replacement:
    """Where one span went: original offsets, offsets in the rewritten text, label and style used."""

    start: int
    end: int
    new_start: int
    new_end: int
    label: str
    style: str


@dataclass(frozen=True, slots=True)
class RewriteResult:
    text: str
    replacements: list[Replacement]


class SurrogateError(ValueError):
    """A span or value that cannot be rewritten; messages name labels and offsets, never values."""


class NoFreshSurrogate(SurrogateError):
    """Every draw collided with an original or an earlier surrogate (a batch whose originals cover most of
    the name lists); the value falls back to its typed tag, as for every other label."""


# --------------------------------------------------------------------------------------------
# Names: parsing mentions and grouping them into identities

_TITLE_GENDER = {
    "mr": "male",
    "sir": "male",
    "mrs": "female",
    "ms": "female",
    "miss": "female",
    "madam": "female",
    "mx": None,
    "dr": None,
    "prof": None,
}
_TITLE_RE = re.compile(r"^((?:(?:" + "|".join(_TITLE_GENDER) + r")\.?\s+)+)", re.IGNORECASE)
_SUFFIX_RE = re.compile(r"(,?\s+(?:jr|sr|ii|iii|iv|phd|md)\.?)$", re.IGNORECASE)
_POSSESSIVE_RE = re.compile(r"['\u2019]s?$")
_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "la", "le", "bin", "al", "st."}
)
_NAME_TOKEN_RE = re.compile(r"[^\W\d_][\w'\u2019.-]*")


# Faker locales whose person lists give the surrogate name pool. en_US alone (1,000 surnames, ~700 given
# names) ran dry at 2,000 generated documents: a batch's originals covered so much of it that 27% of the
# people and 45% of the organizations fell back to typed tags (measured). Latin-script, ASCII-shaped names only.
NAME_POOL_LOCALES = (
    "en_US", "en_GB", "en_IE", "en_NZ", "de_DE", "de_AT", "fr_FR", "fr_CA", "es_ES", "es_MX", "it_IT",
    "nl_NL", "sv_SE", "da_DK", "no_NO", "fi_FI", "pt_PT", "pt_BR", "cs_CZ",
)  # fmt: skip
_POOL_NAME_RE = re.compile(r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?")


@dataclass(frozen=True, repr=False)
class NamePool:
    """Sorted, de-duplicated name lists to draw surrogates from (uniformly, with an HMAC-seeded RNG)."""

    male: tuple[str, ...]
    female: tuple[str, ...]
    given: tuple[str, ...]  # both, for a person of unknown gender
    last: tuple[str, ...]

    def __repr__(self) -> str:
        return f"NamePool(given={len(self.given)}, last={len(self.last)})"


@cache
def name_pool() -> NamePool:
    import importlib

    male: set[str] = set()
    female: set[str] = set()
    last: set[str] = set()
    for locale in NAME_POOL_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for target, attr in ((male, "first_names_male"), (female, "first_names_female"), (last, "last_names")):
            target.update(n for n in getattr(provider, attr, ()) if _POOL_NAME_RE.fullmatch(n))
    both = male & female  # a name listed as both says nothing about gender
    return NamePool(
        tuple(sorted(male - both)), tuple(sorted(female - both)), tuple(sorted(male | female)), tuple(sorted(last))
    )


def _city(rng: random.Random) -> str:
    """A fictional town in the en_US Faker formats ("Port Gnoddeton", "Hedinburgh"), from the name pool."""
    from faker.providers.address.en_US import Provider

    pool = name_pool()
    prefix, suffix = rng.choice(Provider.city_prefixes), rng.choice(Provider.city_suffixes)
    shape = rng.randrange(4)
    if shape == 0:
        return f"{prefix} {rng.choice(pool.given)}{suffix}"
    if shape == 1:
        return f"{prefix} {rng.choice(pool.given)}"
    return f"{rng.choice(pool.given if shape == 2 else pool.last)}{suffix}"


def _company(rng: random.Random) -> str:
    """A company name in the en_US Faker formats ("Maspero LLC", "Bader-Inglis"), from the name pool."""
    from faker.providers.company.en_US import Provider

    last = name_pool().last
    shape = rng.randrange(3)
    if shape == 0:
        return f"{rng.choice(last)} {rng.choice(Provider.company_suffixes)}"
    if shape == 1:
        return f"{rng.choice(last)}-{rng.choice(last)}"
    return f"{rng.choice(last)}, {rng.choice(last)} and {rng.choice(last)}"


@cache
def _first_name_genders() -> dict[str, str | None]:
    """Casefolded first name -> 'male' / 'female' / None (in both lists), from Faker en_US."""
    from faker.providers.person.en_US import Provider

    male = {n.casefold() for n in Provider.first_names_male}
    female = {n.casefold() for n in Provider.first_names_female}
    out: dict[str, str | None] = {n: "male" for n in male - female}
    out.update({n: "female" for n in female - male})
    out.update({n: None for n in male & female})
    return out


@dataclass(frozen=True)
class NameMention:
    """A parsed person mention; original tokens are kept for casing only and never shown in reprs."""

    title: str = ""
    first: str | None = None
    middle: tuple[str, ...] = ()
    last: str | None = None
    suffix: str = ""
    comma: bool = False
    possessive: str = ""
    gender: str | None = None

    def __repr__(self) -> str:
        return "NameMention(<redacted>)"

    @property
    def first_key(self) -> str | None:
        return _name_key(self.first)

    @property
    def last_key(self) -> str | None:
        return _name_key(self.last)

    @property
    def initial(self) -> bool:
        return self.first is not None and len(self.first.rstrip(".")) == 1


def _name_key(token: str | None) -> str | None:
    return None if token is None else token.rstrip(".").casefold()


def parse_name(value: str) -> NameMention | None:
    """Split a person mention into title / first / middle / last / suffix, or None if it is no name."""
    text, possessive = value.strip(), ""
    match = _POSSESSIVE_RE.search(text)
    if match and match.start() > 0:
        text, possessive = text[: match.start()], match.group()
    match = _TITLE_RE.match(text)
    title = match.group(1) if match else ""
    text = text[len(title) :]
    match = _SUFFIX_RE.search(text)
    suffix = match.group(1) if match else ""
    text = text[: len(text) - len(suffix)].strip()
    comma = "," in text
    if comma:
        last_part, first_part = text.split(",", 1)
        tokens = first_part.split() + last_part.split()
        if len(last_part.split()) != 1 or not first_part.split():
            return None
    else:
        tokens = text.split()
    if not tokens or not all(_NAME_TOKEN_RE.fullmatch(t) for t in tokens):
        return None
    gender = None
    for word in re.findall(r"[a-z]+", title.casefold()):
        gender = gender or _TITLE_GENDER.get(word)
    base = NameMention(title=title, suffix=suffix, comma=comma, possessive=possessive, gender=gender)
    if len(tokens) == 1:
        return replace(base, last=tokens[0]) if title else replace(base, first=tokens[0])
    first, *middle, last = tokens
    while middle and middle[-1].casefold() in _PARTICLES:
        last = f"{middle.pop()} {last}"
    return replace(base, first=first, middle=tuple(middle), last=last)


def _same_roles(mention: NameMention | None, canonical: NameMention | None) -> NameMention | None:
    """``mention`` with the name roles of ``canonical``, another spelling of the same normalized value:
    a lone "Whitfield" read as the surname that "Ms. Whitfield" made it (or as the given name)."""
    if mention is None:
        return canonical
    if canonical is None:
        return mention
    if mention.first is not None and mention.last is None and canonical.first is None:
        return replace(mention, first=None, last=mention.first)
    if mention.last is not None and mention.first is None and canonical.last is None:
        return replace(mention, first=mention.last, last=None)
    return mention


class Identity:
    """One person within a scope: the known first/last name keys and a gender cue."""

    __slots__ = ("first", "gender", "key", "last", "names", "number")

    def __init__(self, number: int, first: str | None, last: str | None, gender: str | None) -> None:
        self.number = number
        self.first = first
        self.last = last
        self.gender = gender or _first_name_genders().get(first or "")
        self.key = f"f:{first or ''}|l:{last or ''}"
        self.names: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"Identity(#{self.number})"

    @property
    def full(self) -> bool:
        return self.first is not None and self.last is not None


@dataclass(frozen=True)
class LocalPattern:
    """How an email local part / username is built from a name: kind, separator, trailing digits."""

    kind: str
    sep: str = ""
    digits: int = 0
    upper: bool = False

    def render(self, first: str, last: str, rng: random.Random) -> str:
        f, l_ = re.sub(r"[^a-z]", "", first.casefold()), re.sub(r"[^a-z]", "", last.casefold())
        core = {
            "first_last": f"{f}{self.sep}{l_}",
            "last_first": f"{l_}{self.sep}{f}",
            "initial_last": f"{f[:1]}{self.sep}{l_}",
            "first": f,
            "last": l_,
            "flast": f"{f[:1]}{l_}",
            "firstlast": f"{f}{l_}",
            "firstl": f"{f}{l_[:1]}",
        }[self.kind]
        core += "".join(str(rng.randrange(10)) for _ in range(self.digits))
        return core.upper() if self.upper else core


class IdentityResolver:
    """Groups all PERSON mentions and email/username local parts of one scope into identities.

    Feed everything first (:meth:`feed`), then resolve: full names define identities, then
    ``first.last`` emails, then titled surnames ("Ms. Whitfield"), then the other partial mentions
    ("Dana", "Whitfield") attach to the single identity they fit; ambiguous partials become
    identities of their own. Spellings of one value ("Whitfield", "Ms. Whitfield", "WHITFIELD's":
    one :func:`normalize_value`, one vault HMAC) always share the identity and the name role of the
    first one resolved, so the surrogates of one HMAC agree.
    """

    def __init__(self) -> None:
        self.identities: list[Identity] = []
        self._exact: dict[tuple[str | None, str | None], Identity] = {}
        self._raw: dict[str, Identity] = {}
        self._persons: dict[str, tuple[Identity, NameMention | None]] = {}
        self._by_normalized: dict[str, tuple[Identity, NameMention | None]] = {}
        self._locals: dict[str, tuple[Identity, LocalPattern] | None] = {}

    def __repr__(self) -> str:
        return f"IdentityResolver(identities={len(self.identities)})"

    def feed(self, persons: Iterable[str] = (), emails: Iterable[str] = ()) -> None:
        persons, emails = sorted(set(persons)), sorted(set(emails))
        parsed = [(value, parse_name(value)) for value in persons]
        for value, mention in parsed:
            if mention is not None and mention.first and mention.last and not mention.initial:
                self.person(value)
        for email in emails:
            self.local_part(email.rsplit("@", 1)[0], create=True)
        for value, mention in parsed:  # a title marks a lone token as a surname: the surer reading first
            if mention is not None and mention.first is None:
                self.person(value)
        for value, _ in parsed:
            self.person(value)

    def person(self, value: str) -> tuple[Identity, NameMention | None]:
        """The identity of a PERSON mention (created if no existing one fits)."""
        if value not in self._persons:
            normalized = normalize_value(S.PERSON, value)
            canonical = self._by_normalized.get(normalized)
            if canonical is None:
                resolved = self._resolve_person(value)
                self._by_normalized[normalized] = resolved
            else:
                resolved = canonical[0], _same_roles(parse_name(value), canonical[1])
            self._persons[value] = resolved
        return self._persons[value]

    def _resolve_person(self, value: str) -> tuple[Identity, NameMention | None]:
        mention = parse_name(value)
        if mention is None:  # not name-shaped: one identity per normalized value, never matched
            raw_key = "raw:" + normalize_value(S.PERSON, value)
            if raw_key not in self._raw:
                self._raw[raw_key] = self._new(None, None, None, raw_key)
            return self._raw[raw_key], None
        first, last = mention.first_key, mention.last_key
        if first and last and not mention.initial:
            return self._get_or_new(first, last, mention.gender), mention
        if first and last:  # "D. Whitfield"
            found = self._unique(lambda i: i.last == last and (i.first or "").startswith(first))
            return found or self._get_or_new(None, last, mention.gender), mention
        if first:  # single bare token: a first name, else a surname
            found = self._unique(lambda i: i.first == first)
            if found is None and first not in _first_name_genders():
                found = self._unique(lambda i: i.last == first)
                if found is not None:
                    return self._note(found, mention.gender), replace(mention, first=None, last=mention.first)
            return self._note(found, mention.gender) or self._get_or_new(first, None, mention.gender), mention
        found = self._unique(lambda i: i.last == last)
        return self._note(found, mention.gender) or self._get_or_new(None, last, mention.gender), mention

    def local_part(self, local: str, create: bool = False) -> tuple[Identity, LocalPattern] | None:
        """The identity behind an email local part or username, with the pattern to rebuild it."""
        key = f"{int(create)}:{local.casefold()}"
        if key not in self._locals:
            self._locals[key] = self._resolve_local(local, create)
        return self._locals[key]

    def _resolve_local(self, local: str, create: bool) -> tuple[Identity, LocalPattern] | None:
        core = local.split("+", 1)[0]
        match = re.fullmatch(r"([A-Za-z]+)(?:([._-])([A-Za-z]+))?(\d*)", core)
        if not match:
            return None
        a, sep, b, digits = match.group(1).casefold(), match.group(2) or "", match.group(3), match.group(4)
        upper = core.isupper()
        if b is not None:
            b = b.casefold()
            if len(a) == 1:
                found = self._unique(lambda i: i.last == b and (i.first or "").startswith(a))
                found = found or (self._get_or_new(None, b, None) if create else None)
                return (found, LocalPattern("initial_last", sep, len(digits), upper)) if found else None
            if (a, b) not in self._exact and (b, a) in self._exact:
                return self._exact[(b, a)], LocalPattern("last_first", sep, len(digits), upper)
            found = self._exact.get((a, b)) or (self._get_or_new(a, b, None) if create else None)
            return (found, LocalPattern("first_last", sep, len(digits), upper)) if found else None
        tests: list[tuple[str, Callable[[Identity], bool]]] = [
            ("first", lambda i: i.first == a),
            ("last", lambda i: i.last == a),
            ("flast", lambda i: i.full and (i.first or "")[:1] + (i.last or "") == a),
            ("firstlast", lambda i: i.full and (i.first or "") + (i.last or "") == a),
            ("firstl", lambda i: i.full and (i.first or "") + (i.last or "")[:1] == a),
        ]
        for kind, test in tests:
            found = self._unique(test)
            if found is not None:
                return found, LocalPattern(kind, "", len(digits), upper)
        return None

    def _unique(self, test: Callable[[Identity], bool]) -> Identity | None:
        """The one identity passing ``test`` (full identities first); None if none or ambiguous."""
        for pool in ([i for i in self.identities if i.full], self.identities):
            hits = [i for i in pool if test(i)]
            if len(hits) == 1:
                return hits[0]
            if hits:
                return None
        return None

    def _note(self, identity: Identity | None, gender: str | None) -> Identity | None:
        if identity is not None and identity.gender is None and identity.names is None:
            identity.gender = gender
        return identity

    def _get_or_new(self, first: str | None, last: str | None, gender: str | None) -> Identity:
        found = self._exact.get((first, last))
        return self._note(found, gender) or self._new(first, last, gender)

    def _new(self, first: str | None, last: str | None, gender: str | None, key: str = "") -> Identity:
        identity = Identity(len(self.identities) + 1, first, last, gender)
        self.identities.append(identity)
        if key:
            identity.key = key
        else:
            self._exact[(first, last)] = identity
        return identity


def _match_case(template: str, word: str) -> str:
    """Give ``word`` the letter case style of ``template`` (UPPER, lower, or as drawn)."""
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and all(c.islower() for c in letters):
        return word.lower()
    return word


def _name_token(original: str, drawn: str) -> str:
    """``drawn`` shaped like ``original``: an initial (with its dot) stays an initial; case kept."""
    if len(original.rstrip(".")) == 1:
        drawn = drawn[0] + ("." if original.endswith(".") else "")
    return _match_case(original, drawn)


def render_name(mention: NameMention, first: str, last: str, middles: Sequence[str]) -> str:
    """Rebuild a mention with surrogate names, keeping title, order, initials, case and suffixes."""
    out_first = _name_token(mention.first, first) if mention.first is not None else None
    out_middle = [_name_token(orig, drawn) for orig, drawn in zip(mention.middle, middles, strict=True)]
    out_last = _match_case(mention.last, last) if mention.last is not None else None
    if mention.comma:
        core = f"{out_last}, {' '.join(x for x in (out_first, *out_middle) if x)}"
    else:
        core = " ".join(x for x in (out_first, *out_middle, out_last) if x)
    return f"{mention.title}{core}{mention.suffix}{mention.possessive}"


# --------------------------------------------------------------------------------------------
# Format-preserving generators (pure functions of the value and a seeded RNG)

_HEX = "0123456789abcdef"


def _shape(text: str, rng: random.Random, hex_only: bool = False) -> str:
    """Replace each letter/digit by a random one of the same class; everything else stays.

    Any letter (not only ASCII) is replaced, so no original character of the body survives.
    """
    out = []
    for char in text:
        if char.isalpha():
            pool = _HEX[10:] if hex_only else "abcdefghijklmnopqrstuvwxyz"
            drawn = rng.choice(pool)
            out.append(drawn.upper() if char.isupper() else drawn)
        elif char.isalnum():
            out.append(str(rng.randrange(10)))
        else:
            out.append(char)
    return "".join(out)


def _lay_digits(template: str, digits: str) -> str:
    """Write ``digits`` over the digit positions of ``template`` (separators kept)."""
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in template)


def phone_surrogate(value: str, rng: random.Random) -> str | None:
    """Fictional 555-01xx number in the original layout (+country prefix and separators kept)."""
    match = re.match(r"^\s*(\+\d{1,3})(?=[\s.\-(])", value)
    head = match.group(0) if match else ""
    rest = value[len(head) :]
    count = sum(c.isdigit() for c in rest)
    if count == 0:
        return None
    keep_one = count == 11 and not head and rest.lstrip(" (").startswith("1")
    if keep_one:
        count -= 1
    if count >= 7:
        area = "".join(str(rng.randrange(10)) for _ in range(count - 7))
        area = (str(rng.randrange(2, 10)) + area[1:]) if area else ""
        digits = area + "55501" + f"{rng.randrange(100):02d}"
    else:
        digits = "".join(str(rng.randrange(10)) for _ in range(count))
    return head + _lay_digits(rest, ("1" if keep_one else "") + digits)


def id_surrogate(value: str, rng: random.Random) -> str | None:
    """Same length, prefix (leading letters + separators) and character classes; hex stays hex."""
    match = re.match(r"^(?:[A-Za-z]+[-_:#/.])+|^[A-Z]{1,4}(?=\d)", value)
    prefix = match.group(0) if match else ""
    body = value[len(prefix) :]
    if not any(c.isalnum() for c in body):
        return None
    hex_only = bool(re.fullmatch(r"[0-9a-f\W_]+|[0-9A-F\W_]+", body)) and any(c.isdigit() for c in body)
    return prefix + _shape(body, rng, hex_only)


def ssn_surrogate(value: str, rng: random.Random) -> str | None:
    """An SSN in the never-issued 900-999 area, in the original format."""
    if sum(c.isdigit() for c in value) != 9:
        return id_surrogate(value, rng)
    digits = f"{rng.randrange(900, 1000)}{rng.randrange(1, 100):02d}{rng.randrange(1, 10000):04d}"
    return _lay_digits(value, digits)


def iban_surrogate(value: str, rng: random.Random) -> str | None:
    """Same country code, length and grouping; random BBAN of the same classes, valid check digits."""
    compact = re.sub(r"[^A-Za-z0-9]", "", value)
    if len(compact) < 5 or not compact[:2].isalpha():
        return id_surrogate(value, rng)
    country, bban = compact[:2].upper(), _shape(compact[4:], rng)
    numeric = "".join(str(int(c, 36)) for c in (bban + country).upper()) + "00"
    check = f"{98 - int(numeric) % 97:02d}"
    new = iter(compact[:2] + check + bban)
    return "".join(next(new) if c.isascii() and c.isalnum() else c for c in value)


def ip_surrogate(value: str, rng: random.Random) -> str | None:
    """An address from the documentation ranges of the same family; port / prefix suffix kept."""
    text = value.strip()
    v4 = re.fullmatch(r"(\d{1,3}(?:\.\d{1,3}){3})((?::\d+)?(?:/\d{1,2})?)", text)
    if v4:
        try:
            ipaddress.IPv4Address(v4.group(1))
        except ValueError:
            return None
        return f"{rng.choice(DOC_V4_NETS)}.{rng.randrange(1, 255)}{v4.group(2)}"
    v6 = re.fullmatch(r"\[?([0-9A-Fa-f:.]+?)(\]:\d+|/\d{1,3})?\]?", text)
    if v6:
        try:
            ipaddress.IPv6Address(v6.group(1))
        except ValueError:
            return None
        addr = ipaddress.IPv6Address((0x20010DB8 << 96) | rng.getrandbits(64) | 1).compressed
        suffix = v6.group(2) or ""
        return f"[{addr}{suffix}" if suffix.startswith("]") else addr + suffix
    return None


def mask_keep_last(value: str, keep_last: int) -> str:
    """Mask every letter/digit except the last ``keep_last`` ones; separators stay."""
    total = sum(c.isalnum() for c in value)
    out, seen = [], 0
    for char in value:
        if char.isalnum():
            seen += 1
            out.append(char if seen > total - keep_last else MASK_CHAR)
        else:
            out.append(char)
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Nationalities, religious and political groups (NRP): another group of the same kind

# One group per token, its forms joined by "|".  "Italian/s" is a noun that doubles as an adjective, with
# its plural ("/s" and "/es" append, "Tory/Tories" spells it out); a bare word is invariant: an adjective
# that is also the collective noun ("Chinese", "the French").  "_" stands for a space.  "~" marks a form
# that is recognized in originals but never drawn: nouns that are no adjectives ("Pole", "Jew"), adjectives
# of religions and parties ("Jewish", "Democratic"), ethnic / regional groups, rare or loaded words, and
# words that read as something else in lower case ("polish").  Drawn forms are common, neutral words.
# Recognition covers at least every word of the NRP lexicon in curation/detectors/nrp.py (a test checks it).
_NRP_GROUPS = {
    "nationality": """
        Afghan/s Albanian/s Algerian/s American/s Andorran/s Angolan/s Argentine/s|~Argentinian/s Armenian/s
        Australian/s Austrian/s Azerbaijani/s|~Azeri/s Bahamian/s Bahraini/s Bangladeshi/s Barbadian/s
        Belarusian/s Belgian/s Belizean/s Bolivian/s Bosnian/s ~Botswanan/s Brazilian/s ~Bruneian/s Bulgarian/s
        ~Burkinabe Burundian/s Cambodian/s Cameroonian/s Canadian/s ~Cape_Verdean/s Chadian/s Chilean/s Colombian/s
        ~Comorian/s Costa_Rican/s Croatian/s Cuban/s Cypriot/s Czech/s ~Djiboutian/s Dominican/s
        Ecuadorian/s|~Ecuadorean/s Egyptian/s Emirati/s ~Equatoguinean/s Eritrean/s Estonian/s Ethiopian/s
        Fijian/s Filipino/s|~Filipina/s Gambian/s Georgian/s German/s Ghanaian/s Greek/s Grenadian/s
        Guatemalan/s Guinean/s Haitian/s Honduran/s Hungarian/s Indian/s Indonesian/s Iranian/s|~Persian/s
        Iraqi/s Israeli/s Italian/s Ivorian/s Jamaican/s Jordanian/s Kazakh/s|~Kazakhstani/s Kenyan/s
        ~Kiribati Korean/s Kosovar/s Kuwaiti/s ~Kyrgyz Laotian/s|~Lao Latvian/s Liberian/s Libyan/s
        Lithuanian/s Macedonian/s Malawian/s Malaysian/s Maldivian/s Malian/s Mauritanian/s Mauritian/s
        Mexican/s ~Micronesian/s Moldovan/s ~Monegasque/s Mongolian/s Montenegrin/s Moroccan/s Mozambican/s
        Namibian/s ~Nauruan/s Nepali/s|Nepalese Nicaraguan/s Nigerian/s ~Nigerien/s Norwegian/s Omani/s
        Pakistani/s ~Palauan/s Palestinian/s Panamanian/s Paraguayan/s Peruvian/s Qatari/s Romanian/s
        Russian/s Rwandan/s Salvadoran/s Samoan/s Saudi/s Serbian/s|~Serb/s Singaporean/s Slovak/s|~Slovakian/s
        Slovenian/s|~Slovene/s Somali/s South_African/s Sri_Lankan/s ~Swazi/s Syrian/s Tajik/s Tanzanian/s
        Thai/s Tongan/s Trinidadian/s Tunisian/s ~Turkmen/s ~Tuvaluan/s Ugandan/s Ukrainian/s Uruguayan/s
        Uzbek/s ~Vanuatuan/s Venezuelan/s Yemeni/s Zambian/s Zimbabwean/s ~Antiguan/s ~Marshallese ~Malagasy
        British|~Briton/s|~Brit/s Chinese Danish|~Dane/s Dutch|~Dutchman/Dutchmen|~Dutchwoman/Dutchwomen
        English|~Englishman/Englishmen|~Englishwoman/Englishwomen Finnish|~Finn/s
        French|~Frenchman/Frenchmen|~Frenchwoman/Frenchwomen Irish|~Irishman/Irishmen|~Irishwoman/Irishwomen
        Japanese Lebanese Maltese ~Polish|~Pole/s Portuguese Scottish|~Scot/s Spanish|~Spaniard/s
        Swedish|~Swede/s Swiss Turkish|~Turk/s Vietnamese Welsh|~Welshman/Welshmen Icelandic|~Icelander/s
        Luxembourgish|~Luxembourger/s ~Liechtensteiner/s Taiwanese Sudanese Senegalese Congolese Burmese
        Bhutanese Guyanese ~Gabonese ~Togolese ~Beninese ~Surinamese ~Seychellois
        ~African/s ~Asian/s ~European/s ~Latino/s|~Latina/s|~Latinx ~Hispanic/s ~Arab/s|~Arabian/s
        ~Caribbean/s ~Scandinavian/s ~Balkan/s ~Kurdish|~Kurd/s ~Basque/s ~Catalan/s ~Flemish ~Walloon/s
        ~Bavarian/s ~Sicilian/s ~Tibetan/s ~Uyghur/s ~Maori/s ~Aboriginal/s ~Inuit ~Chechen/s ~Dagestani/s
        ~Tatar/s ~Bashkir/s ~Berber/s ~Pashtun/s ~Punjabi/s ~Bengali/s ~Tamil/s ~Gujarati/s
    """,
    "religion": """
        Christian/s Catholic/s Protestant/s Muslim/s|~Islamic|~Moslem/s Hindu/s Buddhist/s Sikh/s Jain/s
        Taoist/s Mormon/s Lutheran/s Baptist/s Methodist/s Anglican/s Presbyterian/s Quaker/s Mennonite/s
        Pentecostal/s Evangelical/s Zoroastrian/s Sunni/s Shia/s|~Shiite/s ~Rastafarian/s ~Jewish|~Jew/s
        ~Amish ~Orthodox ~Shinto ~Atheist/s ~Agnostic/s
    """,
    "politics": """
        Democrat/s|~Democratic Republican/s Conservative/s Liberal/s Socialist/s Communist/s Libertarian/s
        Progressive/s Centrist/s Tory/Tories Marxist/s Social_Democrat/s Populist/s Federalist/s Monarchist/s
        ~Labour ~Nazi/s ~Fascist/s
    """,
}
_NRP_FALLBACK_KIND = "nationality"  # most NRP mentions name a nationality
_NRP_RELAX_AFTER = 8  # draws after which the a/an sound of the original is no longer preserved


@dataclass(frozen=True, slots=True)
class _NrpGroup:
    """One nationality / religious group / political group: what may be drawn from it."""

    kind: str
    key: str
    singular: str | None = None  # drawn noun-and-adjective form ("Italian"); None if not drawn
    plural: str | None = None
    invariant: str | None = None  # drawn invariant form ("Chinese")


def _nrp_forms(token: str) -> Iterator[tuple[str, str, bool]]:
    """(form, form class, drawn) for each form of one group token."""
    for part in token.split("|"):
        drawn = not part.startswith("~")
        word = part.lstrip("~").replace("_", " ")
        if "/" not in word:
            yield word, "invariant", drawn
            continue
        singular, plural = word.split("/")
        plural = singular + plural if plural in ("s", "es") else plural
        yield singular, "singular", drawn
        yield plural, "plural", drawn


@cache
def _nrp_lexicon() -> tuple[dict[str, tuple[_NrpGroup, str]], dict[str, list[_NrpGroup]]]:
    """Casefolded form -> (group, form class), and kind -> groups in list order."""
    forms: dict[str, tuple[_NrpGroup, str]] = {}
    groups: dict[str, list[_NrpGroup]] = {}
    for kind, text in _NRP_GROUPS.items():
        for token in text.split():
            parsed = list(_nrp_forms(token))
            drawn = {cls: form for form, cls, ok in reversed(parsed) if ok}
            key = f"{kind}:{parsed[0][0].casefold()}"
            group = _NrpGroup(kind, key, drawn.get("singular"), drawn.get("plural"), drawn.get("invariant"))
            groups.setdefault(kind, []).append(group)
            for form, cls, _ in parsed:
                forms.setdefault(form.casefold(), (group, cls))
    return forms, groups


def _nrp_lookup(word: str) -> tuple[_NrpGroup, str] | None:
    """The group and form class of one form; an unlisted plural of a listed form counts too."""
    forms = _nrp_lexicon()[0]
    folded = " ".join(word.casefold().replace("-", " ").split())
    if folded in forms:
        return forms[folded]
    for suffix in ("es", "s"):
        base = folded.removesuffix(suffix)
        if base != folded and base in forms:
            return forms[base][0], "plural"
    return None


def nrp_reading(value: str) -> tuple[str, str, str | None, frozenset[str]]:
    """(kind, form class, group key, keys of every group named) of an NRP original.

    The whole value is looked up first, then its words (the last recognized one, the head in English,
    decides: "Jewish-American" reads as a nationality).  Unknown values read as a nationality, or as a
    political group when they end in -ist(s); plural when they end in a single s.  The group key is set
    only when the whole value is one listed form.
    """
    whole = _nrp_lookup(value)
    if whole is not None:
        group, cls = whole
        return group.kind, cls, group.key, frozenset({group.key})
    hits = [hit for word in re.findall(r"[^\W\d_]+", value) if (hit := _nrp_lookup(word)) is not None]
    named = frozenset(group.key for group, _ in hits)
    if hits:
        group, cls = hits[-1]
        return group.kind, cls, None, named
    folded = value.strip().casefold()
    kind = "politics" if re.search(r"ists?$", folded) else _NRP_FALLBACK_KIND
    cls = "plural" if re.search(r"[^s]s$", folded) and len(folded) > 3 else "singular"
    return kind, cls, None, named


def _takes_an(word: str) -> bool:
    """Whether 'an' goes before ``word``, by its spelling ("an Italian", "a European", "a Ugandan")."""
    return bool(re.match(r"(?!eu|uk|u[a-z][aeiou]|one)[aeiou]", word.strip().casefold()))


def nrp_surrogate(
    value: str, rng: random.Random, allowed: Callable[[str], bool] | None = None, keep_sound: bool = True
) -> str | None:
    """Another group of the same kind in the same form: "Italians" -> "Norwegians", "catholic" -> "buddhist".

    Nationalities give nationalities, religious groups religious groups, political groups political
    groups; plural stays plural, an invariant form ("Chinese") gets an invariant one where the kind has
    them (else the singular), and the letter case of the original is kept.  The groups the original
    names are never drawn, nor any candidate ``allowed`` rejects.  With ``keep_sound`` candidates that
    take the same article (a/an) are preferred.  The rng shuffles the groups and the first fitting one
    wins, so one rng gives every form of a group the same other group ("Italian" and "Italians" ->
    "Egyptian" and "Egyptians") unless ``allowed`` rejects just one of its forms.  None when no group
    is left.
    """
    kind, cls, _, named = nrp_reading(value)
    groups = [g for g in _nrp_lexicon()[1][kind] if g.key not in named]
    rng.shuffle(groups)
    for tier in [cls] + (["singular"] if cls == "invariant" else []):
        pool = [_match_case(value, word) for g in groups if (word := getattr(g, tier)) is not None]
        pool = [word for word in pool if allowed is None or allowed(word)]
        if keep_sound:
            pool = [word for word in pool if _takes_an(word) == _takes_an(value)] or pool
        if pool:
            return pool[0]
    return None


_STATES = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "IA": "Iowa",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "ME": "Maine",
    "MD": "Maryland",
    "MA": "Massachusetts",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MS": "Mississippi",
    "MO": "Missouri",
    "MT": "Montana",
    "NE": "Nebraska",
    "NV": "Nevada",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NY": "New York",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VT": "Vermont",
    "VA": "Virginia",
    "WA": "Washington",
    "WV": "West Virginia",
    "WI": "Wisconsin",
    "WY": "Wyoming",
    "DC": "District of Columbia",
}
_STATE_BY_NAME = {name.casefold(): code for code, name in _STATES.items()}
_CITY_STATE_RE = re.compile(
    r"(?:^|,)\s*(?:\d+[^,]*?\s+)?(?P<city>[A-Za-z][A-Za-z .'-]*?)\s*,\s*(?P<state>[A-Za-z][A-Za-z ]*?)\.?"
    r"(?:\s+\d{5}(?:-\d{4})?)?\s*(?:,\s*(?:USA|US|United States))?\s*$"
)


def generalize_address(value: str) -> str:
    """'[City, ST]' when a US city/state is recognizable at the end of the address, else '[ADDRESS]'."""
    match = _CITY_STATE_RE.search(value.strip())
    if match:
        state = match.group("state").strip()
        code = state.upper() if state.upper() in _STATES else _STATE_BY_NAME.get(state.casefold())
        city = match.group("city").strip()
        if code and not re.search(r"\d", city):
            return f"[{city}, {code}]"
    return "[ADDRESS]"


# --------------------------------------------------------------------------------------------
# Dates: a constant per-scope day shift, re-emitted in the original written format

_MONTHS = [m.casefold() for m in calendar.month_name[1:]]
_WEEKDAYS = [d.casefold() for d in calendar.day_name]
_MON = (
    r"\b(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WD = (
    r"(?:\b(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?"
    r"|fri|sat|sun)\.?,?\s+)?"
)
_ORD = r"(?P<ord>st|nd|rd|th)?"
_DATE_PATTERNS = [
    ("ymd", _WD + r"(?<!\d)(?P<y>\d{4})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?!\d)"),
    ("num", _WD + r"(?<!\d)(?P<a>\d{1,2})(?P<s>[-/.])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?!\d)"),
    ("mdy", _WD + _MON + r"\s+(?P<d>\d{1,2})" + _ORD + r"(?!\d)(?:,?\s+(?P<y>\d{4})(?!\d))?"),
    (
        "dmy",
        _WD + r"(?:the\s+)?(?P<d>\d{1,2})" + _ORD + r"(?:\s+of)?\s+" + _MON + r"(?:,?\s+(?P<y>\d{4})(?!\d))?",
    ),
    ("my", _MON + r",?\s+(?P<y>\d{4})(?!\d)"),
    ("y", r"(?<!\d)(?P<y>(?:19|20)\d{2})(?!\d)"),
]
_DATE_RES = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _DATE_PATTERNS]


def _month_index(text: str) -> int:
    return next(i for i, m in enumerate(_MONTHS) if m.startswith(text.casefold()[:3])) + 1


def _styled(template: str, full: str, names: Sequence[str]) -> str:
    """A month/weekday name written like the template: full or 3-letter abbreviation, same case."""
    is_full = template.rstrip(".").casefold() in names
    return _match_case(template, full if is_full else full[:3])


def _read_date(kind: str, m: re.Match[str]) -> tuple[dt.date, bool] | None:
    """The date a match denotes (placeholder year 2000 / day 15 / July 2 where absent) and day-first."""
    g = m.groupdict()
    year = int(g["y"]) if g.get("y") else 2000
    if g.get("y") and len(g["y"]) == 2:
        year += 2000 if year < 70 else 1900
    day_first = False
    try:
        if kind == "ymd":
            return dt.date(year, int(g["m"]), int(g["d"])), False
        if kind == "num":
            a, b = int(g["a"]), int(g["b"])
            day_first = g["s"] == "." or a > 12
            return (dt.date(year, b, a) if day_first else dt.date(year, a, b)), day_first
        if kind in ("mdy", "dmy"):
            return dt.date(year, _month_index(g["mon"]), int(g["d"])), False
        if kind == "my":
            return dt.date(year, _month_index(g["mon"]), 15), False
        return dt.date(year, 7, 2), False
    except ValueError:
        return None


def _write_date(kind: str, m: re.Match[str], new: dt.date, day_first: bool) -> str:
    """The matched text with each date field swapped for the shifted date's, in the same style."""
    g = m.groupdict()
    fields: dict[str, str] = {}
    numbers = [g[n] for n in ("m", "d", "a", "b") if g.get(n)]
    padded = any(n.startswith("0") for n in numbers) or (kind == "ymd" and all(len(n) == 2 for n in numbers))

    def num(value: int) -> str:
        return f"{value:02d}" if padded else str(value)

    if g.get("y"):
        fields["y"] = f"{new.year % 100:02d}" if len(g["y"]) == 2 else f"{new.year:04d}"
    if kind == "num":
        fields["a"], fields["b"] = (num(new.day), num(new.month)) if day_first else (num(new.month), num(new.day))
    if g.get("m"):
        fields["m"] = num(new.month)
    if g.get("d"):
        fields["d"] = num(new.day)
    if g.get("mon"):
        fields["mon"] = _styled(g["mon"], calendar.month_name[new.month], _MONTHS)
    if g.get("ord"):
        suffix = "th" if 10 <= new.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(new.day % 10, "th")
        fields["ord"] = _match_case(g["ord"], suffix)
    if g.get("wd"):
        fields["wd"] = _styled(g["wd"], calendar.day_name[new.weekday()], _WEEKDAYS)
    text, base = m.group(0), m.start()
    for name in sorted(fields, key=lambda n: m.start(n), reverse=True):
        a, b = m.start(name) - base, m.end(name) - base
        text = text[:a] + fields[name] + text[b:]
    return text


def _sign(days: int) -> int:
    return (days > 0) - (days < 0)


def _shift_date(kind: str, date: dt.date, days: int) -> dt.date:
    """One date moved by the scope offset, at the precision it is written with.

    A bare year moves by sign(days) * max(1, round(|days| / 365)) years and a month-year by
    sign(days) * max(1, round(|days| / 30.44)) months, so a non-zero offset always changes them
    (a day shift applied mid-year / mid-month usually would not) and all values of one precision
    in a scope still move by the same amount (their intervals are kept). Raises ValueError or
    OverflowError when the result leaves the calendar.
    """
    if kind == "y":
        return date.replace(year=date.year + _sign(days) * max(1, round(abs(days) / 365)))
    if kind == "my":
        total = date.year * 12 + date.month - 1 + _sign(days) * max(1, round(abs(days) / DAYS_PER_MONTH))
        return dt.date(total // 12, total % 12 + 1, 15)
    return date + dt.timedelta(days=days)


def shift_dates(value: str, days: int) -> str | None:
    """Shift every date written in ``value`` by ``days``; None when no (valid) date is found.

    Day-precision dates move by ``days``; bare years and month-years by whole years / months
    (see :func:`_shift_date`). With ``days != 0`` no date is ever rendered unchanged: in the
    rare case a day-precision date without a year would read the same (a shift by a whole year),
    it moves on by single days in the shift's direction until it reads differently.
    """
    matches = []
    for priority, (kind, regex) in enumerate(_DATE_RES):
        matches += [(m.start(), priority, kind, m) for m in regex.finditer(value)]
    chosen, end = [], -1
    for start, _, kind, match in sorted(matches, key=lambda t: (t[0], t[1])):
        if start >= end:
            chosen.append((kind, match))
            end = match.end()
    if not chosen:
        return None
    out, cursor = [], 0
    for kind, match in chosen:
        read = _read_date(kind, match)
        if read is None:
            return None
        try:
            new = _shift_date(kind, read[0], days)
            written = _write_date(kind, match, new, read[1])
            for _ in range(366 if days else 0):
                if written.casefold() != match.group(0).casefold():
                    break
                new += dt.timedelta(days=_sign(days))
                written = _write_date(kind, match, new, read[1])
        except (OverflowError, ValueError):
            return None
        out += [value[cursor : match.start()], written]
        cursor = match.end()
    return "".join(out) + value[cursor:]


# --------------------------------------------------------------------------------------------
# The engine


_Tags = dict[str, dict[str, int]]


@dataclass(repr=False)
class _ScopeState:
    """Everything the engine remembers about one scope key (holds normalized originals: no repr)."""

    resolver: IdentityResolver = field(default_factory=IdentityResolver)
    used: dict[str, dict[str, str]] = field(default_factory=dict)
    tags: _Tags = field(default_factory=dict)
    audit_tags: _Tags = field(default_factory=dict)
    date_offset: int | None = None

    def __repr__(self) -> str:
        return f"_ScopeState(identities={len(self.resolver.identities)})"


class SurrogateEngine:
    """Applies the redaction convention to spans with keyed, deterministic, fictional replacements.

    Two passes per scope: :meth:`prepare` with every (label, value) of the scope (so name variants
    and emails resolve to one identity), then :meth:`surrogate` / :meth:`apply` to rewrite.
    """

    def __init__(self, key: bytes, convention: Convention, key_id: str) -> None:
        if len(key) < 16:
            raise SurrogateError("HMAC key must be at least 16 bytes")
        self._key = key
        self.convention = convention
        self.key_id = key_id
        self._faker = Faker("en_US")
        self._scopes: dict[str, _ScopeState] = {}
        self._cache: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._records: dict[tuple[str, str, str], str] = {}
        # Every (scope, type, original HMAC, text) this engine wrote, spellings included: one batch's uses.
        self._uses: set[tuple[str, str, str, str, str]] = set()  # (scope, label, HMAC, text, style)
        self._original_values: set[str] = set()
        self._originals: set[str] = set()
        self._original_normalized: dict[str, set[str]] = {}
        self._original_digits: set[str] = set()
        self._original_tokens: set[str] = set()
        self._original_words: set[str] = set()

    def __repr__(self) -> str:
        return f"SurrogateEngine(key_id={self.key_id!r}, scopes={len(self._scopes)}, values={len(self._cache)})"

    # -- scopes, keys, registries ---------------------------------------------------------

    def _rule(self, label: str) -> Rule:
        return self.convention.rule_for(label)

    def scope_key(self, scope_id: ScopeLike, label: str) -> str:
        """The scope string a label's values are linked within (per the rule's scope level)."""
        level = self._rule(label).scope
        if isinstance(scope_id, Scope):
            return scope_id.key_for(level)
        if not isinstance(scope_id, str) or not scope_id:
            raise SurrogateError("scope_id must be a non-empty string or a Scope")
        return "global" if level == "global" else scope_id

    def _state(self, scope_key: str) -> _ScopeState:
        return self._scopes.setdefault(scope_key, _ScopeState())

    def _digest(self, *parts: str) -> bytes:
        return hmac.new(self._key, _frame("surrogate", *parts), hashlib.sha256).digest()

    def register_originals(self, values: Iterable[str]) -> None:
        """Remember originals of the batch so no surrogate (or surrogate name part) equals one.

        Register every original of the batch before rewriting. Afterwards, for every style but
        typed/indexed tags, masks, deletion and generalized placeholders:

        * no surrogate equals a registered original, compared casefolded with whitespace
          collapsed and under :func:`normalize_value` for the surrogate's label (so the vault
          HMAC of a surrogate is never the HMAC of an original); values are registered without
          labels, so every original is compared under the surrogate's label (stricter);
        * no PERSON / LOCATION / ORGANIZATION / NRP / USERNAME surrogate shares a whole word
          (alphabetic token of >= 3 letters, casefolded) with any registered original (again of
          any label); names are redrawn per identity, so name variants and email local parts
          still agree;
        * collisions are redrawn deterministically (an HMAC counter), so the same key, scope,
          value and registered originals give the same surrogate; a typed tag is the fallback
          when no fresh draw is found.

        Dates are the exception: a scope's date offset is redrawn (before the first date of
        the scope is rewritten, from the dates given to :meth:`prepare`) until no shifted date of
        the scope equals a registered original; once a scope's dates have been shifted the offset
        is fixed, and a later shifted date that equals another original date is kept: keeping
        intervals within the scope wins over avoiding that collision. A shifted date never equals
        its own original.
        """
        for value in values:
            text = _folded(value)
            if not text or value in self._original_values:
                continue
            self._original_values.add(value)
            self._originals.add(text)
            for label, normalized in self._original_normalized.items():
                normalized.add(normalize_value(label, value))
            digits = re.sub(r"\D", "", text)
            if len(digits) >= 6:
                self._original_digits.add(digits)
            self._original_tokens.update(t for t in re.split(r"[\W_]+", text) if len(t) >= 2)
            self._original_words.update(_words(text))

    def _normalized_originals(self, label: str) -> set[str]:
        if label not in self._original_normalized:
            self._original_normalized[label] = {normalize_value(label, v) for v in self._original_values}
        return self._original_normalized[label]

    def _equals_original(self, label: str, candidate: str) -> bool:
        """Candidate equals a registered original, plainly or under ``normalize_value(label)``."""
        return _folded(candidate) in self._originals or (
            normalize_value(label, candidate) in self._normalized_originals(label)
        )

    def _collides(self, label: str, candidate: str) -> bool:
        """Equal to an original (also by its digits, for >= 6 digits) or, for name-like labels,
        sharing a whole word with one."""
        digits = re.sub(r"\D", "", candidate)
        if self._equals_original(label, candidate) or (len(digits) >= 6 and digits in self._original_digits):
            return True
        return label in WORD_CHECKED_LABELS and bool(_words(candidate) & self._original_words)

    def date_offset_days(self, scope_id: ScopeLike) -> int:
        """The scope's constant date shift in [-180, 180] without 0 (HMAC of the scope).

        The first HMAC draw unless it had to be redrawn because a shifted date of the scope
        would have equalled a registered original (see :meth:`register_originals`).
        """
        scope_key = self.scope_key(scope_id, S.DATE_TIME)
        state = self._scopes.get(scope_key)
        if state is not None and state.date_offset is not None:
            return state.date_offset
        return self._offset_draw(scope_key, 0)

    def _offset_draw(self, scope_key: str, counter: int) -> int:
        parts = (scope_key, "DATE_SHIFT") + ((str(counter),) if counter else ())
        index = int.from_bytes(self._digest(*parts), "big") % 360
        return index - 180 if index < 180 else index - 179

    def _date_offset(self, scope_key: str, values: Sequence[str] = ()) -> int:
        """The scope's offset, fixed on first use: the first draw under which no date in
        ``values`` shifts onto a registered original (else the draw with the fewest such)."""
        state = self._state(scope_key)
        if state.date_offset is None:
            best: tuple[int, int] | None = None
            for counter in range(DATE_OFFSET_DRAWS if values else 1):
                offset = self._offset_draw(scope_key, counter)
                clashes = sum(
                    1
                    for value in values
                    if (shifted := shift_dates(value, offset)) is not None
                    and self._equals_original(S.DATE_TIME, shifted)
                )
                if best is None or clashes < best[0]:
                    best = (clashes, offset)
                if not clashes:
                    break
            assert best is not None
            state.date_offset = best[1]
        return state.date_offset

    def _shifts_dates(self, label: str) -> bool:
        style = self._rule(label).style
        return style == "date_shift" or (label == S.DATE_TIME and style == "surrogate")

    def _example_domain(self, scope_key: str, domain: str) -> str:
        host = domain.casefold().removeprefix("www.")
        return EXAMPLE_DOMAINS[self._digest(scope_key, "DOMAIN", host)[0] % len(EXAMPLE_DOMAINS)]

    # -- two-pass API ----------------------------------------------------------------------

    def prepare(self, scope_id: ScopeLike, items: Iterable[tuple[str, str]]) -> None:
        """Feed all (label, value) pairs of a scope before rewriting, so name variants link up."""
        self.prepare_many([(scope_id, items)])

    def prepare_documents(self, documents: Iterable[tuple[str, Iterable[S.Span], ScopeLike]]) -> None:
        """:meth:`prepare` for every (text, spans, scope) of a batch at once, before any is rewritten: a
        conversation's date offset is then drawn against all its dates, not only its first document's,
        and name variants link up across its documents."""
        self.prepare_many(
            (scope_id, [(span.label, span.text_of(text)) for span in self._merged(text, spans)])
            for text, spans, scope_id in documents
        )

    def prepare_many(self, scoped_items: Iterable[tuple[ScopeLike, Iterable[tuple[str, str]]]]) -> None:
        """Feed (label, value) pairs of many scopes; values are grouped by scope key before anything
        (identities, date offsets) is fixed."""
        keyed = [
            (self.scope_key(scope_id, label), label, value)
            for scope_id, items in scoped_items
            for label, value in items
        ]
        self.register_originals(value for _, _, value in keyed)
        persons: dict[str, list[str]] = {}
        emails: dict[str, list[str]] = {}
        dates: dict[str, list[str]] = {}
        for key, label, value in keyed:
            if self._shifts_dates(label):
                dates.setdefault(key, []).append(value)
            if label == S.PERSON:
                persons.setdefault(key, []).append(value)
            elif label == S.EMAIL_ADDRESS and "@" in value:
                emails.setdefault(key, []).append(value.strip())
        for key in sorted(set(persons) | set(emails)):
            self._state(key).resolver.feed(persons.get(key, ()), emails.get(key, ()))
        for key in sorted(dates):
            self._date_offset(key, sorted(set(dates[key])))
        log.debug("prepared %d values in %d scope keys", len(keyed), len(set(persons) | set(emails)))

    def surrogate(self, scope_id: ScopeLike, label: str, value: str) -> str:
        """The replacement text for one original under the convention (deterministic per scope)."""
        return self._replacement(scope_id, label, value)[0]

    def _replacement(self, scope_id: ScopeLike, label: str, value: str) -> tuple[str, str]:
        """(replacement text, style actually applied) for one original value."""
        scope_key = self.scope_key(scope_id, label)
        cache_key = (scope_key, label, value)
        if cache_key not in self._cache:
            self.register_originals([value])
            rule = self._rule(label)
            text, style = self._render(scope_key, rule, label, value)
            self._cache[cache_key] = (text, style)
            value_hmac = hmac_value(self._key, value, label)
            self._records.setdefault((scope_key, label, value_hmac), text)
            self._uses.add((scope_key, label, value_hmac, text, style))
        return self._cache[cache_key]

    def _render(self, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
        tag = f"[{label}]"
        if rule.style == "typed_tag":
            return tag, "typed_tag"
        if rule.style == "delete":
            return "", "delete"
        if rule.style == "indexed_tag":
            return self._indexed_tag(scope_key, label, value), "indexed_tag"
        if rule.style == "mask_keep_last":
            return mask_keep_last(value, rule.keep_last or 0), "mask_keep_last"
        if rule.style == "generalize":
            return self._generalize(label, value), "generalize"
        if rule.style == "date_shift" or label == S.DATE_TIME:
            shifted = shift_dates(value, self._date_offset(scope_key, [value]))
            if shifted is None or _folded(shifted) == _folded(value):
                return tag, "typed_tag"
            if normalize_value(label, shifted) == normalize_value(label, value):
                return tag, "typed_tag"
            return shifted, "date_shift"  # may equal another original date: intervals win
        try:
            text = self._surrogate_value(scope_key, label, value)
        except NoFreshSurrogate:  # measured: 2,000 generated documents drew their people from the same name lists
            return tag, "typed_tag"
        # A person's title and possessive are the original's own ("Mrs. Jones" -> "Mrs. Moses"): only the
        # drawn name can collide.
        drawn = normalize_value(label, text) if text is not None and label == S.PERSON else text
        if drawn is None or self._collides(label, drawn):  # e.g. a lone initial that drew its own letter
            return tag, "typed_tag"
        return text, "surrogate"

    def _generalize(self, label: str, value: str) -> str:
        if label in (S.STREET_ADDRESS, S.LOCATION):
            return generalize_address(value)
        if label == S.DATE_TIME:  # the year alone
            year = re.search(r"(?<!\d)(?:19|20)\d{2}(?!\d)", value)
            return year.group(0) if year else f"[{label}]"
        return f"[{label}]"

    # -- surrogate style, per label ----------------------------------------------------------

    def _surrogate_value(self, scope_key: str, label: str, value: str) -> str | None:
        norm = normalize_value(label, value)
        if label == S.PERSON:
            return self._person(scope_key, value)
        if label == S.EMAIL_ADDRESS:
            return self._email(scope_key, value, norm)
        if label == S.USERNAME:
            return self._username(scope_key, value, norm)
        if label == S.URL:
            return self._fresh(scope_key, label, norm, lambda rng, n: self._url(scope_key, value, rng, n))
        if label == S.NRP:
            return self._nrp(scope_key, value, norm)
        draw = self._drawers().get(label, lambda v, rng: id_surrogate(v, rng))
        return self._fresh(scope_key, label, norm, lambda rng, _: draw(value, rng))

    def _drawers(self) -> dict[str, Callable[[str, random.Random], str | None]]:
        """Per-label generators; TITLE uses the Faker instance seeded by _fresh."""
        fake = self._faker
        return {
            S.PHONE_NUMBER: lambda v, rng: phone_surrogate(v, rng),
            S.US_SSN: lambda v, rng: ssn_surrogate(v, rng),
            S.IBAN_CODE: lambda v, rng: iban_surrogate(v, rng),
            S.IP_ADDRESS: lambda v, rng: ip_surrogate(v, rng),
            S.CREDIT_CARD: lambda v, rng: _lay_digits(v, "".join(str(rng.randrange(10)) for _ in v)),
            S.LOCATION: lambda v, rng: _match_case(v, _city(rng)),
            S.ORGANIZATION: lambda v, rng: _match_case(v, _company(rng)),
            S.TITLE: lambda v, rng: _match_case(v, fake.job()),
        }

    def _fresh(
        self, scope_key: str, label: str, norm: str, draw: Callable[[random.Random, int], str | None]
    ) -> str | None:
        """Draw until the candidate is no original and not taken by another value of the scope.

        None (-> typed tag) when the generator gives up or a tiny surrogate space is exhausted.
        """
        used = self._state(scope_key).used.setdefault(label, {})
        for counter in range(MAX_DRAWS):
            digest = self._digest(scope_key, label, norm, str(counter))
            self._faker.seed_instance(int.from_bytes(digest[:8], "big"))
            candidate = draw(random.Random(int.from_bytes(digest, "big")), counter)
            if candidate is None:
                return None
            if self._collides(label, candidate) or used.get(candidate.casefold(), norm) != norm:
                continue
            used[candidate.casefold()] = norm
            return candidate
        log.warning("no fresh %s surrogate after %d draws; using a typed tag", label, MAX_DRAWS)
        return None

    def _nrp(self, scope_key: str, value: str, norm: str) -> str | None:
        """Another group of the same kind (:func:`nrp_surrogate`), none colliding with an original.

        Forms of one listed group ("Italian", "Italians", "ITALIAN") draw with one seed, so within a
        scope they become forms of one other group ("Norwegian", "Norwegians", "NORWEGIAN").
        """
        group = nrp_reading(value)[2]

        def allowed(candidate: str) -> bool:
            return not self._collides(S.NRP, candidate)

        def draw(rng: random.Random, counter: int) -> str | None:
            return nrp_surrogate(value, rng, allowed, keep_sound=counter < _NRP_RELAX_AFTER)

        return self._fresh(scope_key, S.NRP, f"group:{group}" if group else norm, draw)

    def _url(self, scope_key: str, value: str, rng: random.Random, counter: int) -> str | None:
        """Host -> a reserved example domain (one per original host; a Faker subdomain on collision).

        Path and query keep their shape (character classes, separators, file extension).
        """
        match = re.match(
            r"^(?P<scheme>[A-Za-z][\w+.-]*://)?(?:[^@/\s]*@)?(?P<www>www\d?\.)?(?P<host>[^/:?#\s]+)"
            r"(?P<port>:\d+)?(?P<rest>.*)$",
            value.strip(),
        )
        if not match:
            return None
        domain = self._example_domain(scope_key, match.group("host"))
        if counter:
            domain = f"{self._faker.domain_word()}.{domain}"
        rest = match.group("rest")
        ext = re.search(r"(\.[A-Za-z]{2,4})(?=$|[?#])", rest)
        shaped = _shape(rest, rng)
        if ext:
            shaped = shaped[: ext.start()] + ext.group(1) + shaped[ext.end() :]
        return f"{match.group('scheme') or ''}{match.group('www') or ''}{domain}{match.group('port') or ''}{shaped}"

    # -- people, emails, usernames -----------------------------------------------------------

    def _person(self, scope_key: str, value: str) -> str:
        identity, mention = self._state(scope_key).resolver.person(value)
        first, last = self._identity_names(scope_key, identity)
        if mention is None:
            return f"{first} {last}"
        middles = [self._middle_name(scope_key, identity, token) for token in mention.middle]
        for original, new in ((mention.first, first), (mention.last, last)):
            if original is not None and len(original.rstrip(".")) > 1:
                record_key = (scope_key, S.PERSON, hmac_value(self._key, original, S.PERSON))
                self._records.setdefault(record_key, new)
        return render_name(mention, first, last, middles)

    def _rng(self, *parts: str) -> random.Random:
        return random.Random(int.from_bytes(self._digest(*parts), "big"))

    @staticmethod
    def _given_name(rng: random.Random, gender: str | None) -> str:
        pool = name_pool()
        return rng.choice(pool.male if gender == "male" else pool.female if gender == "female" else pool.given)

    def _identity_names(self, scope_key: str, identity: Identity) -> tuple[str, str]:
        """Surrogate (first, last) of an identity: gendered, fresh, and unique within the scope."""
        if identity.names is not None:
            return identity.names
        used = self._state(scope_key).used
        firsts, lasts, fulls = (used.setdefault(k, {}) for k in ("PERSON:first", "PERSON:last", "PERSON:full"))
        me = identity.key
        for counter in range(MAX_DRAWS):
            rng = self._rng(scope_key, "PERSON:identity", identity.key, str(counter))
            first, last = self._given_name(rng, identity.gender), rng.choice(name_pool().last)
            f, l_ = first.casefold(), last.casefold()
            if f == l_ or {f, l_} & self._original_tokens or _words(f"{f} {l_}") & self._original_words:
                continue
            if fulls.get(f"{f} {l_}", me) != me:
                continue
            if counter < STRICT_NAME_DRAWS and (firsts.get(f, me) != me or lasts.get(l_, me) != me):
                continue
            firsts.setdefault(f, me)
            lasts.setdefault(l_, me)
            fulls[f"{f} {l_}"] = me
            identity.names = (first, last)
            return identity.names
        raise NoFreshSurrogate(f"no fresh PERSON surrogate after {MAX_DRAWS} draws")

    def _middle_name(self, scope_key: str, identity: Identity, token: str) -> str:
        for counter in range(MAX_DRAWS):
            rng = self._rng(scope_key, "PERSON:middle", identity.key, token.casefold(), str(counter))
            name = self._given_name(rng, identity.gender)
            if name.casefold() not in self._original_tokens and not _words(name) & self._original_words:
                return name
        raise NoFreshSurrogate(f"no fresh PERSON surrogate after {MAX_DRAWS} draws")

    def _linked_local(self, scope_key: str, local: str, create: bool) -> Callable[[random.Random, int], str]:
        """A drawer for a local part: the owner's surrogate name pattern, else a Faker user name."""
        linked = self._state(scope_key).resolver.local_part(local, create=create)
        if linked is None:
            return lambda rng, n: _match_case(local, self._faker.user_name())
        identity, pattern = linked
        first, last = self._identity_names(scope_key, identity)
        return lambda rng, n: pattern.render(first, last, rng) + (str(n) if n else "")

    def _email(self, scope_key: str, value: str, norm: str) -> str | None:
        local, at, domain = value.strip().rpartition("@")
        if not at or not local or not domain:
            return self._fresh(scope_key, S.EMAIL_ADDRESS, norm, lambda rng, n: id_surrogate(value, rng))
        new_domain = self._example_domain(scope_key, domain)
        draw_local = self._linked_local(scope_key, local, create=True)
        return self._fresh(scope_key, S.EMAIL_ADDRESS, norm, lambda rng, n: f"{draw_local(rng, n)}@{new_domain}")

    def _username(self, scope_key: str, value: str, norm: str) -> str | None:
        at = "@" if value.startswith("@") else ""
        local = value[len(at) :]
        if not local:
            return None
        draw_local = self._linked_local(scope_key, local, create=False)
        return self._fresh(scope_key, S.USERNAME, norm, lambda rng, n: at + draw_local(rng, n))

    # -- tags ----------------------------------------------------------------------------------

    def _tag_key(self, resolver: IdentityResolver, label: str, value: str) -> str:
        """What makes two values 'the same' for an indexed tag: one identity for people."""
        if label == S.PERSON:
            return resolver.person(value)[0].key
        return normalize_value(label, value)

    def _tag_number(self, resolver: IdentityResolver, tags: _Tags, label: str, value: str) -> int:
        """Index of a value among its label's values so far (first seen = 1)."""
        table = tags.setdefault(label, {})
        return table.setdefault(self._tag_key(resolver, label, value), len(table) + 1)

    def _indexed_tag(self, scope_key: str, label: str, value: str) -> str:
        state = self._state(scope_key)
        return f"[{label}_{self._tag_number(state.resolver, state.tags, label, value)}]"

    # -- rewriting whole texts -----------------------------------------------------------------

    @staticmethod
    def _merged(text: str, spans: Iterable[S.Span]) -> list[S.Span]:
        spans = list(spans)
        for span in spans:
            if span.end > len(text):
                raise SurrogateError(
                    f"span [{span.start}, {span.end}) {span.label} ends past the text ({len(text)} chars)"
                )
        return S.merge(spans)

    @staticmethod
    def _rewrite(text: str, spans: list[S.Span], render: Callable[[S.Span], tuple[str, str]]) -> RewriteResult:
        """Splice replacements in; offsets of the new text are tracked as we go (same as right-to-left)."""
        out, replacements, cursor, position = [], [], 0, 0
        for span in spans:
            out.append(text[cursor : span.start])
            position += span.start - cursor
            new, style = render(span)
            out.append(new)
            replacements.append(Replacement(span.start, span.end, position, position + len(new), span.label, style))
            position += len(new)
            cursor = span.end
        out.append(text[cursor:])
        return RewriteResult("".join(out), replacements)

    def apply(self, text: str, spans: Iterable[S.Span], scope_id: ScopeLike) -> RewriteResult:
        """Rewrite ``text`` per the convention (overlaps merged first, longest label wins)."""
        merged = self._merged(text, spans)
        self.prepare(scope_id, [(span.label, span.text_of(text)) for span in merged])
        result = self._rewrite(text, merged, lambda s: self._replacement(scope_id, s.label, s.text_of(text)))
        log.debug("rewrote %d spans", len(result.replacements))
        return result

    def audit_copy(self, text: str, spans: Iterable[S.Span], scope_id: ScopeLike | None = None) -> RewriteResult:
        """Indexed tags ([PERSON_1], [EMAIL_ADDRESS_2]) for reviewers: same value -> same index.

        Without ``scope_id`` indices are local to this document; with it they hold across calls.
        """
        merged = self._merged(text, spans)
        local = (IdentityResolver(), {}) if scope_id is None else None
        if local is not None:
            local[0].feed(*([s.text_of(text) for s in merged if s.label == lb] for lb in (S.PERSON, S.EMAIL_ADDRESS)))
        else:
            self.prepare(scope_id, [(span.label, span.text_of(text)) for span in merged])

        def render(span: S.Span) -> tuple[str, str]:
            if local is None:
                state = self._state(self.scope_key(scope_id, span.label))
                resolver, tags = state.resolver, state.audit_tags
            else:
                resolver, tags = local
            number = self._tag_number(resolver, tags, span.label, span.text_of(text))
            return f"[{span.label}_{number}]", "indexed_tag"

        return self._rewrite(text, merged, render)

    def public_id(self, batch_id: str, id_kind: str, original_id: str, prefix: str) -> str:
        """The release's id for a record or scope id (:func:`curation.vault.public_id` with this key)."""
        return public_id(self._key, batch_id, id_kind, original_id, prefix)

    def batch_records(self) -> Iterator[VaultRecord]:
        """Every replacement text this engine produced, once per spelling of an original ("Dana",
        "DANA", "Dana's" are separate rows under one HMAC): what a consistency check compares."""
        for scope_key, label, value_hmac, text, style in sorted(self._uses):
            yield VaultRecord(scope_key, label, value_hmac, text, self.key_id, style)

    def records(self) -> Iterator[VaultRecord]:
        """Vault rows for every replacement made: scope, type, keyed HMAC of the original, surrogate."""
        for (scope_key, label, value_hmac), surrogate in self._records.items():
            yield VaultRecord(scope_key, label, value_hmac, surrogate, self.key_id)
