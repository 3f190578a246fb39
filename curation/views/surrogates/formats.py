"""Format-preserving generators (pure functions of the value and a seeded RNG): phones, ids, SSNs, IBANs,
IP addresses, and masks.
"""

from __future__ import annotations

import ipaddress
import random
import re

from curation.detect.validators import _DNI, dni_check_letter, is_dni

DOC_V4_NETS = ("192.0.2", "198.51.100", "203.0.113")
MASK_CHAR = "*"
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


# A kept id prefix is a short code ('INV-', 'ACCT-', 'CUST-ORD-'): a longer run of letters may be a word of the
# private value itself ('ABERNATHY-' of a surname filed as an id), and is shaped like the rest of the body.
ID_PREFIX_MAX_LETTERS = 4
_ID_PREFIX_RUN = re.compile(rf"[A-Za-z]{{1,{ID_PREFIX_MAX_LETTERS}}}[-_:#/.]")


def id_prefix(value: str) -> str:
    """The leading short codes of an id (each <= ID_PREFIX_MAX_LETTERS letters and a separator), or a
    1-4 capital letter code directly before digits ('AB12345'); '' when the id starts with a longer word."""
    match = re.match(rf"^[A-Z]{{1,{ID_PREFIX_MAX_LETTERS}}}(?=\d)", value)
    if match:
        return match.group(0)
    end = 0
    while (run := _ID_PREFIX_RUN.match(value, end)) is not None:
        end = run.end()
    return value[:end]


def id_surrogate(value: str, rng: random.Random) -> str | None:
    """Same length, short id prefix (:func:`id_prefix`) and character classes; hex stays hex. No word of
    the original is kept: a longer leading word is shaped like the body."""
    prefix = id_prefix(value)
    body = value[len(prefix) :]
    if not any(c.isalnum() for c in body):
        return None
    hex_only = bool(re.fullmatch(r"[0-9a-f\W_]+|[0-9A-F\W_]+", body)) and any(c.isdigit() for c in body)
    return prefix + _shape(body, rng, hex_only)


def id_number_surrogate(value: str, rng: random.Random) -> str | None:
    """An identifier of the same shape (:func:`id_surrogate`); a DNI/NIE keeps its X/Y/Z and gets the valid
    check letter of its new digits, so a validator downstream still accepts it."""
    if not is_dni(value):
        return id_surrogate(value, rng)
    m = _DNI.fullmatch(value.strip())
    assert m is not None
    lead, digit_part, separator, letter = m.groups()
    new_digits = "".join(str(rng.randrange(10)) if c.isdigit() else c for c in digit_part)
    check = dni_check_letter(lead + new_digits)
    body = f"{lead}{new_digits}{separator}{check if letter.isupper() else check.lower()}"
    start = value.index(value.strip())
    return value[:start] + body + value[start + len(value.strip()) :]


def age_band(value: str) -> str | None:
    """The age's five-year band in the original's words ('70 años' -> '70-74 años'); 90 and over as '90+'
    (HIPAA's safe harbour pools them); None when the value holds no age number."""
    numbers = list(re.finditer(r"(?<!\d)\d{1,3}(?!\d)", value))
    if not numbers:
        return None
    m = numbers[0]
    age = int(m.group(0))
    band = "90+" if age >= 90 else f"{age - age % 5}-{age - age % 5 + 4}"
    return value[: m.start()] + band + value[m.end() :]


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
