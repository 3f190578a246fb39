"""Label maps: the label names a labeled set brings, mapped onto the redaction convention's labels.

Public labeled sets name their categories their own way (TAB: DATETIME, ORG, LOC, DEM, CODE;
CredData: Password, API:Token, NKEY Seed, ...; presidio-research: GPE, ADDRESS, PREFIX, ZIP_CODE,
...). A label map turns those names into the convention's labels when the set is loaded, so every
gold span (and every span a tagger learns from them) carries a label the surrogate stage knows. A
user's own vocabulary comes in as a YAML file on top of the default map (`curation eval
--label-map`, config `label_map`). A label that neither the convention nor the map knows is an
error that names it: it never reaches a release as a literal tag.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

import yaml

from curation.core import spans as S
from curation.views.convention import KNOWN_LABELS

CONVENTION_LABELS = frozenset(KNOWN_LABELS)

# Text Anonymization Benchmark (court text): its eight entity types, all of them.
TAB_LABELS = {
    "PERSON": S.PERSON,
    "ORG": S.ORGANIZATION,
    "LOC": S.LOCATION,
    "DATETIME": S.DATE_TIME,
    "CODE": S.ACCOUNT_ID,  # case and application numbers, registration codes
    "DEM": S.NRP,  # demographic attributes: nationality, ethnicity, profession
    "QUANTITY": S.SURPRISE,  # amounts and counts: masked as a generic tag
    "MISC": S.SURPRISE,
}

# presidio-research: the entity types of its data generators (PresidioSentenceFaker's output types,
# the older FakeDataGenerator's columns and InputSample tags, Faker provider names it upper-cases when
# unmapped) and of its evaluation mapping, plus every entity Presidio's predefined recognizers emit.
# Rules: an identifier with no surrogate of its own (passports, licences, national and medical ids,
# registration numbers) is ACCOUNT_ID, whose surrogate keeps length, prefix and character classes;
# a postal code is part of an address; clinical content and attributes no surrogate kind fits are
# masked as a generic tag (SURPRISE).
PRESIDIO_LABELS = {
    # people
    "PER": S.PERSON,
    "NAME": S.PERSON,
    "FIRST_NAME": S.PERSON,
    "LAST_NAME": S.PERSON,
    "MIDDLE_NAME": S.PERSON,
    "NAME_FEMALE": S.PERSON,
    "NAME_MALE": S.PERSON,
    "FIRST_NAME_FEMALE": S.PERSON,
    "FIRST_NAME_MALE": S.PERSON,
    "FIRST_NAME_NONBINARY": S.PERSON,
    "LAST_NAME_FEMALE": S.PERSON,
    "LAST_NAME_MALE": S.PERSON,
    "PATIENT": S.PERSON,
    "DOCTOR": S.PERSON,
    "STAFF": S.PERSON,
    "HCW": S.PERSON,  # health-care worker
    # Honorifics ("Mr.", "Dr."): presidio-research maps PREFIX to TITLE itself, and its generator writes
    # TITLE for them (the shared presidio_synth set has TITLE spans over "Mr."), so they agree here.
    "PREFIX": S.TITLE,
    "PREFIX_FEMALE": S.TITLE,
    "PREFIX_MALE": S.TITLE,
    "FEMALE_TITLE": S.TITLE,
    "MALE_TITLE": S.TITLE,
    # occupations: the convention's TITLE is a job title
    "JOB": S.TITLE,
    "JOB_TITLE": S.TITLE,
    "OCCUPATION": S.TITLE,
    "PROFESSION": S.TITLE,
    "ROLE": S.TITLE,
    # addresses and their parts (a postal code narrows an address down like a street does)
    "ADDRESS": S.STREET_ADDRESS,
    "FULL_ADDRESS": S.STREET_ADDRESS,
    "STREET": S.STREET_ADDRESS,
    "STREET_NAME": S.STREET_ADDRESS,
    "STREET_NO": S.STREET_ADDRESS,
    "BUILDING_NUMBER": S.STREET_ADDRESS,
    "SECONDARY_ADDRESS": S.STREET_ADDRESS,
    "ZIP": S.STREET_ADDRESS,
    "ZIP_CODE": S.STREET_ADDRESS,
    "ZIPCODE": S.STREET_ADDRESS,
    "POSTCODE": S.STREET_ADDRESS,
    "POSTAL_CODE": S.STREET_ADDRESS,
    "UK_POSTCODE": S.STREET_ADDRESS,
    "CA_POSTAL_CODE": S.STREET_ADDRESS,
    "DE_PLZ": S.STREET_ADDRESS,
    # places
    "LOC": S.LOCATION,
    "GPE": S.LOCATION,
    "CITY": S.LOCATION,
    "COUNTRY": S.LOCATION,
    "STATE": S.LOCATION,
    "STATE_ABBR": S.LOCATION,
    "COUNTY": S.LOCATION,
    "FACILITY": S.LOCATION,
    "FAC": S.LOCATION,
    # organizations
    "ORG": S.ORGANIZATION,
    "COMPANY": S.ORGANIZATION,
    "HOSPITAL": S.ORGANIZATION,
    "HOSP": S.ORGANIZATION,
    "PATORG": S.ORGANIZATION,
    "VENDOR": S.ORGANIZATION,
    # nationalities, religious and political groups
    "NORP": S.NRP,
    "NATIONALITY": S.NRP,
    "NATION_MAN": S.NRP,
    "NATION_WOMAN": S.NRP,
    "NATION_PLURAL": S.NRP,
    "RELIGION": S.NRP,
    "ETHNICITY": S.NRP,
    # attributes the NRP surrogate lists have no kind for: a generic tag (an age is the convention's AGE)
    "GENDER": S.SURPRISE,
    "SEX": S.SURPRISE,
    # dates and times
    "DATE": S.DATE_TIME,
    "TIME": S.DATE_TIME,
    "BIRTHDAY": S.DATE_TIME,
    "DATE_OF_BIRTH": S.DATE_TIME,
    "DOB": S.DATE_TIME,
    "YEAR": S.DATE_TIME,
    "DAY_OF_WEEK": S.DATE_TIME,
    # contact and network
    "EMAIL": S.EMAIL_ADDRESS,
    "PHONE": S.PHONE_NUMBER,
    "ZA_MOBILE_NUMBER": S.PHONE_NUMBER,
    "ZA_TELEPHONE_NUMBER": S.PHONE_NUMBER,
    "DOMAIN": S.URL,
    "DOMAIN_NAME": S.URL,
    "USER_NAME": S.USERNAME,
    "MAC_ADDRESS": S.ACCOUNT_ID,
    # finance
    "CREDIT_CARD_NUMBER": S.CREDIT_CARD,
    "IBAN": S.IBAN_CODE,
    "US_BANK_NUMBER": S.ACCOUNT_ID,
    "ABA_ROUTING_NUMBER": S.ACCOUNT_ID,
    "CRYPTO": S.ACCOUNT_ID,  # a wallet address
    # US numbers in the SSN's own 3-2-4 shape take its surrogate (an ITIN is 9XX-XX-XXXX)
    "SSN": S.US_SSN,
    "US_ITIN": S.US_SSN,
    # every other identifier Presidio knows: ACCOUNT_ID
    "ID": S.ACCOUNT_ID,
    "US_DRIVER_LICENSE": S.ACCOUNT_ID,
    "US_PASSPORT": S.ACCOUNT_ID,
    "MEDICAL_LICENSE": S.ACCOUNT_ID,
    **dict.fromkeys(
        (
            "US_MBI",
            "US_NPI",
            "US_HEALTH_INSURANCE_MEMBER_ID",
            "US_CLAIM_NUMBER",
            "US_PRESCRIPTION_NUMBER",
            "US_PRIOR_AUTHORIZATION_NUMBER",
            "US_PROVIDER_TAX_ID",
            "US_REFERRAL_NUMBER",
            "UK_NHS",
            "UK_NINO",
            "UK_PASSPORT",
            "UK_DRIVING_LICENCE",
            "UK_VEHICLE_REGISTRATION",
            "CA_SIN",
            "ES_NIF",
            "ES_NIE",
            "ES_PASSPORT",
            "IT_FISCAL_CODE",
            "IT_DRIVER_LICENSE",
            "IT_VAT_CODE",
            "IT_PASSPORT",
            "IT_IDENTITY_CARD",
            "PL_PESEL",
            "FI_PERSONAL_IDENTITY_CODE",
            "SE_PERSONNUMMER",
            "SE_ORGANISATIONSNUMMER",
            "DE_ID_CARD",
            "DE_PASSPORT",
            "DE_FUEHRERSCHEIN",
            "DE_TAX_ID",
            "DE_TAX_NUMBER",
            "DE_VAT_ID",
            "DE_SOCIAL_SECURITY",
            "DE_HEALTH_INSURANCE",
            "DE_HANDELSREGISTER",
            "DE_KFZ",
            "DE_LANR",
            "DE_BSNR",
            "SG_NRIC_FIN",
            "SG_UEN",
            "AU_ABN",
            "AU_ACN",
            "AU_TFN",
            "AU_MEDICARE",
            "IN_PAN",
            "IN_AADHAAR",
            "IN_VEHICLE_REGISTRATION",
            "IN_VOTER",
            "IN_PASSPORT",
            "IN_GSTIN",
            "KR_RRN",
            "KR_FRN",
            "KR_BRN",
            "KR_PASSPORT",
            "KR_DRIVER_LICENSE",
            "TH_TNIN",
            "NG_NIN",
            "NG_VEHICLE_REGISTRATION",
            "PH_PASSPORT",
            "PH_TIN",
            "PH_UMID",
            "TR_NATIONAL_ID",
            "TR_LICENSE_PLATE",
            "ZA_ID_NUMBER",
            "ZA_PASSPORT",
            "ZA_DRIVER_LICENSE",
            "ZA_LICENSE_PLATE",
            "ZA_TRAFFIC_REGISTER_NUMBER",
            "ZA_INCOME_TAX_NUMBER",
            "ZA_VAT_NUMBER",
            "ZA_COMPANY_REGISTRATION",
        ),
        S.ACCOUNT_ID,
    ),
    # clinical content (Presidio's medical NER): sensitive, no surrogate kind of its own
    **dict.fromkeys(
        (
            "MEDICAL_BIOLOGICAL_ATTRIBUTE",
            "MEDICAL_BIOLOGICAL_STRUCTURE",
            "MEDICAL_CLINICAL_EVENT",
            "MEDICAL_DISEASE_DISORDER",
            "MEDICAL_FAMILY_HISTORY",
            "MEDICAL_HISTORY",
            "MEDICAL_MEDICATION",
            "MEDICAL_THERAPEUTIC_PROCEDURE",
        ),
        S.SURPRISE,
    ),
    # Presidio's UUID entity shares its name with CredData's category, which maps it to SECRET (below).
}

# CredData categories: the names of the CredSweeper rules that found a line (CredData's meta `Category`,
# one name or several joined by ":", see map_label), including names of retired rules that older meta
# files still carry, and the eight categories of CredData's first release (Generic Secret, Private Key,
# ...). Every rule of the CredSweeper release the project ships is here (a test checks).
# A credential value is a PRIVATE_KEY (key material), PASSWORD (a password rule or keyword), API_KEY
# (a token or key to a service, including key ids CredData counts as credentials, like the project's
# own aws_key rule does), CONNECTION_STRING (the credential inside a URL) or SECRET (any other secret
# value: generic secrets, seeds, salts, nonces, 2FA secrets); a resource name is ACCOUNT_ID.
CREDDATA_PARTS = {
    **dict.fromkeys(
        (
            "PEM Private Key",
            "BASE64 encoded PEM Private Key",
            "BASE64 Private Key",
            "JWK",
            "JSON Web Key",
            "PASERK Keys",
            "Age Secret Key",
            "NKEY Seed",  # a NATS NKey seed is the private key it derives from
            "Certificate",  # retired rule: certificate and key files
            "Private Key",  # CredData's first release: eight categories instead of rule names
        ),
        S.PRIVATE_KEY,
    ),
    **dict.fromkeys(
        (
            "Password",
            "SQL Password",
            "CMD Password",
            "CMD ConvertTo-SecureString",
            "CURL User Password",
            "CURL Options",
            "Bitbucket App Password",
            "Basic Authorization",
            "Credential",
            "DOC_CREDENTIALS",
            "PASSWD_PAIR",
            "ID_PASSWD_PAIR",
            "ID_PAIR_PASSWD_PAIR",
            "IP_ID_PASSWORD_TRIPLE",
        ),
        S.PASSWORD,
    ),
    **dict.fromkeys(
        (
            "API",
            "Key",
            "Token",
            "Auth",
            "CMD Token",
            "Bearer Authorization",
            "NTLM Token",
            "JSON Web Token",
            "PASETO Token",
            "Slack Token",
            "Slack Webhook",
            "Discord Webhook",
            "AWS Client ID",
            "AWS Multi",
            "AWS MWS Key",
            "AWS AppSync GraphQL API Key",
            "Amazon Bedrock API Key",
            "Alibaba Access Key ID",
            "Alibaba Multi",
            "Akamai Credentials",
            "Azure Access Token",
            "Azure Storage Account Key",
            "Google API Key",
            "Google Multi",
            "Google OAuth Access Token",
            "Google OAuth Refresh Token",
            "Facebook Access Token",
            "Facebook App Token",
            "Instagram Access Token",
            "X App-Only Authentication Bearer Token",
            "Github App Installation Token",
            "Github Classic Token",
            "Github Fine-granted Token",
            "Github Old Token",
            "Gitlab Prefix Token",
            "Gitlab Feed Token",
            "Gitlab Incoming Email Token",
            "Bitbucket Repository Access Token",
            "Bitbucket HTTP Access Token",
            "Bitbucket Client ID",
            "Jira / Confluence PAT token",
            "Atlassian PAT token",
            "Atlassian Old PAT token",
            "Jfrog Token",
            "CircleCI Personal API Token",
            "Clojars Deploy Token",
            "NuGet API key",
            "NPM Token",
            "PyPi API Token",
            "RubyGems API Key",
            "Docker Access Token",
            "Docker Swarm Token",
            "Digital Ocean Token",
            "Dropbox OAuth2 API Access Token",
            "Dynatrace API Token",
            "Doppler API Key",
            "Defined Networking API Key",
            "Grafana Provisioned API Key",
            "Grafana Access Policy Token",
            "Grafana Service Account Token",
            "Hashicorp Vault Token",
            "Hashicorp Terraform Token",
            "Heroku Credentials",
            "MailChimp API Key",
            "MailGun API Key",
            "SendGrid API Key",
            "Brevo API Key",
            "PayPal Braintree Access Token",
            "Picatic API Key",
            "Stripe Credentials",
            "Square Access Token",
            "Square Credentials",
            "Shopify Token",
            "Twilio Credentials",
            "Twilio Multi",
            "Telegram Bot API Token",
            "Discord Bot Token",
            "Tencent WeChat API App ID",
            "PlanetScale Credentials",
            "NewRelic Credentials",
            "Linear API Key",
            "CloudFlare API Token",
            "Airtable API Key",
            "OpenAI Token",
            "OpenRouter API Key",
            "Anthropic API Key",
            "Groq API Key",
            "X AI API Key",
            "DeepSeek API Key",
            "Perplexity API Key",
            "Together AI API Key",
            "LLAMA API Key",
            "Tavily API Key",
            "Hugging Face User Access Token",
            "Composio Credentials",
            "Notion Integration Token",
            "Tailscale Credentials",
            "Contentful Credentials",
            "Pulumi Personal Access Token",
            "Figma Personal Access Token",
            "1Password Account Token",
            "SonarQube Credentials",
            "Sentry Organization Auth Token",
            "Sentry User Auth Token",
            "Nylas API Key",
            "WakaTime API Key",
            "Riot Games API Key",
            "SourceGraph Credentials",
            "Typeform API Personal Token",
            "Vercel Token",
            "Netlify Token",
            "PostHog Credentials",
            "Databricks Access Token",
            "WunderGraph API Key",
            "Supabase Credentials",
            "Salesforce Credentials",
            "Postman Credentials",
            "Generic Token",
            "Predefined Pattern",  # a vendor key or token found by its regex (Google API key, AWS key id, JWT)
            "Authentication Key & Token",
        ),
        S.API_KEY,
    ),
    "URL Credentials": S.CONNECTION_STRING,
    **dict.fromkeys(
        (
            "Secret",
            "CMD Secret",
            "SECRET_PAIR",
            "DOC_GET",  # a secret-looking default in a get()/getenv() call
            "Dropbox App secret",
            "Dropbox API secret (long term)",
            "Google OAuth Secret",
            "Azure Secret Value",
            "Bitbucket Client Secret",
            "OTP / 2FA Secret",
            "Jira 2FA",
            "Docker Swarm Key",  # the swarm's unlock key
            "Product Activation Key",
            "Salt",
            "Nonce",
            "Seed",
            "UUID",
            "Other",  # CredData's category for credentials no other covers
            "Generic Secret",
            "Seed, Salt, Nonce",
            "SeedSalt",  # the first release's VariableNameType
        ),
        S.SECRET,
    ),
    # Resource names CredData counts as findings: a bucket or project host names the account's resources.
    "AWS S3 Bucket": S.ACCOUNT_ID,
    "Firebase Domain": S.ACCOUNT_ID,
}

DEFAULT_LABEL_MAP: dict[str, str] = {**TAB_LABELS, **PRESIDIO_LABELS, **CREDDATA_PARTS}

# A CredData value several rules found ("Auth:Password", "Key:Secret") takes the most specific credential
# label among its parts: key material over a password over the credential part of a URL over a service
# key or token over a generic secret, and any credential over a non-credential label (among those, the
# first part). The parts' order carries no meaning (CredData writes both "Secret:Token" and
# "Token:Secret" for the same `token_secret: '...'` line), so the first part must not decide:
# `MYSQL_PASSWORD=...` is "Dropbox App secret:Password" and `auth_password="..."` is "Auth:Password".
COMPOUND_PRECEDENCE = (S.PRIVATE_KEY, S.PASSWORD, S.CONNECTION_STRING, S.API_KEY, S.SECRET)
COMPOUND_SEPARATOR = ":"


class UnknownLabelError(ValueError):
    """A label neither the convention nor the label map knows."""


class LabelMapError(ValueError):
    """A label-map file that cannot be used; the message names the file and the key."""


def known_labels(label_map: Mapping[str, str] | None = None) -> list[str]:
    return sorted(CONVENTION_LABELS | set(label_map if label_map is not None else DEFAULT_LABEL_MAP))


def map_label(label: str, label_map: Mapping[str, str] | None = None) -> str:
    """The convention label for ``label``: itself if the convention knows it, else the map's entry; a name
    the map lacks made of ``:``-joined parts it knows (CredData's multi-rule categories) maps by its parts
    (see COMPOUND_PRECEDENCE). Raises UnknownLabelError, also when any one part is unknown."""
    table = DEFAULT_LABEL_MAP if label_map is None else label_map
    if label in CONVENTION_LABELS:
        return label
    if label in table:
        return _checked(label, table[label])
    parts = _parts(label)
    if len(parts) < 2 or _unknown_parts(parts, table):
        raise UnknownLabelError(label)
    mapped = [part if part in CONVENTION_LABELS else _checked(label, table[part]) for part in parts]
    return min(mapped, key=_specificity)  # min keeps the first of equals: the first part among non-credentials


def _parts(label: str) -> list[str]:
    return [part.strip() for part in label.split(COMPOUND_SEPARATOR)]


def _unknown_parts(parts: list[str], table: Mapping[str, str]) -> list[str]:
    return [part for part in parts if part not in CONVENTION_LABELS and part not in table]


def _specificity(label: str) -> int:
    return COMPOUND_PRECEDENCE.index(label) if label in COMPOUND_PRECEDENCE else len(COMPOUND_PRECEDENCE)


def _checked(label: str, target: str) -> str:
    if target not in CONVENTION_LABELS:
        raise UnknownLabelError(f"{label} (mapped to {target!r}, which the convention does not know)")
    return target


def unknown_label_message(label: str, where: str, label_map: Mapping[str, str] | None = None) -> str:
    """The error for a label nothing maps: where it is, what is unknown in it, the known labels (the
    convention's by name, the map's source names by count and the closest ones) and what to do."""
    table = DEFAULT_LABEL_MAP if label_map is None else label_map
    parts = _parts(label)
    unknown = _unknown_parts(parts, table) if len(parts) > 1 else [label]
    what = ""
    if len(parts) > 1 and unknown:
        what = f" (unknown part{'s' if len(unknown) > 1 else ''}: {', '.join(map(repr, unknown))})"
    sources = sorted(set(table) - CONVENTION_LABELS)
    close = difflib.get_close_matches(unknown[0], sources, n=3, cutoff=0.6) if unknown else []
    hint = f"; closest: {', '.join(close)}" if close else ""
    return (
        f"{where}: unknown label {label!r}{what}; known labels: {', '.join(sorted(CONVENTION_LABELS))} and the "
        f"label map's {len(sources)} source names (TAB, presidio-research, CredData{hint}) "
        "(map it in a label-map YAML file, `curation eval --label-map` or config `label_map`, or fix the file)"
    )


def load_label_map(path: Path | str) -> dict[str, str]:
    """The default label map with a user's YAML mapping (source label -> convention label) on top; raises
    LabelMapError naming the file and the key that is wrong."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LabelMapError(f"{path}: label map file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelMapError(f"{path}: cannot read the label map ({exc})") from None
    except yaml.YAMLError as exc:
        raise LabelMapError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise LabelMapError(f"{path}: must be a non-empty mapping of source label -> convention label")
    allowed = ", ".join(sorted(CONVENTION_LABELS))
    user: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(key, str) or not key.strip():
            raise LabelMapError(f"{path}: key {key!r}: a source label must be a non-empty string")
        if key in CONVENTION_LABELS:
            raise LabelMapError(f"{path}: key {key!r}: is a convention label already and maps to itself")
        if value not in CONVENTION_LABELS:
            raise LabelMapError(f"{path}: key {key!r}: {value!r} is not a convention label (allowed: {allowed})")
        user[key] = value
    return {**DEFAULT_LABEL_MAP, **user}
