"""Seeded fake values of the shapes the templates need: dates, phones, cards, IBANs, IPs, ids and secrets."""

from __future__ import annotations

import base64
import json
import random
import string
import unicodedata
import uuid
from datetime import date

from faker import Faker

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
