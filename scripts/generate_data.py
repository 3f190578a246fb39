"""Generate the fake, labeled data sets shipped with ``curation``.

Writes three JSONL files (all values are FAKE, produced by Faker and seeded ``random``):

* ``curation/data/sample_corpus.jsonl``: the embedded default corpus (support chats, notes, code).
* ``curation/data/validation.jsonl``: a labeled validation set from the same generator families with a
  different sub-seed; none of its labeled values occurs anywhere in the sample corpus.
* ``curation/data/code_secrets.jsonl``: small source/config files with planted credentials and ~30% clean
  files holding high-entropy non-secrets (hard negatives).

Spans are recorded while the text is appended piece by piece, so offsets are exact by construction.
Re-running with the same ``--seed`` reproduces byte-identical files.

Usage: ``python scripts/generate_data.py [--seed N] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import re
import string
import sys
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

from faker import Faker

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curation.spans import (
    ACCOUNT_ID,
    API_KEY,
    CONNECTION_STRING,
    CREDIT_CARD,
    DATE_TIME,
    EMAIL_ADDRESS,
    IBAN_CODE,
    IP_ADDRESS,
    LOCATION,
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
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SEED = 20261130
# Faker's providers change between releases; byte-identical output is only promised for this version.
GENERATED_WITH_FAKER = "40.63.0"
DATA_DIR = ROOT / "curation" / "data"
SAMPLE_FILE = "sample_corpus.jsonl"
VALIDATION_FILE = "validation.jsonl"
CODE_SECRETS_FILE = "code_secrets.jsonl"

Slot = tuple[str, str | None]  # (value, label); label None = unlabeled text
Slots = dict[str, Slot]

PROSE_SLOT = re.compile(r"\{(\w+)\}")
CODE_SLOT = re.compile(r"\{\{(\w+)\}\}")
OPTIONAL_LINE = "?|"
V = TypeVar("V")

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
HEX = "0123456789abcdef"
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


# --------------------------------------------------------------------------------------------------
# Text builder
# --------------------------------------------------------------------------------------------------


class Doc:
    """Append-only text builder that records labeled spans at the offsets they are written to."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._len = 0
        self.spans: list[dict[str, Any]] = []

    def add(self, text: str) -> None:
        """Append unlabeled text."""
        self._parts.append(text)
        self._len += len(text)

    def ent(self, value: str, label: str | None) -> None:
        """Append ``value``; record a span over it when ``label`` is given."""
        start = self._len
        self.add(value)
        if label:
            self.spans.append({"start": start, "end": self._len, "label": label})

    def render(self, template: str, slots: Slots, pattern: re.Pattern[str] = PROSE_SLOT) -> None:
        """Append ``template`` with each placeholder replaced by its (value, label) slot."""
        pos = 0
        for match in pattern.finditer(template):
            self.add(template[pos : match.start()])
            value, label = slots[match.group(1)]
            self.ent(value, label)
            pos = match.end()
        self.add(template[pos:])

    @property
    def text(self) -> str:
        """The text built so far."""
        return "".join(self._parts)


def placeholders(template: str, pattern: re.Pattern[str] = PROSE_SLOT) -> list[str]:
    """Placeholder names used by ``template``."""
    return pattern.findall(template)


def expand_optional(rng: random.Random, template: str, keep: float = 0.65) -> str:
    """Drop each line marked with ``?|`` with probability ``1 - keep`` (marker removed otherwise)."""
    out = []
    for line in template.split("\n"):
        if line.startswith(OPTIONAL_LINE):
            if rng.random() < keep:
                out.append(line[len(OPTIONAL_LINE) :])
        else:
            out.append(line)
    return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# Generation context and value factories
# --------------------------------------------------------------------------------------------------

LOCALE_WEIGHTS = [("en_US", 62), ("en_GB", 13), ("de_DE", 10), ("fr_FR", 9), ("es_ES", 6)]
TITLES = {
    "en_US": (("Ms.", "Mrs.", "Dr."), ("Mr.", "Dr.")),
    "en_GB": (("Ms", "Mrs", "Miss"), ("Mr",)),
    "de_DE": (("Frau",), ("Herr",)),
    "fr_FR": (("Mme",), ("M.",)),
    "es_ES": (("Sra.",), ("Sr.",)),
}


@dataclass
class Ctx:
    """Seeded state of one data set: its RNG, Faker instances, date ranges and forbidden text."""

    name: str
    seed: int
    years: tuple[int, int]
    birth_years: tuple[int, int]
    forbidden: str = ""
    rng: random.Random = field(init=False)
    fakers: dict[str, Faker] = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}/{self.name}")
        self.fakers = {}
        for locale, _ in LOCALE_WEIGHTS:
            fake = Faker(locale)
            fake.seed_instance(self.rng.getrandbits(32))
            self.fakers[locale] = fake

    def fresh(self, values: Sequence[str]) -> bool:
        """True when none of ``values`` occurs in the forbidden text (another data set)."""
        return not any(v and v in self.forbidden for v in values)

    def locale(self) -> str:
        """A locale drawn with the data set's weights."""
        return self.rng.choices([loc for loc, _ in LOCALE_WEIGHTS], [w for _, w in LOCALE_WEIGHTS])[0]

    def day(self, birth: bool = False) -> date:
        """A date in the data set's year range (or birth-year range)."""
        lo, hi = self.birth_years if birth else self.years
        start = date(lo, 1, 1)
        return start + timedelta(days=self.rng.randrange((date(hi, 12, 31) - start).days + 1))


def retry(draw: Callable[[], V], ok: Callable[[V], bool], what: str, attempts: int = 400) -> V:
    """Call ``draw`` until ``ok`` accepts the result (deterministic given the RNG state)."""
    for _ in range(attempts):
        value = draw()
        if ok(value):
            return value
    raise RuntimeError(f"could not draw an acceptable {what} in {attempts} attempts")


def rand_str(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters drawn from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def ascii_slug(text: str) -> str:
    """Lower-case ASCII letters/digits only (for e-mail local parts and usernames)."""
    text = text.replace("ß", "ss").replace("ø", "o").replace("æ", "ae")
    norm = unicodedata.normalize("NFKD", text)
    return "".join(c for c in norm if c.isascii() and c.isalnum()).lower()


def fmt_date(rng: random.Random, d: date, locale: str, with_time: bool = False) -> str:
    """A date in one of several locale-appropriate layouts, optionally with a time of day."""
    m, dd, y = d.month, d.day, d.year
    us = [
        f"{MONTHS[m - 1]} {dd}, {y}",
        f"{m:02d}/{dd:02d}/{y}",
        f"{y}-{m:02d}-{dd:02d}",
        f"{MONTHS[m - 1][:3]} {dd}, {y}",
        f"{m}/{dd}/{y}",
    ]
    eu = [
        f"{dd} {MONTHS[m - 1]} {y}",
        f"{dd:02d}/{m:02d}/{y}",
        f"{y}-{m:02d}-{dd:02d}",
        f"{dd:02d}.{m:02d}.{y}",
        f"{dd} {MONTHS[m - 1][:3]} {y}",
    ]
    text = rng.choice(us if locale == "en_US" else eu)
    if with_time:
        hour, minute = rng.randrange(7, 20), rng.choice([0, 5, 15, 20, 30, 40, 45, 50])
        if locale == "en_US":
            text += f" {(hour - 1) % 12 + 1}:{minute:02d} {'AM' if hour < 12 else 'PM'}"
        else:
            text += f" {hour:02d}:{minute:02d}"
    return text


def us_phone(rng: random.Random) -> str:
    """A US phone number in one of several common layouts."""
    area = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
    if area[1:] == "11":
        area = area[0] + "12"
    exch = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
    line = f"{rng.randrange(10000):04d}"
    layouts = [
        f"({area}) {exch}-{line}",
        f"{area}-{exch}-{line}",
        f"{area}.{exch}.{line}",
        f"+1 {area} {exch} {line}",
        f"+1-{area}-{exch}-{line}",
        f"{area}{exch}{line}",
        f"{area} {exch} {line}",
        f"1 ({area}) {exch}-{line}",
    ]
    return rng.choice(layouts)


def luhn_check_digit(body: str) -> str:
    """The Luhn check digit that completes ``body``."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        digit = int(ch)
        if i % 2 == 0:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    """True when the digits of ``number`` pass the Luhn checksum."""
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, digit in enumerate(reversed(digits)):
        if i % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def credit_card(rng: random.Random) -> str:
    """A Luhn-valid card number (Visa, Mastercard, Amex or Discover layout), variously grouped."""
    brand = rng.choice(["visa", "visa", "mc", "mc", "amex", "discover"])
    prefix, length = {
        "visa": ("4", 16),
        "mc": (str(rng.randint(51, 55)), 16),
        "amex": (rng.choice(["34", "37"]), 15),
        "discover": ("6011", 16),
    }[brand]
    body = prefix + rand_str(rng, string.digits, length - len(prefix) - 1)
    number = body + luhn_check_digit(body)
    assert luhn_valid(number)
    sep = rng.choice([" ", " ", "-", ""])
    groups = (4, 6, 5) if length == 15 else (4, 4, 4, 4)
    out, pos = [], 0
    for g in groups:
        out.append(number[pos : pos + g])
        pos += g
    return sep.join(out)


def iban(fake: Faker, rng: random.Random) -> str:
    """An IBAN for Faker's locale, compact or grouped in fours."""
    raw = fake.iban()
    if rng.random() < 0.5:
        return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))
    return raw


def ipv4(rng: random.Random, private: bool = False) -> str:
    """A public (or RFC 1918 private) IPv4 address."""
    if private:
        return rng.choice(
            [
                f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                f"192.168.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
            ]
        )
    first = rng.choice([24, 31, 37, 45, 62, 68, 73, 81, 89, 94, 98, 104, 109, 142, 151, 176, 185, 203, 212])
    return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"


def ipv6(rng: random.Random) -> str:
    """An IPv6 address in the documentation prefix."""
    return "2001:db8:" + ":".join(f"{rng.randrange(65536):x}" for _ in range(6))


def sha_hex(rng: random.Random, n: int = 40) -> str:
    """``n`` random hex digits (git SHA, checksum, revision id)."""
    return rand_str(rng, HEX, n)


def rand_uuid(rng: random.Random) -> str:
    """A random version-4 UUID from the seeded RNG."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def b64(data: bytes) -> str:
    """Standard base64 of ``data``."""
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    """Unpadded URL-safe base64 of ``data``."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def aws_key_id(rng: random.Random) -> str:
    """An AWS-style access key id (AKIA + 16 base32 characters)."""
    return "AKIA" + rand_str(rng, string.ascii_uppercase + "234567", 16)


def aws_secret(rng: random.Random) -> str:
    """An AWS-style 40-character secret access key."""
    return rand_str(rng, B64, 40)


def github_token(rng: random.Random) -> str:
    """A GitHub-style classic personal access token."""
    return "ghp_" + rand_str(rng, ALNUM, 36)


def slack_token(rng: random.Random) -> str:
    """A Slack-style bot token."""
    team, bot = rand_str(rng, string.digits, 12), rand_str(rng, string.digits, 13)
    return f"xoxb-{team}-{bot}-{rand_str(rng, ALNUM, 24)}"


def generic_api_key(rng: random.Random) -> str:
    """A vendor-neutral API key in one of a few shapes."""
    style = rng.randrange(4)
    if style == 0:
        return rand_str(rng, HEX, 32)
    if style == 1:
        return "key_" + rand_str(rng, ALNUM, 32)
    if style == 2:
        return "ak-" + rand_str(rng, string.ascii_lowercase + string.digits, 28)
    return rand_str(rng, ALNUM, 40)


def jwt(rng: random.Random) -> str:
    """A syntactically valid HS256 JWT with a random signature."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {
        "sub": f"svc-{rng.randint(1000, 99999)}",
        "iat": rng.randint(1_650_000_000, 1_760_000_000),
        "scope": rng.choice(["read", "read write", "deploy", "admin"]),
    }
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(32))}"


PASSWORD_WORDS = [
    "Summer",
    "Falcon",
    "Harbor",
    "Copper",
    "Maple",
    "Winter",
    "Orbit",
    "Velvet",
    "Granite",
    "Lantern",
    "Meadow",
    "Cobalt",
    "Juniper",
    "Thunder",
    "Saffron",
    "Quartz",
    "Willow",
    "Ember",
]


def password(rng: random.Random, url_safe: bool = False) -> str:
    """A fake password; ``url_safe`` ones can sit inside a connection URI unescaped."""
    symbols = "-_." if url_safe else "!%*-_+=.@^"
    style = rng.randrange(4)
    if style == 0:
        return rng.choice(PASSWORD_WORDS) + str(rng.randint(10, 9999)) + rng.choice(symbols)
    if style == 1:
        return rand_str(rng, ALNUM + symbols, rng.randint(14, 22))
    if style == 2:
        words = rng.sample(PASSWORD_WORDS, 2)
        return f"{words[0].lower()}{rng.choice(symbols)}{words[1].lower()}{rng.randint(10, 99)}"
    return rand_str(rng, ALNUM, rng.randint(16, 24))


def private_key(rng: random.Random, indent: str = "", newline: str = "\n") -> str:
    """A short fake PEM private key block (random base64 body)."""
    kind, prefix = rng.choice(
        [
            ("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA"),
            ("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
            ("EC PRIVATE KEY", "MHcCAQEEI"),
            ("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
        ]
    )
    body = prefix + b64(rng.randbytes(rng.randint(150, 230)))
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    block = [f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"]
    return (newline + indent).join(block)


# --------------------------------------------------------------------------------------------------
# People
# --------------------------------------------------------------------------------------------------


@dataclass
class Person:
    """A fake person with every variant of their identifiers the templates may mention."""

    locale: str
    first: str
    last: str
    title: str
    email: str
    phone: str
    username: str
    address: str
    city: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    def labeled_values(self) -> list[str]:
        return [self.first, self.last, self.full, self.email, self.phone, self.username, self.address, self.city]


def address_for(fake: Faker, locale: str) -> tuple[str, str]:
    """(one-line street address, city) for ``locale``."""
    street = " ".join(fake.street_address().replace("\n", ", ").split())
    city = fake.city()
    if locale == "en_US":
        return f"{street}, {city}, {fake.state_abbr()} {fake.zipcode()}", city
    if locale == "en_GB":
        return f"{street}, {city} {fake.postcode()}", city
    return f"{street}, {fake.postcode()} {city}", city


def _draw_person(ctx: Ctx, locale: str | None) -> Person:
    rng = ctx.rng
    loc = locale or ctx.locale()
    fake = ctx.fakers[loc]
    female = rng.random() < 0.5
    first = fake.first_name_female() if female else fake.first_name_male()
    last = fake.last_name()
    title = rng.choice(TITLES[loc][0 if female else 1])
    f_slug, l_slug = ascii_slug(first), ascii_slug(last)
    local = rng.choice(
        [
            f"{f_slug}.{l_slug}",
            f"{f_slug[0]}{l_slug}",
            f"{f_slug}_{l_slug}",
            f"{f_slug}{rng.randint(1, 99)}",
            f"{f_slug}.{l_slug[0]}",
            f"{l_slug}.{f_slug}",
            f"{f_slug}{l_slug}{rng.randint(70, 99)}",
        ]
    )
    domain = fake.free_email_domain() if rng.random() < 0.7 else fake.domain_name()
    username = rng.choice(
        [
            f"{f_slug[0]}{l_slug}",
            f"{f_slug}{l_slug[:1]}{rng.randint(1, 999)}",
            fake.user_name(),
            f"{f_slug}_{l_slug}",
            f"{l_slug}{f_slug[:2]}",
        ]
    )
    phone = us_phone(rng) if loc == "en_US" else fake.phone_number()
    address, city = address_for(fake, loc)
    return Person(loc, first, last, title, f"{local}@{domain}", phone, username, address, city)


def person_slots(person: Person) -> Slots:
    """The slots every record type fills from its main person (value, label)."""
    return {
        "name": (person.full, PERSON),
        "first": (person.first, PERSON),
        "last": (person.last, PERSON),
        "title": (person.title, None),
        "email": (person.email, EMAIL_ADDRESS),
        "phone": (person.phone, PHONE_NUMBER),
        "address": (person.address, STREET_ADDRESS),
        "city": (person.city, LOCATION),
    }


def make_person(ctx: Ctx, locale: str | None = None) -> Person:
    """A person whose names/contacts are all absent from the forbidden text and long enough to be safe."""
    return retry(
        lambda: _draw_person(ctx, locale),
        lambda p: len(p.first) >= 3 and len(p.last) >= 3 and ctx.fresh(p.labeled_values()),
        "person",
    )


def fresh_value(ctx: Ctx, draw: Callable[[], str], what: str) -> str:
    """Draw a value that does not occur in the forbidden text."""
    return retry(draw, lambda v: ctx.fresh([v]), what)


def first_name(ctx: Ctx) -> str:
    """A first name (mostly en_US) absent from the forbidden text."""
    fake = ctx.fakers["en_US" if ctx.rng.random() < 0.75 else ctx.locale()]
    return fresh_value(ctx, lambda: fake.first_name(), "first name")


def full_name(ctx: Ctx) -> str:
    """A full name from a random locale, absent from the forbidden text."""
    fake = ctx.fakers[ctx.locale()]
    return fresh_value(ctx, lambda: f"{fake.first_name()} {fake.last_name()}", "full name")


def order_id(rng: random.Random) -> str:
    """An order number in one of several shop formats."""
    return rng.choice(
        [
            f"ORD-{rng.randint(10000, 99999)}-{rand_str(rng, string.ascii_uppercase, 2)}",
            f"ORD-{rng.randint(100000, 999999)}",
            f"#{rng.randint(100, 999)}-{rng.randint(1000000, 9999999)}-{rng.randint(1000000, 9999999)}",
            f"SO{rng.randint(10000000, 99999999)}",
        ]
    )


def account_id(rng: random.Random) -> str:
    """A customer account number in one of several formats."""
    return rng.choice(
        [
            f"ACC-{rng.randint(0, 9999999):07d}",
            f"CUST-{rng.randint(100000, 999999)}",
            f"AC{rng.randint(10, 99)}-{rand_str(rng, UPPER_ALNUM, 6)}",
            f"{rng.randint(10, 99)}-{rng.randint(100000, 999999)}-C",
        ]
    )


# --------------------------------------------------------------------------------------------------
# Support chats
# --------------------------------------------------------------------------------------------------

PRODUCTS = [
    "Aero X2 router",
    "Halo mesh extender",
    "Pulse smart thermostat",
    "Vista 4K streaming stick",
    "Lark wireless earbuds",
    "Terra standing desk",
    "Cinder espresso machine",
    "Atlas 27-inch monitor",
    "Orbit robot vacuum",
    "Cirrus air purifier",
    "Beacon video doorbell",
    "Quill e-reader",
]

CUSTOMER_OPEN = [
    "Hi, my name is {name}.",
    "Hello! {name} here, I'm writing about order {order}.",
    "Hey there, this is {first} ({email}).",
    "Good morning. This is {name}, account {account}.",
    "Hello, I'm contacting you on behalf of {company}; my name is {name}.",
    "Hi, it's {name}. You can reach me at {phone} if the chat drops.",
    "Hello, I hope you can help. I'm {name} and my email on file is {email}.",
    "Hi there. Order number is {order}, name on the account is {name}.",
    "Hi, I'm {name}, writing from {city}.",
    "Hello support team, {name} from {company} here.",
    "Hi. I have a problem with order {order}.",
    "Good afternoon, my account is registered under {email}.",
    "Hi, I'm {name}. I need help with a payment I made with my card {card}.",
]

AGENT_GREET = [
    "Hi {first}, thanks for reaching out. My name is {agent} and I'll be helping you today.",
    "Hello {title} {last}, this is {agent} from the support team.",
    "Thanks for contacting us, {first}! I'm {agent}.",
    "Good to hear from you, {title} {last}. {agent} here, I have your ticket open.",
    "Hi there, {agent} with customer care. I'm sorry to hear about the trouble.",
    "Hello and thanks for your patience while we worked through the queue. I'm {agent}.",
    "Hi {first}! I can definitely look into that for you.",
    "Thank you for getting in touch. You're chatting with {agent}.",
]

AGENT_VERIFY = [
    "Before I make any changes, could you confirm the phone number on the account?",
    "For security, can you please confirm the email address and the billing address we have on file?",
    "Could you share the order number? It's printed at the top of the confirmation email.",
    "I just need to verify a couple of details first: your full name and the account number.",
    "To protect your account, please confirm the email you signed up with and I'll send a one-time code.",
    "Can you confirm the date the order was placed? We have several orders under similar names.",
    "Which address should we use for this? I want to make sure nothing goes to an old location.",
    "Quick check before we continue: what's the best number to reach you on if we get disconnected?",
    "Which card did you use for the purchase? I can look the order up by card number.",
]

CUSTOMER_VERIFY = [
    "Sure, the number is {phone}.",
    "My email is {email} and the billing address is {address}.",
    "Account number {account}, and the phone on file should be {phone}.",
    "It's {order}, placed on {date}.",
    "Yes: {name}, {address}.",
    "You can use {email}. If that bounces, try calling {phone} after 5pm.",
    "The order was {order}. I think I ordered it on {date}, but it might have been a day later.",
    "Please use {address}. That's where I live now.",
    "Phone: {phone} / email: {email}",
    "My username is {username}, if that helps, and the account number is {account}.",
    "Of course. {name}, account {account}.",
    "The email is {email}; I registered back on {date}.",
    "I paid with the card {card}, if that helps you find it.",
    "It should be under {email}. The payment came from my account {iban}.",
]

AGENT_ACK = [
    "Thank you, {title} {last}. I can see the account now.",
    "Got it, {title} {last}, everything matches.",
    "Thanks {first}, that matches what I have.",
    "Perfect, I've verified the account for {name}.",
    "Thanks for confirming, {title} {last}. One moment while I check the order history.",
    "I appreciate your patience, {title} {last}.",
    "Thanks, that's all I needed to verify.",
    "Great, I found order {order} on your account.",
]

AGENT_RESUME = [
    "Hi {first}, this is {agent2} following up on your case about order {order}.",
    "Hello {title} {last}, I'm picking up this ticket from my colleague {agent}.",
    "Good morning {first}, {agent2} here with an update on your request.",
    "Hi again {first}. I've reviewed the notes {agent} left on your case.",
    "Hello {title} {last}, thanks for waiting over the weekend.",
]

CUSTOMER_FOLLOWUP = [
    "Hi again, following up on order {order}; I haven't heard anything since {date2}.",
    "It's {name} again. The problem came back this morning.",
    "Just checking in on my ticket. I'm still waiting for an update on {order}.",
    "Hello, I spoke with {agent} on {date2} about this and was told someone would call me at {phone}.",
    "Quick update from my side: I tried everything from the last message.",
    "Sorry for the slow reply, I was travelling for work.",
    "Me again. Is there any news? My account is {account}.",
    "Hi, {first} here. Replying from my other address, {email}, because the first one is full.",
]

AGENT_CLOSE = [
    "Is there anything else I can help you with today?",
    "I've added a note to the account so the next agent can see everything we tried.",
    "You'll receive a confirmation at {email} within the next hour.",
    "I'll follow up by {date2} with an update either way.",
    "Thanks for your patience, {first}. Have a great rest of your day!",
    "If the issue comes back, just reply to this thread and it will come straight to me.",
    "I've also sent a summary to {email} for your records.",
    "The courier will call {phone} before delivery to agree on a time slot.",
    "Take care, {title} {last}, and thanks again for bearing with us.",
]

AGENT_PENDING = [
    "I'm waiting on the warehouse team for this one and will update the ticket as soon as I hear back.",
    "I've escalated the case to tier 2; they usually respond within one business day.",
    "I'll keep this ticket open until we've confirmed the fix is working on your side.",
    "Let me check with my supervisor about an exception and get back to you here.",
]

CUSTOMER_CLOSE = [
    "That's all, thank you so much!",
    "Great, thanks {agent}.",
    "Perfect. I'll keep an eye on my inbox.",
    "Thanks, you've been really helpful.",
    "Okay, I'll wait for the email then.",
    "Appreciate it. Talk soon.",
    "Alright. Fingers crossed it works this time.",
]


@dataclass(frozen=True)
class Topic:
    """Topic-specific chat sentences: customer issues, agent steps, customer replies, resolutions."""

    name: str
    issue: tuple[str, ...]
    steps: tuple[str, ...]
    reply: tuple[str, ...]
    resolve: tuple[str, ...]


TOPICS = [
    Topic(
        "delivery",
        (
            ("My {product} was supposed to arrive on {date2}, but the tracking page hasn't updated in four days."),
            ("The tracking says delivered, but there's nothing at {address} and my neighbours didn't get it either."),
            "I ordered a {product} and it still shows 'label created'. Is it actually on its way?",
            "The parcel for order {order} seems to be going back and forth between two depots.",
        ),
        (
            ("The carrier says the parcel is at a regional sorting hub; delays there usually clear within 48 hours."),
            "Drivers sometimes leave parcels at a side door or with building management, worth a quick look.",
            ("The last scan shows it was weighed but not loaded, so it missed the truck and goes out on the next run."),
            "I've opened a trace with the carrier; they usually answer within two business days.",
            "Holiday volumes are high right now, so some routes are running a day or two behind schedule.",
        ),
        (
            "The tracking still says the same thing. Should I cancel the order?",
            ("The box finally arrived, but it's crushed on one corner. The {product} itself seems fine though."),
            "Can you send the replacement to my office instead? It's {address2}.",
            "I'm away from {date2} for a week, so please don't ship anything until I'm back.",
        ),
        (
            (
                "I've shipped a replacement {product} by express courier at no cost; the new tracking "
                "number will follow by email."
            ),
            (
                "Since the parcel is lost, I've issued a full refund. It can take 3-5 business days to appear, "
                "depending on your bank."
            ),
        ),
    ),
    Topic(
        "billing",
        (
            "I was charged twice for order {order}. Both charges went to my card {card}.",
            "My statement shows a charge I don't recognise from {date2}.",
            "The invoice says annual plan, but I selected monthly when I signed up.",
            "The price at checkout was lower than what I was actually charged for the {product}.",
        ),
        (
            "I see two authorisations; one is a temporary hold that drops off within five business days.",
            ("Pending charges are often still shown by the bank even after the payment processor has voided them."),
            "I've escalated this to billing; they'll reverse the duplicate payment and confirm by email.",
            ("For the refund I can send it back to the original card or by bank transfer, whichever you prefer."),
            "The promotion ended at midnight, but I'll apply the discount manually as a goodwill gesture.",
        ),
        (
            "Please refund it by bank transfer to {iban}.",
            "Can you put it back on the same card? The number is {card}.",
            "Please bill the new card instead: {card}.",
            "Bank transfer is easier for me. The account is {iban}, held in my name.",
        ),
        (
            "The duplicate charge has been reversed. You should see the credit within 3-7 business days.",
            "I've credited the difference to your account and emailed you a corrected invoice.",
        ),
    ),
    Topic(
        "connectivity",
        (
            "My {product} keeps dropping the connection every evening around 8pm.",
            ("Since the last firmware update the wifi disconnects every few minutes and the light blinks orange."),
            "I can't reach the admin page anymore. The WAN address it shows is {ip}.",
            "Video calls freeze constantly even though the speed test looks fine.",
        ),
        (
            "Let's start with a power cycle: unplug the {product} for thirty seconds, then plug it back in.",
            ("Please switch the 5 GHz channel from auto to 36 or 149; crowded channels cause most evening drops."),
            ("If you have a spare cable, connect a laptop to port 1 and run a speed test to rule out the line."),
            ("In the app, go to Settings > Advanced > Firmware and check that you're on version 3.2.7 or later."),
            "Could you tell me the public IP your device reports? It lets me check for errors on our side.",
            "Turning off band steering for a day helps us see whether older devices are causing the drops.",
        ),
        (
            "The diagnostics page lists {ip} as the WAN address, is that right?",
            "I did the power cycle twice. It helped for an hour and then the drops started again.",
            "Firmware says 3.1.9 and the update button is greyed out.",
            "Wired is rock solid, it's only the wifi that drops.",
        ),
        (
            "I've scheduled a technician visit to {address} on {date2} between 8am and noon.",
            "Your line shows signal errors on our side, so I've raised a fault with the network team.",
            ("I've pushed the firmware update remotely; the {product} will restart once in the next few minutes."),
        ),
    ),
    Topic(
        "returns",
        (
            "The {product} I received stopped working after a week. I'd like to return it.",
            "The screen on my {product} has a cluster of dead pixels in the upper left corner.",
            "I ordered the wrong size and would like to exchange it, order {order}.",
        ),
        (
            "Sorry about that. You're within the 30-day window, so a refund or a replacement is possible.",
            "I've generated a prepaid return label; the original box is best, but any sturdy box works.",
            "Once the warehouse scans the return, the refund is released automatically.",
            "Please include all accessories, otherwise the warehouse may hold the return for inspection.",
        ),
        (
            "I'd prefer the refund. The bank account is {iban}.",
            "Please collect it from {address}; I work from home on Tuesdays.",
            "Could the refund go back to my card instead? It's {card}.",
            "I no longer have the box, is that a problem?",
        ),
        (
            "Return authorization {rma} is active and the courier will pick it up on {date2}.",
            "Your refund for order {order} has been approved and will be sent within five business days.",
        ),
    ),
    Topic(
        "account",
        (
            "I can't log in. It says my account {username} is locked after too many attempts.",
            "I never received the password reset email at {email}.",
            "Someone tried to sign in to my account from {ip}; that wasn't me.",
            "I want to change the email on my account from {email} to a work address.",
        ),
        (
            "For your security, I've unlocked the account and signed out all active sessions.",
            "Please check the spam or promotions folder; reset emails sometimes land there.",
            ("I'd strongly recommend turning on two-step verification under Profile > Security once you're back in."),
            "The reset link expires after 30 minutes, so please use it soon after it arrives.",
            "Changing the sign-in email needs a confirmation click from both the old and the new address.",
        ),
        (
            "Got the email now, it was in spam. Logged in fine.",
            "The sign-in attempts came from {ip} again last night.",
            "My username should be {username}, not the email address.",
        ),
        (
            "I've flagged the sign-in attempts from {ip} for our trust and safety team.",
            "Two-step verification is now enforced on the account, and the old sessions have been revoked.",
        ),
    ),
    Topic(
        "subscription",
        (
            "I'd like to cancel my subscription before it renews on {date2}.",
            "Can I switch from the monthly plan to annual without losing my saved settings?",
            "I was promised a student discount but the renewal price is the full amount.",
        ),
        (
            "Switching to annual keeps all your data; the remaining monthly balance is credited pro rata.",
            "Cancelling keeps your access until the end of the current billing period.",
            "The student discount needs re-verification once a year; I can send you the link.",
        ),
        (
            "Use my new card for the renewal: {card}.",
            "Please cancel it then. Account {account}.",
            "Annual is fine, as long as the invoice goes to {company}.",
        ),
        (
            "Auto-renewal is off and your plan stays active until {date2}.",
            "The plan has been switched and the new invoice is on its way to {email}.",
        ),
    ),
    Topic(
        "warranty",
        (
            "My {product} stopped turning on. It's about 14 months old; is it still under warranty?",
            "The hinge on my {product} cracked without being dropped.",
            "The fan on the {product} has started making a grinding noise.",
        ),
        (
            "The warranty is two years, so you're covered. I just need the serial number from the label.",
            "We can send you a prepaid box for a mail-in repair; turnaround is usually seven to ten days.",
            "Before we book a repair, please try a reset by holding the power button for fifteen seconds.",
        ),
        (
            "The reset didn't help. The light comes on for a second and then nothing.",
            "Mail-in is fine. Send the box to {address}.",
            "Is there a repair shop near {city} instead? I'd rather drop it off.",
        ),
        (
            "Repair case {rma} is open and the box will be sent to {address} by {date2}.",
            "We'll replace the unit rather than repair it; the new {product} ships tomorrow.",
        ),
    ),
]


@dataclass
class Conversation:
    """Fixed facts of one support conversation, shared by all its records."""

    scope: str
    person: Person
    topic: Topic
    slots: Slots
    parts: int
    channel: str


def make_conversation(ctx: Ctx, scope: str, parts: int, agents: list[str], topic: Topic) -> Conversation:
    """Draw the customer, topic, agents and every slot value of one conversation."""
    rng = ctx.rng
    person = make_person(ctx)
    fake = ctx.fakers[person.locale]
    agent, agent2 = rng.sample(agents, 2)
    slots: Slots = {
        **person_slots(person),
        "username": (person.username, USERNAME),
        "agent": (agent, PERSON),
        "agent2": (agent2, PERSON),
        "product": (rng.choice(PRODUCTS), None),
        "order": (fresh_value(ctx, lambda: order_id(rng), "order id"), ACCOUNT_ID),
        "account": (fresh_value(ctx, lambda: account_id(rng), "account id"), ACCOUNT_ID),
        "rma": (fresh_value(ctx, lambda: f"RMA-{rng.randint(100000, 999999)}", "rma"), ACCOUNT_ID),
        "date": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "date2": (fmt_date(rng, ctx.day(), person.locale, with_time=rng.random() < 0.2), DATE_TIME),
        "card": (credit_card(rng), CREDIT_CARD),
        "ip": (ipv4(rng) if rng.random() < 0.85 else ipv6(rng), IP_ADDRESS),
        "address2": (fresh_value(ctx, lambda: address_for(fake, person.locale)[0], "address"), STREET_ADDRESS),
    }
    if person.locale != "en_US" or rng.random() < 0.1:
        slots["iban"] = (iban(ctx.fakers[rng.choice(["de_DE", "fr_FR", "en_GB", "es_ES"])], rng), IBAN_CODE)
    if rng.random() < 0.3:
        slots["company"] = (fresh_value(ctx, lambda: fake.company(), "company"), ORGANIZATION)
    channel = rng.choice(["web-chat", "web-chat", "email", "mobile-app", "phone-transcript"])
    return Conversation(scope, person, topic, slots, parts, channel)


class Picker:
    """Chooses templates whose placeholders are available, without repeating one inside a record."""

    def __init__(self, rng: random.Random, slots: Slots) -> None:
        self.rng = rng
        self.slots = slots
        self.used: list[str] = []

    def __call__(self, pool: Sequence[str], prefer_private: float = 0.0) -> str:
        options = [t for t in pool if t not in self.used and all(p in self.slots for p in placeholders(t))]
        if not options:
            options = [t for t in pool if all(p in self.slots for p in placeholders(t))]
        if prefer_private and self.rng.random() < prefer_private:
            private = [t for t in options if placeholders(t)]
            options = private or options
        choice = self.rng.choice(options)
        self.used.append(choice)
        return choice


Turn = tuple[str, list[str]]


def chat_turns(rng: random.Random, conv: Conversation, pick: Picker, part: int) -> list[Turn]:
    """The (speaker, sentence templates) turns of one record of a conversation."""
    topic = conv.topic
    turns: list[tuple[str, list[str]]] = []
    if part == 0:
        opener = [pick(CUSTOMER_OPEN)] + ([pick(topic.issue)] if rng.random() < 0.4 else [])
        turns.append(("customer", opener))
        turns.append(("agent", [pick(AGENT_GREET)]))
        if len(turns[0][1]) == 1:
            turns.append(("customer", [pick(topic.issue)]))
    elif rng.random() < 0.5:
        turns.append(("customer", [pick(CUSTOMER_FOLLOWUP)]))
        turns.append(("agent", [pick(AGENT_ACK)] + ([pick(topic.steps)] if rng.random() < 0.6 else [])))
    else:
        turns.append(("agent", [pick(AGENT_RESUME)] + ([pick(topic.steps)] if rng.random() < 0.5 else [])))
        turns.append(("customer", [pick(CUSTOMER_FOLLOWUP)]))
    options: list[list[tuple[str, list[str]]]] = [
        [("agent", [pick(AGENT_VERIFY)]), ("customer", [pick(CUSTOMER_VERIFY)])],
        [("agent", [pick(AGENT_ACK), pick(topic.steps)]), ("customer", [pick(topic.reply, prefer_private=0.4)])],
        [("agent", [pick(topic.steps)]), ("customer", [pick(topic.reply, prefer_private=0.4)])],
    ]
    rng.shuffle(options)
    for pair in options[: 1 if part == 0 else rng.choice([0, 0, 1])]:
        turns.extend(pair)
    if part == conv.parts - 1:
        turns.append(("agent", [pick(topic.resolve)] + ([pick(AGENT_CLOSE)] if rng.random() < 0.5 else [])))
        if rng.random() < 0.35:
            turns.append(("customer", [pick(CUSTOMER_CLOSE)]))
    elif rng.random() < 0.5:
        turns.append(("agent", [pick(AGENT_PENDING)] + ([pick(AGENT_CLOSE)] if rng.random() < 0.3 else [])))
    merged: list[tuple[str, list[str]]] = []
    for speaker, sentences in turns:
        if merged and merged[-1][0] == speaker:
            merged[-1][1].extend(sentences)
        else:
            merged.append((speaker, list(sentences)))
    return merged


def chat_record(rng: random.Random, conv: Conversation, pick: Picker, part: int) -> tuple[str, list[dict[str, Any]]]:
    """Text and spans of record ``part`` of a conversation, one ``speaker: ...`` line per turn."""
    doc = Doc()
    for i, (speaker, sentences) in enumerate(chat_turns(rng, conv, pick, part)):
        if i:
            doc.add("\n")
        doc.add(f"{speaker}: ")
        for j, template in enumerate(sentences):
            if j:
                doc.add(" ")
            doc.render(template, conv.slots)
    return doc.text, doc.spans


# --------------------------------------------------------------------------------------------------
# Notes (clinical, HR, CRM)
# --------------------------------------------------------------------------------------------------

NOTE_HEADERS = {
    "clinical": [
        "Visit note, {date}\nPatient: {name} (DOB {dob}), MRN {mrn}\nProvider: Dr. {doctor}\n",
        "Progress note for {name}, seen {date} at {org}.\n",
        "CLINIC NOTE | {org} | {date}\nPt: {name} | DOB: {dob} | MRN: {mrn}\n",
        "Telehealth follow-up with {title} {last} on {date}. Identity confirmed with DOB {dob}.\n",
        "Intake {date}: {name}, DOB {dob}, SSN {ssn}, MRN {mrn}.\n",
    ],
    "hr": [
        "HR case note, {date}\nEmployee: {name}, ID {emp}\nManager: {manager}\n",
        "People Ops record: {name} (employee {emp}), updated {date}.\n",
        "Personnel file addendum for {name}, ID {emp}. Entered {date} by {author}.\n",
        "New hire paperwork, {date}\nName: {name}\nSSN: {ssn}\nStart: {date2}\n",
        "Payroll change request for {name} ({emp}), received {date}. New account: {iban}.\n",
    ],
    "crm": [
        "Account note: {org}\nContact: {name} <{email}>\nDate: {date}\n",
        "Call log {date}: {name} ({org})\n",
        "CRM entry for {org}, primary contact {name}, last touch {date}.\n",
    ],
}

NOTE_BODY = {
    "clinical": [
        "Chief complaint: intermittent headaches for three weeks, worse in the afternoon, no visual changes.",
        ("Patient reports better sleep since cutting evening caffeine but still wakes once or twice per night."),
        "Vitals: BP 128/82, HR 74, temp 98.4 F, SpO2 98% on room air.",
        "Medication list reviewed and reconciled; no new allergies reported.",
        "Plan: continue the current dose, repeat labs in six weeks, return sooner if symptoms worsen.",
        "Home address confirmed as {address}; best callback number {phone}.",
        "Insurance verification required SSN {ssn}, confirmed verbally with the patient.",
        "Referred to Dr. {doctor2} for a cardiology consult.",
        "{title} {last} attended with a family member, who asked about follow-up scheduling.",
        "Discussed diet and exercise goals; patient agreed to walk 20 minutes daily.",
        "Follow-up appointment booked for {date2}.",
        "Emergency contact: {contact}, reachable at {phone2}.",
        "Labs from {date2}: HbA1c 6.1%, LDL 112 mg/dL, both within the expected range on current treatment.",
        "Patient lives in {city} and prefers early-morning appointments.",
        "Mild tenderness over the left lower back, no radiation, full range of motion.",
        "Advised ibuprofen with food as needed and to avoid heavy lifting for two weeks.",
        "Lungs clear to auscultation bilaterally; heart regular rate and rhythm, no murmurs.",
        "Patient portal access re-sent to {email}.",
    ],
    "hr": [
        "Employee requested a change to direct deposit; new bank details are on file.",
        "Onboarding checklist completed: laptop issued, badge activated, benefits enrolment pending.",
        "{first} reported a scheduling conflict with the Thursday on-call rotation.",
        "Background check cleared on {date2}; SSN {ssn} matched the I-9 documents.",
        "Mailing address updated to {address}.",
        "Performance review scheduled for {date2} with {manager}.",
        "Emergency contact listed as {contact}, phone {phone2}.",
        "Discussed a hybrid arrangement: three days remote, Tuesday and Thursday in the office.",
        "Payroll correction for the previous period will be issued with the next cycle.",
        "Reached {title} {last} at {phone}; {first} confirmed the start date of {date2}.",
        "Direct deposit now goes to {iban}.",
        "Requested parental leave starting {date2}; manager approved pending the return-to-work plan.",
        "Exit interview feedback: workload planning and unclear ownership of the reporting backlog.",
        "Personal email for benefits correspondence: {email}.",
    ],
    "crm": [
        "Call with {name} about renewing the enterprise plan; budget approval expected next quarter.",
        "{first} asked for a comparison of the standard and premium support tiers.",
        "Sent the pricing sheet to {email} after the call.",
        "Key decision maker is {contact}; {first} will loop them in for the next demo.",
        "The customer's office moved to {address}; update the invoice address.",
        "Direct line: {phone}.",
        "Main concern is onboarding time for the new warehouse team in {city}.",
        "Agreed to a pilot of 25 seats starting {date2}.",
        "Competitor evaluation in progress; they liked the reporting dashboard but found setup slow.",
        "Follow up in two weeks to check pilot feedback.",
        "Billing contact prefers invoices by post; PO numbers must appear on every invoice.",
        "Integration questions about SSO and SCIM provisioning forwarded to solutions engineering.",
        "{title} {last} mentioned they are consolidating three regional vendors into one contract.",
        "Invoices are paid from {iban}; remittance advice goes to {email}.",
    ],
}

NOTE_SIGNOFF = [
    "\nEntered by {author}.",
    "\n-- {author}",
    "\nSigned: {author}, {date}",
    "",
]


def note_record(ctx: Ctx, note_type: str) -> tuple[str, list[dict[str, Any]], str]:
    """One note; returns (text, spans, locale)."""
    rng = ctx.rng
    person = make_person(ctx, "en_US" if note_type != "crm" and rng.random() < 0.8 else None)
    fake = ctx.fakers[person.locale]
    slots: Slots = {
        **person_slots(person),
        "date": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "date2": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "dob": (fmt_date(rng, ctx.day(birth=True), person.locale), DATE_TIME),
        "mrn": (fresh_value(ctx, lambda: f"MRN-{rng.randint(1000000, 9999999)}", "mrn"), ACCOUNT_ID),
        "emp": (fresh_value(ctx, lambda: f"E{rng.randint(100000, 999999)}", "employee id"), ACCOUNT_ID),
        "doctor": (full_name(ctx), PERSON),
        "doctor2": (full_name(ctx), PERSON),
        "manager": (full_name(ctx), PERSON),
        "contact": (full_name(ctx), PERSON),
        "author": (full_name(ctx), PERSON),
        "phone2": (us_phone(rng) if person.locale == "en_US" else fake.phone_number(), PHONE_NUMBER),
    }
    if note_type == "clinical":
        suffixes = ["Family Clinic", "Medical Group", "Health Center", "Internal Medicine"]
        org = fresh_value(ctx, lambda: f"{fake.last_name()} {rng.choice(suffixes)}", "clinic")
    else:
        org = fresh_value(ctx, lambda: fake.company(), "company")
    slots["org"] = (org, ORGANIZATION)
    if person.locale == "en_US":
        slots["ssn"] = (fresh_value(ctx, lambda: ctx.fakers["en_US"].ssn(), "ssn"), US_SSN)
    else:
        slots["iban"] = (iban(fake, rng), IBAN_CODE)
    pick = Picker(rng, slots)
    doc = Doc()
    doc.render(pick(NOTE_HEADERS[note_type]), slots)
    pool = NOTE_BODY[note_type]
    body = [pick(pool, prefer_private=0.1) for _ in range(rng.choice([3, 3, 4, 4, 5]))]
    if note_type == "clinical" and rng.random() < 0.6:
        body.sort(key=pool.index)
    layout = rng.choice(["paragraph", "lines", "bullets"])
    for i, template in enumerate(body):
        if layout == "paragraph":
            doc.add(" " if i else "")
        else:
            doc.add("\n" if i else "")
            if layout == "bullets":
                doc.add("- ")
        doc.render(template, slots)
    doc.render(pick(NOTE_SIGNOFF), slots)
    return doc.text, doc.spans, person.locale


# --------------------------------------------------------------------------------------------------
# Code repositories
# --------------------------------------------------------------------------------------------------

SERVICES = [
    "billing",
    "ledger",
    "checkout",
    "notifier",
    "search",
    "inventory",
    "payments",
    "auth",
    "reports",
    "shipping",
    "catalog",
    "webhooks",
    "scheduler",
    "analytics",
    "gateway",
    "profiles",
]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2"]


@dataclass
class Repo:
    """A fake repository: its name and the (value, label) slots its files share."""

    name: str
    svc: str
    slots: Slots


def _draw_repo_slots(ctx: Ctx, svc: str) -> Slots:
    rng = ctx.rng
    author, author2 = make_person(ctx, "en_US" if rng.random() < 0.7 else None), make_person(ctx)
    corp = ascii_slug(ctx.fakers["en_US"].domain_word()) or "corp"
    tld = rng.choice(["internal", "corp", "lan", "int"])
    db_host = f"{rng.choice(['pg', 'db', 'postgres', 'sql'])}-{rng.randint(1, 9):02d}.{svc}.{corp}.{tld}"
    api_host = f"{rng.choice(['api', 'svc', 'core'])}.{svc}.{corp}.{tld}"
    db_user = rng.choice(
        [
            f"{svc}_app{rng.randint(1, 99)}",
            f"svc_{svc}_{rng.randint(1, 99)}",
            f"{svc}_rw{rng.randint(1, 99)}",
            author.username,
        ]
    )
    db_pass = password(rng, url_safe=True)
    db_name = f"{svc}_{rng.choice(['prod', 'main', 'db', 'core'])}"
    redis_pass = password(rng, url_safe=True)
    redis_host = f"redis-{rng.randint(1, 9)}.{corp}.{tld}"
    mongo_host = f"cluster{rng.randint(0, 9)}.{corp}.mongodb.net"
    smtp_user = f"{rng.choice(['alerts', 'noreply', 'mailer', 'ops'])}{rng.randint(1, 99)}@{corp}.com"
    return {
        "svc": (svc, None),
        "corp": (corp, None),
        "region": (rng.choice(REGIONS), None),
        "port": (str(rng.choice([3000, 5000, 8000, 8080, 8443, 9000])), None),
        "author": (author.full, PERSON),
        "author_email": (author.email, EMAIL_ADDRESS),
        "author2": (author2.full, PERSON),
        "author2_email": (author2.email, EMAIL_ADDRESS),
        "home_user": (author.username, USERNAME),
        "deploy_user": (rng.choice([author2.username, f"deploy-{svc}{rng.randint(2, 9)}"]), USERNAME),
        "db_user": (db_user, USERNAME),
        "db_pass": (db_pass, PASSWORD),
        "db_host": (db_host, URL),
        "db_name": (db_name, None),
        "db_url": (
            f"{rng.choice(['postgres', 'postgresql'])}://{db_user}:{db_pass}@{db_host}:5432/{db_name}",
            CONNECTION_STRING,
        ),
        "jdbc_url": (
            f"jdbc:postgresql://{db_host}:5432/{db_name}?user={db_user}&password={db_pass}",
            CONNECTION_STRING,
        ),
        "ado_conn": (
            f"Server={db_host};Port=5432;Database={db_name};User Id={db_user};Password={db_pass};",
            CONNECTION_STRING,
        ),
        "mysql_url": (f"mysql://{db_user}:{db_pass}@{db_host}:3306/{db_name}", CONNECTION_STRING),
        "redis_url": (f"redis://:{redis_pass}@{redis_host}:6379/0", CONNECTION_STRING),
        "mongo_url": (f"mongodb+srv://{db_user}:{db_pass}@{mongo_host}/{db_name}", CONNECTION_STRING),
        "api_host": (api_host, URL),
        "api_url": (f"https://{api_host}/v{rng.randint(1, 3)}", URL),
        "ci_url": (f"https://{rng.choice(['ci', 'jenkins', 'builds'])}.{corp}.{tld}/job/{svc}", URL),
        "internal_ip": (ipv4(rng, private=True), IP_ADDRESS),
        "internal_ip2": (ipv4(rng, private=True), IP_ADDRESS),
        "aws_key": (aws_key_id(rng), API_KEY),
        "aws_secret": (aws_secret(rng), SECRET),
        "gh_token": (github_token(rng), API_KEY),
        "slack_token": (slack_token(rng), API_KEY),
        "api_key": (generic_api_key(rng), API_KEY),
        "api_key2": (generic_api_key(rng), API_KEY),
        "jwt_secret": (rand_str(rng, ALNUM, rng.randint(32, 48)), SECRET),
        "jwt": (jwt(rng), SECRET),
        "smtp_user": (smtp_user, EMAIL_ADDRESS),
        "smtp_pass": (password(rng), PASSWORD),
        "admin_pass": (password(rng), PASSWORD),
        "pem": (private_key(rng), PRIVATE_KEY),
        "pem_json": (private_key(rng, newline="\\n"), PRIVATE_KEY),
        "pem_yaml": (private_key(rng, indent="    "), PRIVATE_KEY),
    }


def make_repo(ctx: Ctx, name: str, svc: str) -> Repo:
    """A repository whose labeled values are all absent from the forbidden text."""
    slots = retry(
        lambda: _draw_repo_slots(ctx, svc),
        lambda sl: ctx.fresh([v for v, label in sl.values() if label]),
        "repo",
    )
    return Repo(name, svc, slots)


def file_extras(rng: random.Random) -> Slots:
    """Unlabeled high-entropy values (hard negatives) available to every file template."""
    word = rng.choice(["abc", "hello world", "The quick brown fox", "curation", "fixture-001", "payload"])
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(rng.randint(40, 70))
    return {
        "sha": (sha_hex(rng), None),
        "sha_b": (sha_hex(rng), None),
        "sha_short": (sha_hex(rng, 7), None),
        "uuid1": (rand_uuid(rng), None),
        "uuid2": (rand_uuid(rng), None),
        "uuid3": (rand_uuid(rng), None),
        "sha256a": (sha_hex(rng, 64), None),
        "sha256b": (sha_hex(rng, 64), None),
        "sha256c": (sha_hex(rng, 64), None),
        "digest": (sha_hex(rng, 64), None),
        "integrity": ("sha512-" + b64(rng.randbytes(64)), None),
        "integrity2": ("sha512-" + b64(rng.randbytes(64)), None),
        "b64img": (b64(png), None),
        "b64img2": (b64(png[:16] + rng.randbytes(30)), None),
        "word": (word, None),
        "word_sha": (hashlib.sha256(word.encode()).hexdigest(), None),
        "word_md5": (hashlib.md5(word.encode()).hexdigest(), None),
        "hmac_key": ("0b" * 20, None),
        "nonce": (sha_hex(rng, 24), None),
        "batch": (str(rng.choice([100, 250, 500, 1000])), None),
        "version": (f"{rng.randint(0, 4)}.{rng.randint(0, 19)}.{rng.randint(0, 30)}", None),
        "rev": (sha_hex(rng, 12), None),
        "rev2": (sha_hex(rng, 12), None),
        "h1a": (b64(rng.randbytes(32)), None),
        "h1b": (b64(rng.randbytes(32)), None),
        "h1c": (b64(rng.randbytes(32)), None),
        "vector_in": (sha_hex(rng, 96), None),
        "vector_out": (sha_hex(rng, 128), None),
    }


@dataclass(frozen=True)
class CodeTemplate:
    """A source/config file template with ``{{slot}}`` placeholders (``?|`` marks optional lines)."""

    path: str
    language: str
    body: str
    extended: bool = False


def tpl(path: str, language: str, body: str, extended: bool = False) -> CodeTemplate:
    """Build a template, dropping the leading newline of a triple-quoted body."""
    return CodeTemplate(path, language, body.lstrip("\n"), extended)


SECRET_TEMPLATES = [
    tpl(
        "src/{svc}/settings.py",
        "python",
        '''
"""Runtime settings for the {{svc}} service.

Owner: {{author}} <{{author_email}}>
"""

import os

DEBUG = os.environ.get("DEBUG", "0") == "1"
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")

DATABASE_URL = os.environ.get(
    "DATABASE_URL",
    "{{db_url}}",
)
?|AWS_ACCESS_KEY_ID = "{{aws_key}}"
?|AWS_SECRET_ACCESS_KEY = "{{aws_secret}}"
AWS_REGION = "{{region}}"
S3_BUCKET = "{{svc}}-exports"

# Vendored from upstream at commit {{sha}}; drop once the retry fix is released.
RETRY_BACKOFF_SECONDS = (1, 2, 5, 10, 30)
MAX_BATCH_SIZE = {{batch}}


def pool_options() -> dict:
    """Options shared by the API process and the background workers."""
    return {"pool_size": 10, "max_overflow": 5, "pool_recycle": 1800, "pool_pre_ping": True}
''',
    ),
    tpl(
        "src/{svc}/notify.py",
        "python",
        '''
import json
import logging
import urllib.request

log = logging.getLogger(__name__)

SLACK_BOT_TOKEN = "{{slack_token}}"
ALERT_CHANNEL = "#{{svc}}-alerts"
?|ONCALL_EMAIL = "{{author2_email}}"


def post_alert(text: str, severity: str = "warning") -> bool:
    """Send an alert to Slack; returns False instead of raising so callers never crash."""
    body = json.dumps({"channel": ALERT_CHANNEL, "text": f"[{severity}] {text}"}).encode()
    req = urllib.request.Request(
        "https://slack.com/api/chat.postMessage",
        data=body,
        headers={"Authorization": "Bearer " + SLACK_BOT_TOKEN, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.load(resp).get("ok", False)
    except OSError as exc:
        log.warning("slack post failed: %s", exc)
        return False
''',
    ),
    tpl(
        "tools/sync_tags.py",
        "python",
        '''
"""Mirror release tags from GitHub into the internal artifact index."""

from __future__ import annotations

import requests

GITHUB_TOKEN = "{{gh_token}}"
INDEX_URL = "{{api_url}}"


def fetch_tags(repo: str) -> list[str]:
    resp = requests.get(
        f"https://api.github.com/repos/{repo}/tags",
        headers={"Authorization": f"token {GITHUB_TOKEN}"},
        timeout=10,
    )
    resp.raise_for_status()
    return [tag["name"] for tag in resp.json()]


def publish(repo: str) -> int:
    tags = fetch_tags(repo)
    for name in tags:
        requests.post(INDEX_URL + "/tags", json={"repo": repo, "tag": name}, timeout=10)
    return len(tags)
''',
    ),
    tpl(
        "src/{svc}/signing.py",
        "python",
        '''
"""Sign outgoing webhook payloads. Key rotation: ask {{author2}}."""

import hashlib
import hmac
import time

SIGNING_KEY = """{{pem}}"""
WEBHOOK_SECRET = "{{jwt_secret}}"


def sign(body: bytes, ts: int | None = None) -> str:
    ts = ts or int(time.time())
    mac = hmac.new(WEBHOOK_SECRET.encode(), f"{ts}.".encode() + body, hashlib.sha256)
    return f"t={ts},v1={mac.hexdigest()}"
''',
    ),
    tpl(
        "src/config.js",
        "javascript",
        """
'use strict';

// Service configuration. Ask {{author}} ({{author_email}}) before changing the defaults.
module.exports = {
  port: Number(process.env.PORT || {{port}}),
  jwtSecret: process.env.JWT_SECRET || '{{jwt_secret}}',
  redisUrl: process.env.REDIS_URL || '{{redis_url}}',
?|  apiKey: '{{api_key}}',
  upstream: '{{api_url}}',
  cacheTtlSeconds: 300,
  buildSha: '{{sha}}',
};
""",
    ),
    tpl(
        "src/lib/apiClient.js",
        "javascript",
        """
const axios = require('axios');

const SERVICE_TOKEN = '{{jwt}}';
const BASE_URL = '{{api_url}}';

async function getInvoices(customerId, { includeVoid = false } = {}) {
  const res = await axios.get(`${BASE_URL}/customers/${customerId}/invoices`, {
    headers: { Authorization: `Bearer ${SERVICE_TOKEN}` },
    timeout: 8000,
  });
  return res.data.items.filter((inv) => includeVoid || inv.status !== 'void');
}

module.exports = { getInvoices };
""",
    ),
    tpl(
        "docker-compose.yml",
        "yaml",
        """
services:
  db:
    image: postgres:16@sha256:{{digest}}
    environment:
      POSTGRES_USER: "{{db_user}}"
      POSTGRES_PASSWORD: "{{db_pass}}"
      POSTGRES_DB: "{{db_name}}"
    volumes:
      - pgdata:/var/lib/postgresql/data
  api:
    build: .
    ports:
      - "{{port}}:{{port}}"
    environment:
      DATABASE_URL: "{{db_url}}"
?|      AWS_ACCESS_KEY_ID: "{{aws_key}}"
?|      AWS_SECRET_ACCESS_KEY: "{{aws_secret}}"
    depends_on:
      - db
volumes:
  pgdata: {}
""",
    ),
    tpl(
        "config/settings.yaml",
        "yaml",
        """
app:
  name: {{svc}}
  workers: 4
  upstream: "{{api_url}}"
database:
  host: {{db_host}}
  port: 5432
  user: {{db_user}}
  password: "{{db_pass}}"
  pool: 12
mail:
  user: "{{smtp_user}}"
  password: "{{smtp_pass}}"
?|admins:
?|  - "{{author_email}}"
features:
  exports: true
  beta_search: false
""",
    ),
    tpl(
        ".env",
        "dotenv",
        """
# local overrides - do not commit
NODE_ENV=development
PORT={{port}}
DATABASE_URL={{db_url}}
?|REDIS_URL={{redis_url}}
?|AWS_ACCESS_KEY_ID={{aws_key}}
?|AWS_SECRET_ACCESS_KEY={{aws_secret}}
?|GITHUB_TOKEN={{gh_token}}
?|SLACK_BOT_TOKEN={{slack_token}}
SMTP_USER={{smtp_user}}
SMTP_PASSWORD={{smtp_pass}}
?|ADMIN_PASSWORD={{admin_pass}}
FEATURE_FLAGS=search,exports
""",
    ),
    tpl(
        "config/appsettings.json",
        "json",
        """
{
  "Logging": { "LogLevel": { "Default": "Information", "Microsoft": "Warning" } },
  "ConnectionStrings": {
    "Default": "{{ado_conn}}"
  },
  "Smtp": { "Host": "smtp.office365.com", "User": "{{smtp_user}}", "Password": "{{smtp_pass}}" },
?|  "Payments": { "ApiKey": "{{api_key}}", "TimeoutSeconds": 20 },
  "AllowedHosts": "*"
}
""",
    ),
    tpl(
        "config/service-account.json",
        "json",
        """
{
  "type": "service_account",
  "project_id": "{{svc}}-prod",
  "private_key_id": "{{api_key2}}",
  "private_key": "{{pem_json}}",
  "client_email": "{{smtp_user}}",
  "client_id": "1{{batch}}{{port}}"
}
""",
    ),
    tpl(
        "scripts/deploy.sh",
        "shell",
        """
#!/usr/bin/env bash
set -euo pipefail

# Deploy {{svc}} to the staging hosts. Run from the repo root.
DEPLOY_HOST="{{internal_ip}}"
DEPLOY_USER="{{deploy_user}}"
export GITHUB_TOKEN='{{gh_token}}'

npm ci && npm run build
rsync -az --delete ./dist/ "${DEPLOY_USER}@${DEPLOY_HOST}:/srv/{{svc}}/"
ssh -i /home/{{home_user}}/.ssh/id_ed25519 "${DEPLOY_USER}@${DEPLOY_HOST}" 'sudo systemctl restart {{svc}}'
?|curl -fsS -H "Authorization: Bearer {{jwt}}" "{{api_url}}/deploys" -d "sha=$(git rev-parse HEAD)"
echo "deployed $(git rev-parse --short HEAD)"
""",
    ),
    tpl(
        "scripts/backup_db.sh",
        "shell",
        """
#!/bin/sh
# Nightly logical backup; cron on {{internal_ip2}} as {{deploy_user}}.
set -e
STAMP=$(date +%Y%m%d)
export PGPASSWORD='{{db_pass}}'
pg_dump -h {{db_host}} -U {{db_user}} -Fc {{db_name}} > "/home/{{home_user}}/backups/{{db_name}}-$STAMP.dump"
find /home/{{home_user}}/backups -name '*.dump' -mtime +14 -delete
""",
    ),
    tpl(
        "src/main/java/com/{corp}/{svc}/DataSourceConfig.java",
        "java",
        """
package com.{{corp}}.{{svc}};

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Connection pool for the primary database. Contact: {{author_email}} */
@Configuration
public class DataSourceConfig {

    private static final String JDBC_URL = "{{jdbc_url}}";
    private static final String USERNAME = "{{db_user}}";
    private static final String PASSWORD = "{{db_pass}}";

    @Bean
    public DataSource dataSource() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(JDBC_URL);
        config.setUsername(USERNAME);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(12);
        config.setConnectionTimeout(5_000);
        return new HikariDataSource(config);
    }
}
""",
    ),
    tpl(
        "src/main/java/com/{corp}/{svc}/SlackNotifier.java",
        "java",
        """
package com.{{corp}}.{{svc}};

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public final class SlackNotifier {
    private static final String TOKEN = "{{slack_token}}";
    private final HttpClient client = HttpClient.newHttpClient();

    public int post(String channel, String text) throws Exception {
        String json = "{\\"channel\\":\\"" + channel + "\\",\\"text\\":\\"" + text + "\\"}";
        HttpRequest req = HttpRequest.newBuilder(URI.create("https://slack.com/api/chat.postMessage"))
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
        return client.send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
""",
    ),
    tpl("deploy/keys/{svc}_deploy.pem", "pem", "{{pem}}\n"),
    # ---- extended families (code_secrets only) ----
    tpl(
        "internal/config/config.go",
        "go",
        """
package config

import (
\t"os"
\t"time"
)

// Config holds runtime settings. Maintainer: {{author}} <{{author_email}}>.
type Config struct {
\tDatabaseURL string
\tRedisURL    string
\tAPIKey      string
\tTimeout     time.Duration
}

func Load() Config {
\treturn Config{
\t\tDatabaseURL: getenv("DATABASE_URL", "{{db_url}}"),
\t\tRedisURL:    getenv("REDIS_URL", "{{redis_url}}"),
\t\tAPIKey:      "{{api_key}}",
\t\tTimeout:     15 * time.Second,
\t}
}

func getenv(key, fallback string) string {
\tif v, ok := os.LookupEnv(key); ok {
\t\treturn v
\t}
\treturn fallback
}
""",
        extended=True,
    ),
    tpl(
        "cmd/worker/main.go",
        "go",
        """
package main

import (
\t"log"

\t"github.com/aws/aws-sdk-go-v2/credentials"
)

const (
\taccessKey = "{{aws_key}}"
\tsecretKey = "{{aws_secret}}"
\tqueueURL  = "https://sqs.{{region}}.amazonaws.com/{{batch}}/{{svc}}-jobs"
)

func main() {
\tcreds := credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")
\tw, err := newWorker(creds, queueURL)
\tif err != nil {
\t\tlog.Fatalf("worker init: %v", err)
\t}
\tw.Run()
}
""",
        extended=True,
    ),
    tpl(
        "src/api/client.ts",
        "typescript",
        """
import fetch from 'node-fetch';

// TODO({{home_user}}): move these to the secrets manager before GA.
const API_KEY = '{{api_key}}';
const BASE = '{{api_url}}';

export interface Invoice {
  id: string;
  total: number;
  status: 'open' | 'paid' | 'void';
}

export async function listInvoices(customer: string): Promise<Invoice[]> {
  const res = await fetch(`${BASE}/customers/${encodeURIComponent(customer)}/invoices`, {
    headers: { 'x-api-key': API_KEY },
  });
  if (!res.ok) throw new Error(`invoice fetch failed: ${res.status}`);
  return (await res.json()) as Invoice[];
}
""",
        extended=True,
    ),
    tpl(
        "src/db.ts",
        "typescript",
        """
import { Pool } from 'pg';

export const pool = new Pool({
  connectionString: process.env.DATABASE_URL ?? '{{db_url}}',
  max: 10,
  idleTimeoutMillis: 30_000,
});

export async function healthcheck(): Promise<boolean> {
  const { rows } = await pool.query('select 1 as ok');
  return rows[0]?.ok === 1;
}
""",
        extended=True,
    ),
    tpl(
        "config/app.ini",
        "ini",
        """
[server]
host = 0.0.0.0
port = {{port}}

[database]
host = {{db_host}}
user = {{db_user}}
password = {{db_pass}}
name = {{db_name}}

[mail]
username = {{smtp_user}}
password = {{smtp_pass}}
""",
        extended=True,
    ),
    tpl(
        ".pypirc",
        "ini",
        """
[distutils]
index-servers =
    internal

[internal]
repository = {{api_url}}
username = {{deploy_user}}
password = {{admin_pass}}
""",
        extended=True,
    ),
    tpl(
        "config/app.toml",
        "toml",
        """
[service]
name = "{{svc}}"
region = "{{region}}"

[database]
url = "{{db_url}}"
pool_size = 8

[auth]
jwt_secret = "{{jwt_secret}}"
token_ttl = "15m"
?|
?|[github]
?|token = "{{gh_token}}"
""",
        extended=True,
    ),
    tpl(
        "Dockerfile",
        "dockerfile",
        """
FROM python:3.12-slim@sha256:{{digest}}

ARG PIP_INDEX_URL
ENV PYTHONUNBUFFERED=1 \\
    APP_ENV=production \\
    DATABASE_URL={{db_url}} \\
    SENTRY_KEY={{api_key}}

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
CMD ["gunicorn", "-b", "0.0.0.0:{{port}}", "{{svc}}.wsgi:app"]
""",
        extended=True,
    ),
    tpl(
        "deploy/k8s/secret.yaml",
        "yaml",
        """
apiVersion: v1
kind: Secret
metadata:
  name: {{svc}}-secrets
  namespace: {{svc}}
type: Opaque
stringData:
  DATABASE_URL: "{{db_url}}"
  JWT_SECRET: "{{jwt_secret}}"
?|  SLACK_BOT_TOKEN: "{{slack_token}}"
  tls.key: |
    {{pem_yaml}}
""",
        extended=True,
    ),
    tpl(
        "deploy/k8s/deployment.yaml",
        "yaml",
        """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{svc}}
  labels:
    app: {{svc}}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: {{svc}}
  template:
    metadata:
      labels:
        app: {{svc}}
    spec:
      containers:
        - name: {{svc}}
          image: registry.example.com/{{svc}}@sha256:{{digest}}
          env:
            - name: REDIS_URL
              value: "{{redis_url}}"
            - name: ADMIN_PASSWORD
              value: "{{admin_pass}}"
          ports:
            - containerPort: {{port}}
""",
        extended=True,
    ),
    tpl(
        ".npmrc",
        "ini",
        """
registry=https://registry.npmjs.org/
@{{corp}}:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken={{gh_token}}
always-auth=true
""",
        extended=True,
    ),
    tpl(
        "infra/main.tf",
        "terraform",
        """
provider "aws" {
  region     = "{{region}}"
  access_key = "{{aws_key}}"
  secret_key = "{{aws_secret}}"
}

resource "aws_db_instance" "{{svc}}" {
  identifier        = "{{svc}}-prod"
  engine            = "postgres"
  instance_class    = "db.t3.medium"
  allocated_storage = 50
  username          = "{{db_user}}"
  password          = "{{db_pass}}"
  skip_final_snapshot = false
}
""",
        extended=True,
    ),
    tpl(
        "src/main/resources/application.properties",
        "properties",
        """
server.port={{port}}
spring.datasource.url={{jdbc_url}}
spring.datasource.username={{db_user}}
spring.datasource.password={{db_pass}}
spring.mail.username={{smtp_user}}
spring.mail.password={{smtp_pass}}
management.endpoints.web.exposure.include=health,info
""",
        extended=True,
    ),
    tpl(
        "dotfiles/.bash_profile",
        "shell",
        """
# {{home_user}}'s shell profile
export PATH="/home/{{home_user}}/.local/bin:/home/{{home_user}}/go/bin:$PATH"
export EDITOR=vim
export AWS_PROFILE={{svc}}-dev
export GITHUB_TOKEN={{gh_token}}
?|export OPENWEATHER_API_KEY={{api_key2}}
alias k=kubectl
alias proddb='psql "{{db_url}}"'
""",
        extended=True,
    ),
    tpl(
        "public/wp-config.php",
        "php",
        """
<?php
// ** Database settings ** //
define( 'DB_NAME', '{{db_name}}' );
define( 'DB_USER', '{{db_user}}' );
define( 'DB_PASSWORD', '{{db_pass}}' );
define( 'DB_HOST', '{{db_host}}' );
define( 'DB_CHARSET', 'utf8mb4' );

define( 'AUTH_KEY', '{{jwt_secret}}' );
define( 'WP_DEBUG', false );

$table_prefix = 'wp_';
require_once ABSPATH . 'wp-settings.php';
""",
        extended=True,
    ),
    tpl(
        "scripts/migrate.py",
        "python",
        '''
"""One-off data migration between the legacy MySQL database and Postgres."""

import sqlalchemy as sa

LEGACY = sa.create_engine("{{mysql_url}}")
TARGET = sa.create_engine("{{db_url}}")
BATCH = {{batch}}


def copy_table(name: str) -> int:
    moved = 0
    with LEGACY.connect() as src, TARGET.begin() as dst:
        for chunk in src.execution_options(stream_results=True).execute(sa.text(f"SELECT * FROM {name}")):
            dst.execute(sa.text(f"INSERT INTO {name} VALUES :row"), {"row": tuple(chunk)})
            moved += 1
    return moved
''',
        extended=True,
    ),
    tpl(
        "notebooks/explore_mongo.py",
        "python",
        """
# Scratch analysis by {{author}}; run from /home/{{home_user}}/work/{{svc}}
from pymongo import MongoClient

client = MongoClient("{{mongo_url}}")
events = client["{{db_name}}"]["events"]
print(events.count_documents({"type": "checkout"}))
""",
        extended=True,
    ),
]

CLEAN_TEMPLATES = [
    tpl(
        "CHANGELOG.md",
        "markdown",
        """
# Changelog

## {{version}}
- Retry idempotent requests on 502/503 ({{sha_short}}).
- Bump the HTTP client to pick up the connection-pool fix.
- Fix off-by-one in cursor pagination (commit {{sha}}).

## Previous
- Add structured logging and request ids.
- Revert "cache negative lookups" ({{sha_b}}); it hid stale entries.
""",
    ),
    tpl(
        "requirements.lock",
        "text",
        """
# generated by pip-compile --generate-hashes
certifi==2024.8.30 \\
    --hash=sha256:{{sha256a}}
idna==3.10 \\
    --hash=sha256:{{sha256b}}
requests==2.32.3 \\
    --hash=sha256:{{sha256c}}
""",
    ),
    tpl(
        "package-lock.json",
        "json",
        """
{
  "name": "{{svc}}",
  "version": "{{version}}",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/ms": {
      "version": "2.1.3",
      "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
      "integrity": "{{integrity}}"
    },
    "node_modules/debug": {
      "version": "4.3.7",
      "resolved": "https://registry.npmjs.org/debug/-/debug-4.3.7.tgz",
      "integrity": "{{integrity2}}"
    }
  }
}
""",
    ),
    tpl(
        "tests/fixtures/orders.json",
        "json",
        """
[
  {"id": "{{uuid1}}", "sku": "KB-104", "qty": 2, "total_cents": 5998, "status": "paid"},
  {"id": "{{uuid2}}", "sku": "MS-220", "qty": 1, "total_cents": 2499, "status": "refunded"},
  {"id": "{{uuid3}}", "sku": "HD-900", "qty": 1, "total_cents": 12900, "status": "open"}
]
""",
    ),
    tpl(
        "src/assets/icons.js",
        "javascript",
        """
// Inlined 1x1 and 16x16 PNG icons so the status page works without a CDN.
export const DOT = 'data:image/png;base64,{{b64img2}}';
export const WARN_ICON = 'data:image/png;base64,{{b64img}}';
export const iconFor = (state) => (state === 'ok' ? DOT : WARN_ICON);
""",
    ),
    tpl(
        "tests/test_digests.py",
        "python",
        """
import hashlib
import hmac
import uuid

import pytest

ORDER_IDS = [uuid.UUID("{{uuid1}}"), uuid.UUID("{{uuid2}}")]

VECTORS = {
    b"": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    b"{{word}}": "{{word_sha}}",
}
RFC4231_KEY = bytes.fromhex("{{hmac_key}}")


@pytest.mark.parametrize("payload,digest", sorted(VECTORS.items()))
def test_sha256(payload: bytes, digest: str) -> None:
    assert hashlib.sha256(payload).hexdigest() == digest


def test_md5_legacy_etag() -> None:
    assert hashlib.md5(b"{{word}}").hexdigest() == "{{word_md5}}"


def test_hmac_len() -> None:
    assert len(hmac.new(RFC4231_KEY, b"Hi There", hashlib.sha256).digest()) == 32


def test_ids_are_v4() -> None:
    assert all(u.version == 4 for u in ORDER_IDS)
""",
    ),
    tpl(
        "migrations/versions/{svc}_add_index.py",
        "python",
        '''
"""add index on events.created_at

Revision ID: {{rev}}
Revises: {{rev2}}
"""

from alembic import op

revision = "{{rev}}"
down_revision = "{{rev2}}"


def upgrade() -> None:
    op.create_index("ix_events_created_at", "events", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_events_created_at", table_name="events")
''',
    ),
    tpl(
        ".github/workflows/ci.yml",
        "yaml",
        """
name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@{{sha}}
      - uses: actions/setup-python@{{sha_b}}
        with:
          python-version: "3.12"
      - run: pip install -r requirements.lock && pytest -q
        env:
          AWS_ACCESS_KEY_ID: ${{ secrets.AWS_ACCESS_KEY_ID }}
          AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}
""",
    ),
    tpl(
        "src/{svc}/config_loader.py",
        "python",
        '''
"""Read settings from the environment only; nothing secret lives in the repo."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    database_url: str
    api_key: str
    cache_namespace: str = "{{uuid1}}"


def load() -> Settings:
    return Settings(database_url=os.environ["DATABASE_URL"], api_key=os.environ["API_KEY"])
''',
    ),
    tpl(
        "go.sum",
        "text",
        """
github.com/google/uuid v1.6.0 h1:{{h1a}}
github.com/google/uuid v1.6.0/go.mod h1:{{h1b}}
github.com/pkg/errors v0.9.1 h1:{{h1c}}
""",
        extended=True,
    ),
    tpl(
        "Dockerfile",
        "dockerfile",
        """
FROM node:20-alpine@sha256:{{digest}} AS build
WORKDIR /src
COPY package*.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM nginx:1.27-alpine@sha256:{{sha256a}}
COPY --from=build /src/dist /usr/share/nginx/html
# build {{sha}}
""",
        extended=True,
    ),
    tpl(
        "tests/data/chacha20_vectors.json",
        "json",
        """
{
  "description": "regression vectors for the streaming cipher wrapper (not real keys)",
  "cases": [
    {"input_hex": "{{vector_in}}", "expected_hex": "{{vector_out}}", "counter": 1},
    {"input_hex": "", "expected_hex": "", "counter": 0}
  ],
  "generated_from": "{{sha}}"
}
""",
        extended=True,
    ),
    tpl(
        "tests/fixtures/webhook_event.json",
        "json",
        """
{
  "id": "evt_{{nonce}}",
  "type": "invoice.paid",
  "request_id": "{{uuid1}}",
  "data": {"invoice": "{{uuid2}}", "amount": 4200, "currency": "usd"},
  "signature_fixture": "{{sha256b}}"
}
""",
        extended=True,
    ),
]


def code_record(ctx: Ctx, repo: Repo, template: CodeTemplate) -> tuple[str, list[dict[str, Any]], str]:
    """Render one file of ``repo``; returns (text, spans, path)."""
    slots = dict(repo.slots)
    slots.update(file_extras(ctx.rng))
    body = expand_optional(ctx.rng, template.body)
    doc = Doc()
    doc.render(body, slots, CODE_SLOT)
    path = template.path.format(svc=repo.svc, corp=repo.slots["corp"][0])
    return doc.text, doc.spans, path


# --------------------------------------------------------------------------------------------------
# Record checks and data-set assembly
# --------------------------------------------------------------------------------------------------


def record_problems(text: str, spans: list[dict[str, Any]], ctx: Ctx | None = None) -> list[str]:
    """Why a generated record is unusable: bad spans, unlabeled repeats of a labeled value, or leaks."""
    problems = []
    ordered = sorted(spans, key=lambda s: (int(s["start"]), int(s["end"])))
    prev_end = 0
    for span in ordered:
        start, end = int(span["start"]), int(span["end"])
        if not 0 <= start < end <= len(text):
            problems.append(f"bad bounds {span}")
        if start < prev_end:
            problems.append(f"overlap at {start}")
        prev_end = max(prev_end, end)
    covered = [False] * len(text)
    for span in ordered:
        for i in range(int(span["start"]), int(span["end"])):
            covered[i] = True
    values = sorted({text[int(s["start"]) : int(s["end"])] for s in ordered})
    for value in values:
        pattern = re.escape(value) if len(value) >= 4 else rf"\b{re.escape(value)}\b"
        for m in re.finditer(pattern, text):
            if not all(covered[m.start() : m.end()]):
                problems.append(f"unlabeled occurrence of {value!r} at {m.start()}")
                break
    if ctx is not None and not ctx.fresh(values):
        problems.append("labeled value occurs in the forbidden data set")
    return problems


def build_record(
    rid: str, kind: str, scope: str, text: str, spans: list[dict[str, Any]], metadata: dict[str, Any]
) -> dict[str, Any]:
    """Assemble a record dict with spans sorted by start."""
    ordered = sorted(spans, key=lambda s: (int(s["start"]), int(s["end"])))
    return {"id": rid, "kind": kind, "scope_id": scope, "text": text, "spans": ordered, "metadata": metadata}


def gen_conversation(ctx: Ctx, scope: str, parts: int, agents: list[str], topic: Topic) -> list[dict[str, Any]]:
    """All records of one support conversation (regenerated until every record passes the checks)."""
    for _ in range(200):
        conv = make_conversation(ctx, scope, parts, agents, topic)
        pick = Picker(ctx.rng, conv.slots)
        out = []
        for part in range(parts):
            text, spans = chat_record(ctx.rng, conv, pick, part)
            if record_problems(text, spans, ctx):
                break
            meta = {
                "channel": conv.channel,
                "locale": conv.person.locale,
                "part": part + 1,
                "parts": parts,
                "topic": conv.topic.name,
            }
            out.append(build_record("", "chat", scope, text, spans, meta))
        else:
            return out
    raise RuntimeError(f"could not generate conversation {scope}")


def gen_note(ctx: Ctx, scope: str) -> dict[str, Any]:
    """One note record (regenerated until it passes the checks)."""
    note_type = ctx.rng.choice(["clinical", "clinical", "hr", "crm"])
    for _ in range(200):
        text, spans, locale = note_record(ctx, note_type)
        if not record_problems(text, spans, ctx):
            return build_record("", "text", scope, text, spans, {"note_type": note_type, "locale": locale})
    raise RuntimeError(f"could not generate note {scope}")


def gen_repo_files(ctx: Ctx, repo: Repo, n_files: int, clean_share: float, extended: bool) -> list[dict[str, Any]]:
    """``n_files`` distinct files of ``repo``; about ``clean_share`` of them carry no private values."""
    rng = ctx.rng
    secret_pool = [t for t in SECRET_TEMPLATES if extended or not t.extended]
    clean_pool = [t for t in CLEAN_TEMPLATES if extended or not t.extended]
    n_clean = sum(1 for _ in range(n_files) if rng.random() < clean_share)
    chosen = rng.sample(clean_pool, n_clean) + rng.sample(secret_pool, n_files - n_clean)
    rng.shuffle(chosen)
    seen_paths: list[str] = []
    out = []
    for template in chosen:
        for _ in range(50):
            text, spans, path = code_record(ctx, repo, template)
            if not record_problems(text, spans, ctx):
                break
        else:
            raise RuntimeError(f"could not render {template.path} for {repo.name}")
        if path in seen_paths:
            continue
        seen_paths.append(path)
        meta = {"language": template.language, "path": path}
        out.append(build_record("", "code", repo.name, text, spans, meta))
    return out


def agent_pool(ctx: Ctx, n: int = 14) -> list[str]:
    """Distinct support-agent first names shared by a data set's conversations."""
    names: list[str] = []
    while len(names) < n:
        name = first_name(ctx)
        if name not in names and len(name) >= 3:
            names.append(name)
    return names


def split_parts(rng: random.Random, total: int) -> list[int]:
    """Split ``total`` records into conversations of 2-4 records each."""
    parts = []
    while total > 0:
        n = rng.choice([2, 3, 3, 4])
        if total - n == 1:
            n += 1 if n < 4 else -1
        n = min(n, total)
        parts.append(n)
        total -= n
    return parts


def letter_repo_names(ctx: Ctx, n: int, prefix: str) -> list[tuple[str, str]]:
    """(repo name, service) pairs named ``<prefix>repo-a``, ``<prefix>repo-b``, ..."""
    services = list(SERVICES)
    ctx.rng.shuffle(services)
    names = [f"{prefix}repo-{string.ascii_lowercase[i % 26]}{'' if i < 26 else i // 26}" for i in range(n)]
    return [(name, services[i % len(services)]) for i, name in enumerate(names)]


def assign_ids(records: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """Number ``records`` in order as ``<prefix>-0001``, ..."""
    for i, rec in enumerate(records, 1):
        rec["id"] = f"{prefix}-{i:04d}"
    return records


def gen_mixed(
    ctx: Ctx,
    total: int,
    n_notes: int,
    n_repos: int,
    files_per_repo: tuple[int, int],
    scope_prefix: str,
    clean_share: float,
) -> list[dict[str, Any]]:
    """``total`` records of one data set: code files, notes, then chats for the rest, interleaved."""
    rng = ctx.rng
    repos: list[list[dict[str, Any]]] = []
    for name, svc in letter_repo_names(ctx, n_repos, scope_prefix):
        repo = make_repo(ctx, name, svc)
        repos.append(gen_repo_files(ctx, repo, rng.randint(*files_per_repo), clean_share, extended=False))
    notes: list[list[dict[str, Any]]] = []
    n_done = 0
    while n_done < n_notes:
        scope = f"{scope_prefix}note-{len(notes) + 1:04d}"
        size = 2 if rng.random() < 0.2 and n_notes - n_done >= 2 else 1
        notes.append([gen_note(ctx, scope) for _ in range(size)])
        n_done += size
    n_chat = total - n_notes - sum(len(g) for g in repos)
    agents = agent_pool(ctx)
    sizes = split_parts(rng, n_chat)
    topics: list[Topic] = []
    while len(topics) < len(sizes):
        topics.extend(rng.sample(TOPICS, len(TOPICS)))
    chats = [
        gen_conversation(ctx, f"{scope_prefix}conv-{i:04d}", parts, agents, topic)
        for i, (parts, topic) in enumerate(zip(sizes, topics, strict=False), 1)
    ]
    groups = chats + notes + repos
    rng.shuffle(groups)
    return [rec for group in groups for rec in group]


def gen_code_secrets(ctx: Ctx, n_files: int) -> list[dict[str, Any]]:
    """Extended code-secrets benchmark: repos of 5-10 files named after their company, ~30% clean files."""
    rng = ctx.rng
    records: list[dict[str, Any]] = []
    used_names: list[str] = []
    while len(records) < n_files:
        repo = make_repo(ctx, "", rng.choice(SERVICES))
        suffix = rng.choice(["api", "service", "worker", "infra", "app", "tools"])
        repo.name = f"{repo.slots['corp'][0]}-{repo.svc}-{suffix}"
        if repo.name in used_names:
            continue
        used_names.append(repo.name)
        want = min(rng.randint(5, 10), n_files - len(records))
        records.extend(gen_repo_files(ctx, repo, want, 0.3, extended=True))
    return records


def to_jsonl(records: list[dict[str, Any]]) -> bytes:
    """Canonical JSONL bytes: sorted keys, compact separators, UTF-8, one record per line."""
    lines = [json.dumps(rec, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for rec in records]
    return ("\n".join(lines) + "\n").encode("utf-8")


def generate(seed: int = DEFAULT_SEED) -> dict[str, bytes]:
    """Build the three data sets; returns file name -> JSONL bytes."""
    sample_ctx = Ctx("sample", seed, years=(2021, 2024), birth_years=(1938, 1970))
    sample = assign_ids(
        gen_mixed(
            sample_ctx, total=150, n_notes=30, n_repos=6, files_per_repo=(5, 6), scope_prefix="", clean_share=0.25
        ),
        "sample",
    )
    sample_text = "\n".join(str(r["text"]) for r in sample)

    val_ctx = Ctx("validation", seed, years=(2025, 2026), birth_years=(1971, 2004), forbidden=sample_text)
    validation = assign_ids(
        gen_mixed(val_ctx, total=300, n_notes=50, n_repos=9, files_per_repo=(4, 6), scope_prefix="v", clean_share=0.25),
        "val",
    )

    code_ctx = Ctx(
        "code_secrets",
        seed,
        years=(2019, 2020),
        birth_years=(1960, 1999),
        forbidden=sample_text + "\n" + "\n".join(str(r["text"]) for r in validation),
    )
    code = assign_ids(gen_code_secrets(code_ctx, 200), "cs")
    return {
        SAMPLE_FILE: to_jsonl(sample),
        VALIDATION_FILE: to_jsonl(validation),
        CODE_SECRETS_FILE: to_jsonl(code),
    }


def faker_version() -> str:
    """The installed Faker version."""
    import faker

    return str(faker.VERSION)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: write the three JSONL files into ``--out-dir``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="master seed (default %(default)s)")
    parser.add_argument("--out-dir", type=Path, default=DATA_DIR, help="output directory (default: curation/data)")
    args = parser.parse_args(argv)
    if faker_version() != GENERATED_WITH_FAKER:
        print(
            f"warning: Faker {faker_version()} installed; the committed files were generated with "
            f"{GENERATED_WITH_FAKER}, so the output will differ",
            file=sys.stderr,
        )
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, payload in generate(args.seed).items():
        (args.out_dir / name).write_bytes(payload)
        n_records = payload.count(b"\n")
        print(f"wrote {args.out_dir / name} ({len(payload)} bytes, {n_records} records)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
