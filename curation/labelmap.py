"""Label maps: the label names a labeled set brings, mapped onto the redaction convention's labels.

Public labeled sets name their categories their own way (TAB: DATETIME, ORG, LOC, DEM, CODE;
CredData: Password, API:Token, ...; presidio-research: GPE, ZIP_CODE, ...). A label map turns
those names into the convention's labels when the set is loaded, so every gold span (and every
span a tagger learns from them) carries a label the surrogate stage knows. A label that neither
the convention nor the map knows is an error that names it: it never reaches a release as a
literal tag.
"""

from __future__ import annotations

from collections.abc import Mapping

from curation import spans as S
from curation.convention import KNOWN_LABELS

CONVENTION_LABELS = frozenset(KNOWN_LABELS)

# Text Anonymization Benchmark (court text) categories.
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

# presidio-research generator entity types the convention names differently.
PRESIDIO_LABELS = {
    "GPE": S.LOCATION,
    "ZIP_CODE": S.STREET_ADDRESS,
    "AGE": S.SURPRISE,
    "DOMAIN_NAME": S.URL,
    "US_DRIVER_LICENSE": S.ACCOUNT_ID,
    "US_PASSPORT": S.ACCOUNT_ID,
    "US_BANK_NUMBER": S.ACCOUNT_ID,
    "US_ITIN": S.US_SSN,
    "LOC": S.LOCATION,
    "ORG": S.ORGANIZATION,
    "PER": S.PERSON,
}

# CredData categories (single or ``A:B`` compound names): the first part decides.
CREDDATA_PARTS = {
    "Password": S.PASSWORD,
    "SQL Password": S.PASSWORD,
    "Dropbox App secret": S.SECRET,
    "Token": S.API_KEY,
    "API": S.API_KEY,
    "Key": S.API_KEY,
    "Auth": S.API_KEY,
    "Slack Token": S.API_KEY,
    "JSON Web Token": S.API_KEY,
    "Basic Authorization": S.PASSWORD,
    "Credential": S.PASSWORD,
    "Secret": S.SECRET,
    "OTP / 2FA Secret": S.SECRET,
    "Salt": S.SECRET,
    "Nonce": S.SECRET,
    "JWK": S.PRIVATE_KEY,
    "PEM Private Key": S.PRIVATE_KEY,
    "BASE64 Private Key": S.PRIVATE_KEY,
    "URL Credentials": S.CONNECTION_STRING,
    "AWS S3 Bucket": S.ACCOUNT_ID,
    "UUID": S.SECRET,
}

DEFAULT_LABEL_MAP: dict[str, str] = {**TAB_LABELS, **PRESIDIO_LABELS, **CREDDATA_PARTS}


class UnknownLabelError(ValueError):
    """A label neither the convention nor the label map knows."""


def known_labels(label_map: Mapping[str, str] | None = None) -> list[str]:
    return sorted(CONVENTION_LABELS | set(label_map if label_map is not None else DEFAULT_LABEL_MAP))


def map_label(label: str, label_map: Mapping[str, str] | None = None) -> str:
    """The convention label for ``label``: itself if the convention knows it, else the map's entry
    (compound CredData names ``A:B`` by their first known part); raises UnknownLabelError."""
    table = DEFAULT_LABEL_MAP if label_map is None else label_map
    if label in CONVENTION_LABELS:
        return label
    if label in table:
        return _checked(label, table[label])
    for part in label.split(":"):
        part = part.strip()
        if part in CONVENTION_LABELS:
            return part
        if part in table:
            return _checked(label, table[part])
    raise UnknownLabelError(label)


def _checked(label: str, target: str) -> str:
    if target not in CONVENTION_LABELS:
        raise UnknownLabelError(f"{label} (mapped to {target!r}, which the convention does not know)")
    return target


def unknown_label_message(label: str, where: str, label_map: Mapping[str, str] | None = None) -> str:
    return (
        f"{where}: unknown label {label!r}; known labels: {', '.join(known_labels(label_map))} "
        "(add it to the label map or fix the file)"
    )
