"""PII and credential detection: Presidio (spaCy NER) plus local rules.

Presidio runs spaCy NER (names, places, organisations, nationalities and groups, dates); the local rules
cover the checksum-validated basics (cards, IBANs, IPs, SSNs) and what NER misses (emails, URLs, API
keys, tokens, private keys, connection strings, passwords in config, street addresses, phones in many
countries, prefixed ids, ages, usernames) and need no model, so they also run with Presidio off.  All
detectors emit :class:`curation.core.spans.Span`; overlaps are resolved into one non-overlapping list per text
(see :func:`resolve`).

    suite = DetectorSuite(DetectorConfig(deny_list=[...], allow_list=[...]))
    spans_per_text = suite.detect(texts, kinds)   # kinds: "text" | "chat" | "code" | "config" | "log"
    card_info = suite.versions

Nothing here logs or raises with document text in it: values only ever leave as offsets.

One module per family: ``validators`` (checksums, value shapes), ``credentials``, ``pii_patterns``,
``addresses``, ``nrp``, ``titles``, ``ner`` (NER cleaning), ``presidio``, ``credsweeper``, ``resolution``
(overlaps) and ``suite`` (configuration and the suite).  The submodules never import this package's
``__init__``; it only re-exports their names for callers.
"""

from curation.detect.addresses import _ORG_SUFFIX, _USPS_FULL
from curation.detect.base import CODE_KINDS, DetectorError, Rule
from curation.detect.credentials import CREDENTIAL_RULES
from curation.detect.credsweeper import CredSweeperDetector
from curation.detect.ner import _clean_ner, _trim_name_edges, _truecase
from curation.detect.nrp import _CASED_GROUPS, _DEMONYMS, _RELIGIOUS_POLITICAL
from curation.detect.pii_patterns import PII_RULES
from curation.detect.presidio import (
    NER_ENTITIES,
    PRESIDIO_RECOGNIZERS,
    PRESIDIO_TO_LABEL,
    SPACY_TO_PRESIDIO,
    _resolve_spacy_package,
)
from curation.detect.resolution import LINE_SPLIT_LABELS, resolve, split_lines
from curation.detect.suite import RULESET_VERSION, DetectorConfig, DetectorSuite
from curation.detect.titles import TITLE
from curation.detect.validators import PUBLIC_HOSTS, iban_ok, luhn_ok

__all__ = [
    "CODE_KINDS",
    "CREDENTIAL_RULES",
    "LINE_SPLIT_LABELS",
    "NER_ENTITIES",
    "PII_RULES",
    "PRESIDIO_RECOGNIZERS",
    "PRESIDIO_TO_LABEL",
    "PUBLIC_HOSTS",
    "RULESET_VERSION",
    "SPACY_TO_PRESIDIO",
    "TITLE",
    "_CASED_GROUPS",
    "_DEMONYMS",
    "_ORG_SUFFIX",
    "_RELIGIOUS_POLITICAL",
    "_USPS_FULL",
    "CredSweeperDetector",
    "DetectorConfig",
    "DetectorError",
    "DetectorSuite",
    "Rule",
    "_clean_ner",
    "_resolve_spacy_package",
    "_trim_name_edges",
    "_truecase",
    "iban_ok",
    "luhn_ok",
    "resolve",
    "split_lines",
]
