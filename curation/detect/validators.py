"""Validators: cheap checks that turn a loose regex into a precise detector (checksums, value shapes)."""

from __future__ import annotations

import ipaddress
import math
import re
from urllib.parse import unquote


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


# Site pages that share a profile URL's shape ("github.com/features", "x.com/home"): nobody's profile.
_SITE_PAGES = frozenset(
    "about features pricing login signup join explore topics trending marketplace settings notifications "
    "home search orgs organizations enterprise sponsors security contact help support careers jobs blog "
    "docs terms privacy policies legal apps collections events new search share intent hashtag i".split()
)


def _profile_handle_ok(value: str) -> bool:
    """A profile URL's handle (its last segment) is not a page of the site itself."""
    handle = value.rstrip("/").rsplit("/", 1)[-1].lstrip("@").lower()
    return len(handle) >= 2 and handle not in _SITE_PAGES


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


_PLAIN_EMAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}")


def _decoded(value: str) -> str:
    """A URL-encoded value decoded (twice: ``%2540`` is a double-encoded ``@``); ``+`` stays a plus."""
    return unquote(unquote(value))


def _encoded_email_ok(value: str) -> bool:
    """A percent-encoded e-mail (``orla%2Equenby%40host.net``) that decodes to a plain address."""
    return "%" in value and _PLAIN_EMAIL.fullmatch(_decoded(value)) is not None


def _query_username_ok(value: str) -> bool:
    """``?user=v``: a login-shaped value (no spaces or paths), not a placeholder, template or role account.
    A dotted value is a login here ("orla.quenby"), not the attribute chain :func:`_username_ok` rejects."""
    v = _decoded(value)
    if re.fullmatch(r"[\w.@+-]{3,64}", v) is None or _PLACEHOLDER.match(v):
        return False
    return v.lower() not in _GENERIC_USERS and v.lower() not in _ROLE_USERS


# Role accounts and form defaults in query strings ("?user=admin"): they name no one.
_ROLE_USERS = frozenset("admin administrator root guest anonymous anon test demo nobody true false".split())


def _query_phone_ok(value: str) -> bool:
    """``?phone=v``: digits and phone punctuation only (``+`` / ``%2B``, ``%20``, ``-``, ``.``, brackets),
    7-15 digits, not one repeated digit."""
    v = _decoded(value)
    digits = sum(c.isdigit() for c in v)
    shaped = re.fullmatch(r"\+?[\d() .+-]+", v) is not None
    return shaped and 7 <= digits <= 15 and len(set(re.sub(r"\D", "", v))) >= 3


def _query_secret_ok(value: str) -> bool:
    """``?token=v``, ``&session=v`` and the like: >= 8 characters that look random (:func:`_token_value_ok`)."""
    return _token_value_ok(_decoded(value))


def _query_password_ok(value: str) -> bool:
    """``?password=v``: >= 8 characters, no path or space, not a placeholder (:func:`_secret_value_ok`)."""
    v = _decoded(value)
    return len(v) >= 8 and not v.startswith("/") and " " not in v and _secret_value_ok(v)


def _auth_value_ok(value: str) -> bool:
    """The credential after an ``Authorization:`` scheme word (Basic, Bearer, ...): >= 8 characters, not a
    placeholder, code reference or constant name (``TOKEN_HERE``), and not a plain word: it has letters and
    digits, base64 padding, or mixed case over >= 16 characters."""
    v = value.strip()
    if len(v) < 8 or not _secret_value_ok(v) or re.fullmatch(r"[A-Z0-9]+(?:_[A-Z0-9]+)+", v):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_alpha = any(c.isalpha() for c in v)
    mixed_case = any(c.islower() for c in v) and any(c.isupper() for c in v)
    return (has_digit and has_alpha) or (has_alpha and v.endswith("=")) or (mixed_case and len(v) >= 16)


DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"  # the check letter of a Spanish DNI/NIE: number mod 23
_DNI = re.compile(r"([XYZxyz]?)([\d.\s-]{7,11})([\s-]?)([A-Za-z])")


def dni_check_letter(number: str) -> str:
    """The check letter of a DNI number, or of an NIE with its leading X/Y/Z."""
    digits = re.sub(r"\D", "", number)
    lead = number.strip()[:1].upper()
    if lead in "XYZ" and lead:
        digits = str("XYZ".index(lead)) + digits
    return DNI_LETTERS[int(digits) % 23]


def is_dni(value: str) -> bool:
    """Whether ``value`` is a DNI (8 digits) or NIE (X/Y/Z + 7 digits) with its valid check letter."""
    m = _DNI.fullmatch(value.strip())
    if not m:
        return False
    digits = re.sub(r"\D", "", m.group(2))
    if len(digits) != (7 if m.group(1) else 8):
        return False
    return dni_check_letter(m.group(1) + digits) == m.group(4).upper()
