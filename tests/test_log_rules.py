"""Rules for the common log spellings (#36): URL-encoded e-mails, HTTP authorization headers and private
values in URL query strings, found by the rule detectors on every kind, and not in ordinary prose.

All values below are invented (names, hosts, tokens); none is a real credential.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from curation.core.spans import ACCOUNT_ID, API_KEY, EMAIL_ADDRESS, PASSWORD, PHONE_NUMBER, SECRET, USERNAME, Span
from curation.detect import DetectorConfig, DetectorSuite

KINDS = ("log", "text", "config", "code")
NEW_RULES = ("url_encoded_email", "auth_header", "query_secret", "query_username", "query_phone")


@pytest.fixture(scope="module")
def rules_only() -> DetectorSuite:
    return DetectorSuite(DetectorConfig(use_presidio=False))


def _exact(spans: list[Span], text: str, value: str, label: str) -> Span:
    start = text.index(value)
    hits = [s for s in spans if (s.start, s.end, s.label) == (start, start + len(value), label)]
    assert hits, f"no {label} span at [{start}, {start + len(value)}): {[(s.start, s.end, s.label) for s in spans]}"
    return hits[0]


def _from_new_rules(spans: list[Span]) -> list[Span]:
    return [s for s in spans if any(f"pattern:{n}" in s.source.split("+") for n in NEW_RULES)]


# --- URL-encoded e-mails -----------------------------------------------------------------------------------
ENCODED_EMAILS = [
    "orla.quenby%40brightmail.net",
    "orla%2Equenby%40brightmail%2Enet",
    "orla%2equenby%40brightmail%2enet",
    "orla.quenby+alerts%40brightmail.net",
    "orla.quenby%2Balerts%40brightmail.net",
    "orla.quenby%2540brightmail.net",  # double-encoded "@"
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("address", ENCODED_EMAILS)
def test_url_encoded_email_in_a_query_string_is_the_whole_address(
    rules_only: DetectorSuite, kind: str, address: str
) -> None:
    text = f"10.0.0.7 - - [12/Mar/2026:10:01:22] GET /signup?email={address}&ref=abc HTTP/1.1 200\n"
    spans = rules_only.detect([text], [kind])[0]
    span = _exact(spans, text, address, EMAIL_ADDRESS)  # not the "email=" key, not the "&" after
    assert span.source.split("+")[0].startswith("pattern:")


def test_url_encoded_email_inside_a_full_url_splits_the_url(rules_only: DetectorSuite) -> None:
    address = "tamsin.velloway%40quarrymail.org"
    text = f"redirect to https://accounts.quarrymail.test/verify?to={address}&step=2 now"
    spans = rules_only.detect([text], ["text"])[0]
    _exact(spans, text, address, EMAIL_ADDRESS)


def test_bidi_controls_are_dropped_before_matching(rules_only: DetectorSuite) -> None:
    """U+202E ... U+202C around a value: the matching view drops them (format characters), so the plain
    and the encoded e-mail are found and the span keeps the original's offsets without the controls."""
    encoded = "perrin.adeyemi%40fallowfield.io"
    plain = "perrin.adeyemi@fallowfield.io"
    text = f"GET /u?email=\u202e{encoded}\u202c&x=1 HTTP/1.1 from \u202e{plain}\u202c\n"
    spans = rules_only.detect([text], ["log"])[0]
    _exact(spans, text, encoded, EMAIL_ADDRESS)
    _exact(spans, text, plain, EMAIL_ADDRESS)


def test_percent_formats_and_hostless_addresses_are_not_encoded_emails(rules_only: DetectorSuite) -> None:
    texts = [
        'printf("%-20s%40s.%s\\n", name, host, tld);',
        "otpauth://totp/mark%40percival?issuer=Quarry",  # no domain
        "width: calc(100%40px);",
    ]
    found = rules_only.detect(texts, ["code"] * len(texts))
    assert [_from_new_rules(spans) for spans in found] == [[], [], []]


# --- authorization headers ---------------------------------------------------------------------------------
BASIC = "b3JsYTpodW50ZXIyX3NlY3JldA=="
OPAQUE = "7f3Kq9ZmX2vLp8Rt4WnB"
AUTH_CASES = [
    ("Authorization: Basic {v}\n", BASIC),
    ("Authorization: Bearer {v}\n", OPAQUE),
    ("Proxy-Authorization: Basic {v}\r\n", BASIC),
    ("POST /api/orders authorization=Bearer {v} status=401\n", OPAQUE),
    ('{{"headers": {{"Authorization": "Bearer {v}", "Accept": "*/*"}}}}\n', OPAQUE),
    ("curl -H 'authorization: token {v}' https://ci.fallowfield.test/api\n", OPAQUE),
    ('req.Header.Set("Authorization", "Bearer {v}")\n', OPAQUE),
    ("Authorization: {v}\n", OPAQUE),  # a raw key, no scheme word
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("template", "value"), AUTH_CASES)
def test_authorization_header_credential_is_a_secret(
    rules_only: DetectorSuite, kind: str, template: str, value: str
) -> None:
    text = template.format(v=value)
    spans = rules_only.detect([text], [kind])[0]
    _exact(spans, text, value, SECRET)  # the credential only: not the scheme word
    assert not any(s.start <= text.index(value) - 2 < s.end for s in spans if s.label == SECRET)


@pytest.mark.parametrize(
    "text",
    [
        "The authorization was granted by the board on 12 March 2019.",
        "Authorization: pending review by the licensing committee.",
        "Authorization: Bearer followed by the access token is required for every call.",
        "Send the header Authorization: Basic with the encoded credentials.",
    ],
)
def test_authorization_in_prose_is_not_a_secret(rules_only: DetectorSuite, text: str) -> None:
    assert _from_new_rules(rules_only.detect([text], ["text"])[0]) == []


@pytest.mark.parametrize(
    "text",
    [
        'headers = {"Authorization": f"Bearer {token}"}',
        "headers['Authorization'] = 'Bearer ' + self.access_token",
        "xhr.setRequestHeader('Authorization', 'Basic ' + btoa(user + ':' + pw));",
        'curl -H "Authorization: Bearer $API_TOKEN" https://api.fallowfield.test',
        'curl -H "Authorization: Bearer YOUR_ACCESS_TOKEN" https://api.fallowfield.test',
        'curl -H "Authorization: Bearer <token>" https://api.fallowfield.test',
        "Authorization: Bearer ACCESS_TOKEN_HERE",
    ],
)
def test_authorization_templates_in_code_are_not_secrets(rules_only: DetectorSuite, text: str) -> None:
    assert [s for s in rules_only.detect([text], ["code"])[0] if s.label == SECRET] == []


@pytest.mark.parametrize("text", ["Your authorization number: AZ883104 was issued.", "Authorization: AZ88C3104."])
def test_authorization_codes_stay_account_ids(rules_only: DetectorSuite, text: str) -> None:
    spans = rules_only.detect([text], ["text"])[0]
    assert _from_new_rules(spans) == []
    assert [s.label for s in spans] == [ACCOUNT_ID]


# --- private values in query strings -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_query_string_values_are_labeled_by_key(rules_only: DetectorSuite, kind: str) -> None:
    text = (
        "GET /api/v2/profile?user=quenby77&phone=%2B447700900123&sid=a8f3k29dk3l2x"
        "&session=Zr02Lm8Xp4Tn7Vb1&pwd=Harb0r%21Day42&api_key=Kq83mZ0xV9bT4pLw HTTP/1.1\n"
    )
    spans = rules_only.detect([text], [kind])[0]
    _exact(spans, text, "quenby77", USERNAME)
    _exact(spans, text, "%2B447700900123", PHONE_NUMBER)
    _exact(spans, text, "a8f3k29dk3l2x", SECRET)
    _exact(spans, text, "Zr02Lm8Xp4Tn7Vb1", SECRET)
    # query_secret finds these too; the assignment rules' more specific label wins the tie
    _exact(spans, text, "Harb0r%21Day42", PASSWORD)
    _exact(spans, text, "Kq83mZ0xV9bT4pLw", API_KEY)


def test_query_values_after_an_html_escaped_ampersand(rules_only: DetectorSuite) -> None:
    text = '<a href="/account?tab=1&amp;login=velloway.t&amp;session=Zr02Lm8Xp4Tn7Vb1">manage</a>'
    spans = rules_only.detect([text], ["code"])[0]
    _exact(spans, text, "velloway.t", USERNAME)
    _exact(spans, text, "Zr02Lm8Xp4Tn7Vb1", SECRET)


@pytest.mark.parametrize(
    "text",
    [
        "GET /x?user=admin&login=guest&username=%7Buser%7D HTTP/1.1",  # role accounts, templates
        "GET /x?phone=1234&tel=call-me HTTP/1.1",  # too short / not a number
        "GET /x?key=ArrowUp&token=short&session=abcdefghij HTTP/1.1",  # not random-looking
        'url = base + "?token=" + token + "&user=" + name',
        "fetch(`/api?user=${user}&token=${tok}`)",
        "value = cond?user=fallback:other",
        "In the form, user=quenby77 and token=Kq83mZ0xV9bT4pLw are typed by hand.",  # no query string
    ],
)
def test_query_rules_need_a_query_string_and_a_real_value(rules_only: DetectorSuite, text: str) -> None:
    found = rules_only.detect([text], ["code"])[0]
    assert [s for s in found if s.source.split("+")[0] in ("pattern:query_username", "pattern:query_phone")] == []
    assert [s for s in found if "pattern:query_secret" in s.source.split("+")] == []


# --- families ------------------------------------------------------------------------------------------------
def test_new_families_can_be_excluded() -> None:
    text = f"GET /s?email=orla.quenby%40brightmail.net&user=quenby77 HTTP/1.1\nAuthorization: Basic {BASIC}\n"
    everything = DetectorSuite(DetectorConfig(use_presidio=False)).detect([text], ["log"])[0]
    assert {s.label for s in _from_new_rules(everything)} == {EMAIL_ADDRESS, USERNAME, SECRET}
    off = frozenset({"url_encoded_email", "auth_headers", "query_values"})
    without = DetectorSuite(DetectorConfig(use_presidio=False, excluded_families=off)).detect([text], ["log"])[0]
    assert _from_new_rules(without) == []
