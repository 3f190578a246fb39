"""Detector suite: every local rule finds a planted value at exact offsets, with real Presidio behind it.

All values below are fabricated test fixtures (invalid or reserved where a checksum exists).
"""

from __future__ import annotations

import itertools
import os

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from curation import detect as detectors
from curation.core.spans import (
    ACCOUNT_ID,
    AGE,
    API_KEY,
    CONNECTION_STRING,
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
)
from curation.detect import (
    LINE_SPLIT_LABELS,
    PRESIDIO_TO_LABEL,
    SPACY_TO_PRESIDIO,
    TITLE,
    DetectorConfig,
    DetectorError,
    DetectorSuite,
    _trim_name_edges,
    iban_ok,
    luhn_ok,
)
from curation.views.surrogates import nrp_reading

DENIED = "Zanzibar-Quokka-77"
ALLOWED = "Acme Widgets Inc"


@pytest.fixture(scope="module")
def suite() -> DetectorSuite:
    return DetectorSuite(DetectorConfig(deny_list=[DENIED], allow_list=[ALLOWED, "Jane Roe"]))


@pytest.fixture(scope="module")
def rules_only() -> DetectorSuite:
    return DetectorSuite(DetectorConfig(use_presidio=False))


def _find(spans: list[Span], text: str, value: str) -> Span:
    start = text.index(value)
    hits = [s for s in spans if s.start == start and s.end == start + len(value)]
    assert hits, f"no span at [{start}, {start + len(value)}): {[(s.start, s.end, s.label) for s in spans]}"
    return hits[0]


def _covered(spans: list[Span], text: str, value: str) -> bool:
    start = text.index(value)
    return any(s.start <= start and start + len(value) <= s.end for s in spans)


# Each case: (kind, text template with {v}, planted value, expected label)
CASES = [
    ("code", 'AWS_ACCESS_KEY_ID = "{v}"\n', "AKIAZ3EXAMPLE7QW2XYZ", API_KEY),
    ("code", "token: {v}\n", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", API_KEY),
    ("code", "pat = '{v}'\n", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuv", API_KEY),
    ("code", "SLACK = '{v}'\n", "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", API_KEY),
    ("code", "stripe.api_key = '{v}'\n", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", API_KEY),
    ("code", "maps_key = '{v}'\n", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", API_KEY),
    (
        "text",
        "Authorization: Bearer {v}\n",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        SECRET,
    ),
    ("config", 'client_secret = "{v}"\n', "q8Zr2Lm0Xp4Tn7Vb1Kc9Wd3Sf6Gh5Jy", SECRET),
    ("config", "db:\n  password: {v}\n", "Tr0ub4dor&3", PASSWORD),
    ("code", "export PGPASSWORD='{v}'\n", "quartz-meadow79", PASSWORD),
    ("code", "define( 'DB_PASSWORD', '{v}' );\n", "s3cr3t.Pa55", PASSWORD),
    (
        "code",
        "DATABASE_URL={v}\n",
        "postgresql://app_rw:Harbor8411-@db-1.internal.test:5432/app",
        CONNECTION_STRING,
    ),
    (
        "config",
        'conn = "{v};"\n',
        "Server=sql01.test;Database=app;User Id=app_rw;Password=Harb0r!8411",
        CONNECTION_STRING,
    ),
    (
        "code",
        "{v}\n",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
        "-----END RSA PRIVATE KEY-----",
        PRIVATE_KEY,
    ),
    ("log", "opened /home/{v}/.ssh/config\n", "jdoe42", USERNAME),
    ("code", "# TODO({v}): rotate\n", "mkowalski", USERNAME),
    (
        "text",
        "Please ship it to {v} by Friday.",
        "1600 Pennsylvania Avenue NW, Washington, DC 20500",
        STREET_ADDRESS,
    ),
    ("text", "Office: {v}\nThanks", "221B Baker Street\nLondon NW1 6XE", STREET_ADDRESS),
    ("text", "Neue Adresse: {v}.", "Hauptstraße 5, 10115 Berlin", STREET_ADDRESS),
    ("text", "Card on file {v} thanks", "4111 1111 1111 1111", CREDIT_CARD),
    ("text", "Wire it to {v} today", "GB82 WEST 1234 5698 7654 32", IBAN_CODE),
    ("text", "server at {v} is down", "203.0.113.42", IP_ADDRESS),
    ("text", "v6 host {v} unreachable", "2001:db8:85a3::8a2e:370:7334", IP_ADDRESS),
    ("text", "Call me on {v} after lunch", "(212) 555-0134", PHONE_NUMBER),
    ("text", "My SSN is {v}.", "123-45-6789", US_SSN),
    ("text", "Mail {v} for access", "jane.doe@example.org", EMAIL_ADDRESS),
    ("text", "Order {v} has shipped", "ORD-20240512-7781", ACCOUNT_ID),
    ("text", "My username is {v}, not the email", "zk_walker9", USERNAME),
    ("text", "The patient is a 47 year old {v}", "47", AGE),
    ("text", "see {v} for details", "https://intranet.corp.test/wiki/Payroll?id=77", URL),
]


@pytest.mark.parametrize(("kind", "template", "value", "label"), CASES, ids=[c[3] + ":" + c[1][:18] for c in CASES])
def test_rule_finds_planted_value_with_exact_offsets(
    rules_only: DetectorSuite, kind: str, template: str, value: str, label: str
) -> None:
    text = template.format(v=value)
    found = rules_only.detect([text], [kind])[0]
    lines = value.split("\n") if label in LINE_SPLIT_LABELS else [value]  # one span per address line
    for line in lines:
        span = _find(found, text, line)
        assert span.label == label
        assert span.source and span.score is not None


def test_assignment_labels_only_the_value(rules_only: DetectorSuite) -> None:
    text = 'API_KEY = "Zq8Lm0Xp4Tn7Vb1Kc9Wd3Sf6"\n'
    (span,) = rules_only.detect([text], ["code"])[0]
    assert text[span.start : span.end] == "Zq8Lm0Xp4Tn7Vb1Kc9Wd3Sf6"


@pytest.mark.parametrize(
    "text",
    [
        "password = os.environ['DB_PASSWORD']\n",
        "password: Optional[str] = None\n",
        'password = "changeme"\n',
        "api_key = settings.API_KEY\n",
        "x = arr[1::3]\n",
        'url = "driver://user:pass@host/db"\n',
        "rng = np.random.default_rng(5292808890472453840)\n",
    ],
)
def test_code_lookalikes_are_not_secrets(rules_only: DetectorSuite, text: str) -> None:
    assert rules_only.detect([text], ["code"])[0] == []


def test_luhn_invalid_number_is_not_a_card(suite: DetectorSuite) -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    text = "Card on file 4111 1111 1111 1112 thanks"
    assert not any(s.label == CREDIT_CARD for s in suite.detect([text])[0])


def test_iban_checksum() -> None:
    assert iban_ok("GB82 WEST 1234 5698 7654 32")
    assert not iban_ok("GB83 WEST 1234 5698 7654 32")


def test_presidio_finds_names_and_places(suite: DetectorSuite) -> None:
    text = "Yesterday Barack Obama flew from Chicago to Paris."
    spans = suite.detect([text])[0]
    assert _find(spans, text, "Barack Obama").label == PERSON
    assert _covered(spans, text, "Chicago") and _covered(spans, text, "Paris")


def test_spans_do_not_overlap(suite: DetectorSuite) -> None:
    text = "Mr. John Smith, 42 Elm Street, Springfield, IL 62704, john.smith@example.com, 555-867-5309."
    spans = suite.detect([text])[0]
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def test_allow_list_suppresses(suite: DetectorSuite) -> None:
    text = "Jane Roe works at Acme Widgets Inc in Boston."
    spans = suite.detect([text])[0]
    assert not _covered(spans, text, "Jane Roe") and not _covered(spans, text, ALLOWED)
    assert _covered(spans, text, "Boston")


def test_deny_list_flags(suite: DetectorSuite) -> None:
    text = f"the internal codename {DENIED} leaked, also {DENIED.lower()}"
    spans = suite.detect([text])[0]
    hits = [s for s in spans if s.source == "deny_list"]
    assert len(hits) == 2 and all(s.length == len(DENIED) for s in hits)


def test_code_kind_skips_prose_ner(suite: DetectorSuite) -> None:
    text = "def handler(event):\n    # Ada Lovelace owns this\n    Deploy = Config()\n"
    spans = suite.detect([text], ["code"])[0]
    assert [text[s.start : s.end] for s in spans] == ["Ada Lovelace"]


def test_empty_and_batch_shapes(suite: DetectorSuite) -> None:
    assert suite.detect([]) == []
    assert suite.detect(["", "   "]) == [[], []]
    with pytest.raises(ValueError, match="kinds has 1 entries for 2 texts"):
        suite.detect(["a", "b"], ["text"])


def test_no_raw_values_in_reprs_or_errors(suite: DetectorSuite) -> None:
    secret = "hunter2-Zq8Lm0Xp4T"
    text = f"password: {secret} and {DENIED}"
    spans = suite.detect([text])[0]
    assert spans
    shown = repr(suite) + repr(suite.config) + repr(spans) + str(spans)
    assert secret not in shown and DENIED not in shown and ALLOWED not in shown
    bad = DetectorSuite(DetectorConfig(spacy_model="no_such_model"))
    with pytest.raises(DetectorError) as info:
        bad.detect([text])
    assert secret not in str(info.value)


def test_engine_failure_does_not_leak_text(suite: DetectorSuite) -> None:
    secret = "hunter2-Zq8Lm0Xp4T"

    class Exploding:
        def analyze_iterator(self, texts: list[str], **_: object) -> list:
            raise ValueError(f"cannot parse {texts[0]!r}")

    broken = DetectorSuite(suite.config)
    broken._batch = Exploding()
    with pytest.raises(DetectorError) as info:
        broken.detect([f"password: {secret}"])
    err = info.value
    assert secret not in str(err) and secret not in repr(err)
    assert err.__cause__ is None and err.__context__ is None


def test_versions(suite: DetectorSuite) -> None:
    versions = suite.versions
    assert {"ruleset", "presidio_analyzer", "spacy_model", "phonenumbers"} <= versions.keys()
    assert versions["spacy_model"].startswith("en_core_web_sm")


# --- job titles, name edges, firm names, places after a unit (rules added from the error analysis) ----------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("I used to work for Acme as Passenger booking clerk, but quit.", "Passenger booking clerk"),
        ("She was hired as a senior software engineer at Initech.", "senior software engineer"),
        ("Ada Byron, the chief statistician, said no.", "chief statistician"),
        ("Erik Baader\n\nCourt, municipal, and license clerk\n\nPersonal Info:", "Court, municipal, and license clerk"),
        ("naomi ryan\nsewer pipe cleaner\nhubbard, fox", "sewer pipe cleaner"),
    ],
)
def test_job_title_in_context(rules_only: DetectorSuite, text: str, title: str) -> None:
    assert _find(rules_only.detect([text])[0], text, title).label == TITLE


@pytest.mark.parametrize(
    "text",
    [
        "It works as a list of things, but not always.",  # "as" + non-occupation
        "Install it as soon as the driver updates arrive.",  # no work context before "as"
        "Thanks\nSee you soon\nTeacher",  # own line, but the line above is not a name
        "Quarterly report\n\nRevenue grew, the manager of sales said",  # no name before ", the"
        "He said the engineer was late.",  # occupation word in running prose
    ],
)
def test_job_title_needs_context(rules_only: DetectorSuite, text: str) -> None:
    assert not [s for s in rules_only.detect([text])[0] if s.label == TITLE]


def test_job_title_not_in_code(rules_only: DetectorSuite) -> None:
    text = "# Jane Doe\n# Software engineer\nx = 1\n"
    assert not [s for s in rules_only.detect([text], ["code"])[0] if s.label == TITLE]


@pytest.mark.parametrize(
    ("value", "label", "expected"),
    [
        ("the University of Oslo", ORGANIZATION, "University of Oslo"),
        ("Ada Lovelace's", PERSON, "Ada Lovelace"),
        ("the White Stripes'", LOCATION, "White Stripes"),
        ("Ada Lovelace of", PERSON, "Ada Lovelace"),
        ("Ada Lovelace\n   ", PERSON, "Ada Lovelace"),
        ("Producer Ada Lovelace", PERSON, "Ada Lovelace"),
        ("ex-Zombie Ahtisaari", PERSON, "Ahtisaari"),
        ("van de Noort", PERSON, "van de Noort"),  # name particles stay
        ("Hans Baker", PERSON, "Hans Baker"),
        ("Baker", PERSON, "Baker"),  # occupational surname: kept
        ("Mason Mount", PERSON, "Mason Mount"),
        ("iRobot Corp", ORGANIZATION, "iRobot Corp"),
        ("Salesperson", PERSON, None),  # an occupation alone is not a name
        ("Producer", PERSON, None),
    ],
)
def test_ner_name_edges(value: str, label: str, expected: str | None) -> None:
    kept = _trim_name_edges(label, value, 0, len(value))
    assert (None if kept is None else value[kept[0] : kept[1]]) == expected


def test_ner_edges_trimmed_end_to_end(suite: DetectorSuite) -> None:
    text = "Yesterday I read Ada Lovelace's notes at the University of Oslo."
    spans = suite.detect([text])[0]
    covered = "".join(text[s.start : s.end] for s in spans)
    assert "'s" not in covered and not any(text[s.start : s.end].lower().startswith("the ") for s in spans)


@pytest.mark.parametrize(
    ("text", "firm"),
    [
        ("She joined Clark, Romero and Hall last year.", "Clark, Romero and Hall"),
        ("Contact Hubbard, Fox & Gillespie today.", "Hubbard, Fox & Gillespie"),
        ("Owens, Duran and Oneal's office.", "Owens, Duran and Oneal"),
        ("Thomas and Sons delivered it.", "Thomas and Sons"),
    ],
)
def test_firm_name(rules_only: DetectorSuite, text: str, firm: str) -> None:
    assert _find(rules_only.detect([text])[0], text, firm).label == ORGANIZATION


@pytest.mark.parametrize(
    "text",
    [
        "Invite Hleb, Sheila, Donna, Sherry, Donald and Shane.",  # a list of people, not a firm
        "Open on Monday, Tuesday and Friday.",
        "In March, April and May it rains.",
    ],
)
def test_firm_name_negatives(rules_only: DetectorSuite, text: str) -> None:
    assert not [s for s in rules_only.detect([text])[0] if s.source == "pattern:firm_name"]


def test_address_place_after_unit(rules_only: DetectorSuite) -> None:
    text = "It is at 731 ul. Miła 57 Apt. 819 Rzeszów Poland. It serves soup."
    _find(rules_only.detect([text])[0], text, "731 ul. Miła 57 Apt. 819 Rzeszów Poland")
    text = "Send it to 12 Main Street Apt. 4 Springfield IL 62701 today"
    _find(rules_only.detect([text])[0], text, "12 Main Street Apt. 4 Springfield IL 62701")
    text = "Send it to 12 Main Street Apt. 4 The rest follows."  # a sentence start is not a city
    assert not _covered(rules_only.detect([text])[0], text, "Apt. 4 The")


def test_multiline_address_is_one_span_per_line_without_the_separators():
    from curation.detect import split_lines

    text = "Send it to:\n  42 Harbor Road,\n  Apt. 7\n  Portland, OR 97201\nthanks"
    start = text.index("42")
    end = text.index("97201") + 5
    pieces = split_lines(text, [Span(start, end, "STREET_ADDRESS", 0.7, "pattern:street_address")])
    assert [p.text_of(text) for p in pieces] == ["42 Harbor Road", "Apt. 7", "Portland, OR 97201"]
    assert all(p.label == "STREET_ADDRESS" for p in pieces)
    single = Span(start, text.index("Road") + 4, "STREET_ADDRESS")
    assert split_lines(text, [single]) == [single]
    key = Span(0, len(text), "PRIVATE_KEY")  # other labels keep their multi-line extent
    assert split_lines(text, [key]) == [key]


def test_name_line_above_a_title_line_is_a_person(rules_only: DetectorSuite) -> None:
    text = "Ada Quillfeather\n\nSenior software engineer\n\nPhone: 555 0100"
    spans = rules_only.detect([text])[0]
    assert _find(spans, text, "Ada Quillfeather").label == PERSON
    assert _find(spans, text, "Senior software engineer").label == TITLE


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi, my name is Franz-Josef Trupp. The stick broke.", "Franz-Josef Trupp"),
        ("Regards,\nAnne-marie O'Neil", "Anne-marie O'Neil"),
        ("My name is Quentin D'Arcy-Vale and I ordered", "Quentin D'Arcy-Vale"),
    ],
)
def test_introduced_names_keep_hyphenated_and_elided_parts(rules_only: DetectorSuite, text: str, name: str) -> None:
    """A name word with a second capital ("Franz-Josef", "O'Neil") is one word: stopping at the capital
    left "Josef" in a 2,000-document release."""
    spans = rules_only.detect([text])[0]
    assert _find(spans, text, name).label == PERSON


def test_address_block_recipient_lines(rules_only: DetectorSuite) -> None:
    text = "> Ada Quillfeather\n> Quokka Analytics Ltd\n> 12 Elm Street\n> Springfield"
    spans = rules_only.detect([text])[0]
    assert _find(spans, text, "Ada Quillfeather").label == PERSON
    assert _find(spans, text, "Quokka Analytics Ltd").label == ORGANIZATION
    text = "Billing address: Ada Quillfeather\n    4410 Hauptstraße 5\n    Berlin"
    assert _find(rules_only.detect([text])[0], text, "Ada Quillfeather").label == PERSON
    # headings and greetings above an address are not recipients
    for text in ("Shipping Address\n12 Elm Street", "Hello there\n12 Elm Street", "see below:\n12 Elm Street"):
        assert [s.label for s in rules_only.detect([text])[0]] == [STREET_ADDRESS], text


def test_address_zip_on_its_own_line(rules_only: DetectorSuite) -> None:
    text = "Ship to 12 Elm Street\nSpringfield\n, IL\n 62704\nthanks"
    assert _covered(rules_only.detect([text])[0], text, "62704")
    text = "Ship to 12 Elm Street\nSpringfield\n5550134\nthanks"  # phone-sized: not a postcode
    assert not _covered(rules_only.detect([text])[0], text, "5550134")


def test_address_word_then_house_number_and_leading_building_number(rules_only: DetectorSuite) -> None:
    text = "Return it to 56 Rua Cyro Duarte Franco 1213\nRecife, PE 50000 please."
    _find(rules_only.detect([text])[0], text, "56 Rua Cyro Duarte Franco 1213")
    text = "I will meet you at 010 63 Avenue du Golf, then leave"
    _find(rules_only.detect([text])[0], text, "010 63 Avenue du Golf")


def test_lower_case_address_keeps_its_city_and_country(rules_only: DetectorSuite) -> None:
    text = "meet me at 12 avenida praia 1 suite 4, mohács, hungary 24743"
    _find(rules_only.detect([text])[0], text, "12 avenida praia 1 suite 4, mohács, hungary 24743")


def test_intersection_covers_both_streets(rules_only: DetectorSuite) -> None:
    text = "Meet at the corner of Elm Street and Oak Avenue tonight."
    assert _covered(rules_only.detect([text])[0], text, "Elm Street and Oak Avenue")
    text = "Sit in the corner of the room and wait."
    assert rules_only.detect([text])[0] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("i am cambodian but i live in oslo", "cambodian"),
        ("We are proud Shiites.", "Shiites"),
        ("She is a Republican from Ohio", "Republican"),
        ("a 1979 Polish action-comedy", "Polish"),
    ],
)
def test_nationality_religion_politics_lexicon(rules_only: DetectorSuite, text: str, value: str) -> None:
    assert _find(rules_only.detect([text])[0], text, value).label == NRP


def test_presidio_nrp_and_spacy_norp_are_labelled_nrp(suite: DetectorSuite) -> None:
    assert PRESIDIO_TO_LABEL["NRP"] == NRP and SPACY_TO_PRESIDIO["NORP"] == "NRP"
    text = "The Italian chef cooked for the Democrats in Ohio."
    spans = suite.detect([text])[0]
    for value in ("Italian", "Democrats"):
        span = _find(spans, text, value)
        assert span.label == NRP and "presidio:NRP" in span.source, span
    assert _find(spans, text, "Ohio").label == LOCATION


def test_every_nrp_lexicon_word_has_a_surrogate_kind() -> None:
    """The surrogate engine keeps its own NRP word lists: each lexicon word must be one of its forms."""
    words = (detectors._DEMONYMS + detectors._RELIGIOUS_POLITICAL).split() + list(detectors._CASED_GROUPS)
    unknown = [w for w in words if nrp_reading(w.replace("-", " "))[2] is None]
    assert unknown == []
    assert nrp_reading("catholics")[:2] == ("religion", "plural")
    assert nrp_reading("Republican")[:2] == ("politics", "singular")


@pytest.mark.parametrize(
    "text",
    [
        "Please polish the car before noon.",  # lower-case verb
        "Article 50 of the Treaty on European Union",  # part of a proper name
        "She teaches English grammar and French language classes.",  # languages
        "a liberal dose of salt",
    ],
)
def test_nationality_lexicon_negatives(rules_only: DetectorSuite, text: str) -> None:
    assert not [s for s in rules_only.detect([text])[0] if s.source == "pattern:nrp"]


def test_compass_descriptor_trimmed_from_places() -> None:
    for value, label, kept in (
        ("Southern Italy", LOCATION, "Italy"),
        ("Southern Canada", ORGANIZATION, "Canada"),  # a place mis-tagged as an organisation
        ("Northern Ireland", LOCATION, "Northern Ireland"),
        ("Central Bank of Chile", ORGANIZATION, "Central Bank of Chile"),
    ):
        start, end = _trim_name_edges(label, value, 0, len(value))
        assert value[start:end] == kept


def test_relative_weekday_is_not_a_date() -> None:
    from curation.detect import _clean_ner

    assert _clean_ner(DATE_TIME, "the last Sunday", 0, 15) is None
    assert _clean_ner(DATE_TIME, "next Friday morning", 0, 19) is None
    assert _clean_ner(DATE_TIME, "Sunday 5 May", 0, 12) == (0, 12)


def test_truecase_all_caps_words_for_ner() -> None:
    from curation.detect import _truecase

    text = "We met in STAVANGER and BAD HOMBURG near the USA office, IBAN attached."
    out = _truecase(text)
    assert len(out) == len(text)
    assert "Stavanger" in out and "Bad Homburg" in out
    assert "USA" in out and "IBAN" in out  # acronyms stay
    shouted = "PLEASE CALL ME BACK AT HOME"
    assert _truecase(shouted) == shouted


def test_truecased_caps_place_is_found(suite: DetectorSuite) -> None:
    text = "The Princess Royal arrived at BÜSCHENDORF this morning from Vienna."
    assert _covered(suite.detect([text])[0], text, "BÜSCHENDORF")  # missed without truecasing
    text = "She flew from LYON to Madrid on Friday."
    assert _find(suite.detect([text])[0], text, "LYON").label == LOCATION  # an ORGANIZATION otherwise


def test_every_rule_is_in_exactly_one_family() -> None:
    from curation.detect.language_rules import LANGUAGE_RULES
    from curation.detect.suite import RULE_FAMILIES

    rule_names = [r.name for r in detectors.PII_RULES + LANGUAGE_RULES + detectors.CREDENTIAL_RULES]
    finders = {"street_address", "address_block", "nrp", "job_title", "phone"}
    members = [m for family in RULE_FAMILIES.values() for m in family]
    assert sorted(members) == sorted([*rule_names, *finders])


def test_excluded_family_does_not_run() -> None:
    text = "Write to ada@example.org or call 555-867-5309, key AKIAIOSFODNN7EXAMPLE."
    everything = DetectorSuite(DetectorConfig(use_presidio=False)).detect([text])[0]
    without = DetectorSuite(DetectorConfig(use_presidio=False, excluded_families=frozenset({"email"})))
    assert EMAIL_ADDRESS in {s.label for s in everything}
    assert [s for s in everything if s.label != EMAIL_ADDRESS] == without.detect([text])[0]
    assert without.versions["excluded_families"] == "email"
    with pytest.raises(ValueError, match="unknown detector families"):
        DetectorSuite(DetectorConfig(excluded_families=frozenset({"no_such_family"})))


def test_excluding_every_presidio_recognizer_runs_no_presidio() -> None:
    """Presidio given no recognizer would load all of its predefined ones instead."""
    config = DetectorConfig(excluded_families=detectors.PRESIDIO_RECOGNIZERS)
    text = "Yesterday Barack Obama flew from Chicago to Paris."
    assert not [s for s in DetectorSuite(config).detect([text])[0] if s.source.startswith("presidio:")]


@pytest.mark.parametrize(
    "value",
    [
        "github.com/ilse-vortmann",
        "https://github.com/ivortmann",
        "linkedin.com/in/ilsevortmann",
        "https://www.linkedin.com/in/ilse-vortmann-4821/",
        "behance.net/ilsevortmann",
        "x.com/ilse_vortmann",
        "https://medium.com/@ilsev",
    ],
)
def test_profile_urls_without_a_scheme_are_found_whole(rules_only: DetectorSuite, value: str) -> None:
    """A profile page names its owner; CVs write it without a scheme, and the host is a public one (#42)."""
    text = f"Portfolio: {value} | Phone on request"
    assert _find(rules_only.detect([text])[0], text, value).label == URL


@pytest.mark.parametrize(
    "text", ["Fork https://github.com/psf/black first.", "See github.com/features for more.", "x.com/home"]
)
def test_repository_and_site_pages_are_not_profiles(rules_only: DetectorSuite, text: str) -> None:
    assert not any(s.source.startswith("pattern:profile_url") for s in rules_only.detect([text])[0])


def test_profile_urls_are_prose_only(rules_only: DetectorSuite) -> None:
    code = 'HOMEPAGE = "github.com/ilse-vortmann"  # maintainer\n'
    assert not any("profile_url" in s.source for s in rules_only.detect([code], kinds=["code"])[0])
