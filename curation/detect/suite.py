"""The detector suite: configuration, every detector behind one ``detect`` call, provenance versions."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from curation.core.casing import CASE_VIEW_VERSION
from curation.core.config import CurationConfig, DetectorSettings
from curation.core.languages import DEFAULT_LANGUAGE, get_language, ner_model_installed
from curation.core.spans import CREDIT_CARD, SECRET, Span, subtract
from curation.core.textnorm import for_matching
from curation.detect.addresses import _find_addresses, _find_recipients
from curation.detect.base import CODE_KINDS, Rule
from curation.detect.credentials import CREDENTIAL_RULES
from curation.detect.credsweeper import CredSweeperDetector
from curation.detect.language_rules import LANGUAGE_RULES
from curation.detect.nrp import _find_nrp
from curation.detect.pii_patterns import PII_RULES, _card_context, _PhoneFinder
from curation.detect.presidio import (
    PRESIDIO_RECOGNIZERS,
    _package_version,
    _spacy_model_version,
    load_analyzer,
    presidio_spans,
)
from curation.detect.resolution import _literal_pattern, _trim, resolve, split_lines
from curation.detect.titles import _find_titles

log = logging.getLogger(__name__)

# Bump whenever a rule, mapping or default threshold changes: it goes into the dataset card.
RULESET_VERSION = "2026.12-5"

# Detector families by what they detect: rule names (``Rule.name``) and the finders without a Rule
# (street_address, address_block, nrp, job_title, phone).  Presidio recognizers are families of their
# own, by class name (PRESIDIO_RECOGNIZERS).  ``DetectorConfig.excluded_families`` switches families off
# for measurement (scripts/ablate_detectors.py, docs/detector-ablation.md).
RULE_FAMILIES: dict[str, frozenset[str]] = {
    name: frozenset(members.split())
    for name, members in {
        # credentials
        "pem_private_key": "private_key",
        "vendor_tokens": "aws_key github_token gitlab_token slack_token slack_webhook stripe_key google_api_key "
        "google_oauth openai_key sendgrid_key hf_token npm_token pypi_token twilio_key mailgun_key shopify_token "
        "digitalocean_token telegram_bot_token discord_token",
        "jwt": "jwt",
        "connection_strings": "url_credentials url_query_credentials kv_connection_string",
        "auth_headers": "auth_header",
        "query_values": "query_secret query_username query_phone",
        "password_assignments": "password_assignment password_env cli_password",
        "key_assignments": "key_assignment key_env env_key_variable",
        "secret_assignments": "secret_assignment secret_env",
        "usernames": "username_assignment stated_username cli_user todo_user home_path_user",
        "hostnames": "host_assignment",
        # PII patterns
        "email": "email",
        "url_encoded_email": "url_encoded_email",
        "credit_card": "credit_card",
        "iban": "iban",
        "ip_address": "ipv4 ipv6",
        "us_ssn": "us_ssn",
        "url": "url profile_url",
        "account_ids": "prefixed_id generic_prefixed_id labeled_id",
        "dates": "datetime",
        "ages": "age",
        "introduced_person": "introduced_person",
        "initialed_person": "initialed_person",
        "firm_names": "firm_name",
        "street_addresses": "street_address",
        "recipient_blocks": "address_block",
        "nrp": "nrp",
        "job_titles": "job_title",
        "phones": "phone",
        # one language's conventions (curation/detect/language_rules.py)
        "es_ids": "es_dni es_labeled_id",
        "es_ages": "es_age",
        "es_postal_codes": "es_postal_code",
    }.items()
}


@dataclass
class DetectorConfig:
    """Thresholds, exact-value lists and switches for :class:`DetectorSuite`.

    ``deny_list`` values are always flagged (as ``deny_label``); ``allow_list`` values are never flagged.
    Both hold sensitive strings, so ``repr`` shows only their sizes.
    """

    score_threshold: float = 0.5
    entity_thresholds: dict[str, float] = field(default_factory=dict)  # e.g. {ORGANIZATION: 0.9}
    deny_list: list[str] = field(default_factory=list, repr=False)
    allow_list: list[str] = field(default_factory=list, repr=False)
    deny_label: str = SECRET
    use_presidio: bool = True
    use_credentials: bool = True
    use_credsweeper: bool = False
    spacy_model: str = "en_core_web_sm"
    language: str = "en"
    batch_size: int = 32
    chunk_chars: int = 50_000
    phone_regions: tuple[str, ...] = ("US", "GB", "DE", "FR", "IT", "ES", "NL", "AU", "CA", "IN", "BR", "SE")
    # Measurement only (scripts/ablate_detectors.py; not a run setting): names of RULE_FAMILIES and of
    # PRESIDIO_RECOGNIZERS that do not run.
    excluded_families: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={getattr(self, k)!r}"
            for k in (
                "score_threshold",
                "entity_thresholds",
                "deny_label",
                "use_presidio",
                "use_credentials",
                "use_credsweeper",
                "spacy_model",
                "language",
                "batch_size",
            )
        )
        return f"DetectorConfig({shown}, deny_list=<{len(self.deny_list)} values>, " + (
            f"allow_list=<{len(self.allow_list)} values>)"
        )

    def threshold_for(self, label: str) -> float:
        return self.entity_thresholds.get(label, self.score_threshold)


class DetectorSuite:
    """All detectors behind one ``detect`` call; heavy engines load lazily, once, on first use."""

    def __init__(self, config: DetectorConfig | None = None) -> None:
        self.config = config or DetectorConfig()
        self._analyzer: Any = None
        self._batch: Any = None
        self._model_name: str | None = None
        self._credsweeper: Any = None
        self._phones = _PhoneFinder(self.config.phone_regions)
        self._deny = _literal_pattern(self.config.deny_list)
        self._allow = _literal_pattern(self.config.allow_list)
        unknown = set(self.config.excluded_families) - set(RULE_FAMILIES) - PRESIDIO_RECOGNIZERS
        if unknown:
            raise ValueError(f"unknown detector families {sorted(unknown)}")
        self._off: frozenset[str] = frozenset().union(
            *(RULE_FAMILIES[f] for f in self.config.excluded_families if f in RULE_FAMILIES)
        )
        # Presidio with no recognizer left would load all its predefined ones: it does not run instead
        self._recognizers = PRESIDIO_RECOGNIZERS - self.config.excluded_families
        rules = PII_RULES + LANGUAGE_RULES + (CREDENTIAL_RULES if self.config.use_credentials else ())
        self._rules: tuple[Rule, ...] = tuple(
            r for r in rules if r.name not in self._off and (r.languages is None or self.config.language in r.languages)
        )

    def __repr__(self) -> str:
        return f"DetectorSuite({self.config!r}, presidio_loaded={self._analyzer is not None})"

    # --- engines -------------------------------------------------------------------------------------
    def _ensure_presidio(self) -> Any:
        if self._batch is None:
            self._analyzer, self._batch, self._model_name = load_analyzer(
                self.config.spacy_model, self.config.language, self._recognizers
            )
        return self._batch

    def _ensure_credsweeper(self) -> CredSweeperDetector:
        if self._credsweeper is None:
            self._credsweeper = CredSweeperDetector()
        return self._credsweeper

    # --- detection -----------------------------------------------------------------------------------
    def detect(self, texts: Sequence[str], kinds: Sequence[str] | None = None) -> list[list[Span]]:
        """Spans per text.  ``kinds`` (per text, e.g. "text", "code", "config", "log") skips NER on code.

        Every detector reads the matching view of the text (``curation.core.textnorm``: zero-width and other
        invisible characters dropped, look-alike letters folded), and the spans come back in the original's
        offsets, so "dana<U+200B>@example.org" or a Cyrillic-"а" email is found like the plain one."""
        views = [for_matching(text) for text in texts]
        found = self._detect([view.text for view in views], kinds)
        return [view.original_spans(spans) for view, spans in zip(views, found, strict=True)]

    def _detect(self, texts: Sequence[str], kinds: Sequence[str] | None = None) -> list[list[Span]]:
        texts = list(texts)
        if kinds is not None and len(kinds) != len(texts):
            raise ValueError(f"kinds has {len(kinds)} entries for {len(texts)} texts")
        kinds_list = list(kinds) if kinds is not None else ["text"] * len(texts)
        run_presidio = self.config.use_presidio and self._recognizers
        presidio = self._presidio_spans(texts, kinds_list) if run_presidio else [[] for _ in texts]
        secrets: list[list[Span]] = [[] for _ in texts]
        if self.config.use_credsweeper:
            secrets = self._ensure_credsweeper().find_many(texts)
        out = []
        for text, kind, pres, found in zip(texts, kinds_list, presidio, secrets, strict=True):
            candidates = list(pres)
            candidates.extend(self._rule_spans(text, kind))
            candidates.extend(found)
            out.append(self._finish(text, candidates))
        log.debug("detected %d spans in %d texts", sum(map(len, out)), len(out))
        return out

    def _rule_spans(self, text: str, kind: str) -> list[Span]:
        code = kind in CODE_KINDS
        found: list[Span] = []
        for rule in self._rules:
            if not (code and rule.prose_only):
                found.extend(rule.find(text))
        if code:
            found = [s for s in found if s.label != CREDIT_CARD or _card_context(text, s)]
        else:
            off = self._off
            addresses = [] if "street_address" in off else list(_find_addresses(text))
            found.extend(addresses)
            found.extend(() if "address_block" in off else _find_recipients(text, addresses))
            found.extend(() if "nrp" in off else _find_nrp(text))
            found.extend(() if "job_title" in off else _find_titles(text))
        if "phone" not in self._off:
            found.extend(self._phones.find(text, need_context=code))
        return [s for s in found if (s.score or 0.0) >= self.config.threshold_for(s.label)]

    def _finish(self, text: str, candidates: list[Span]) -> list[Span]:
        """Allow-list holes first (cutting through detections), then deny-list hits, then overlap resolution.

        A value on both lists is flagged: the deny list is the explicit, safer instruction.
        """
        if self._allow is not None:
            holes = [Span(m.start(), m.end()) for m in self._allow.finditer(text)]
            if holes:
                kept: list[Span] = []
                for cand in candidates:
                    if not any(cand.overlaps(h) for h in holes):
                        kept.append(cand)
                        continue
                    for piece in subtract([cand], holes):
                        cut = _trim(text, piece, left=piece.start != cand.start, right=piece.end != cand.end)
                        if cut is not None:
                            kept.append(cut)
                candidates = kept
        if self._deny is not None:
            candidates.extend(
                Span(m.start(), m.end(), self.config.deny_label, 1.0, "deny_list") for m in self._deny.finditer(text)
            )
        return split_lines(text, resolve(text, candidates))

    def _presidio_spans(self, texts: list[str], kinds: list[str]) -> list[list[Span]]:
        cfg = self.config
        return presidio_spans(
            self._ensure_presidio(),
            texts,
            kinds,
            language=cfg.language,
            batch_size=cfg.batch_size,
            chunk_chars=cfg.chunk_chars,
            score_threshold=min([cfg.score_threshold, *cfg.entity_thresholds.values()]),
            threshold_for=cfg.threshold_for,
        )

    # --- provenance ----------------------------------------------------------------------------------
    @property
    def versions(self) -> dict[str, str]:
        """Versions that determine detector output, for the dataset card."""
        out = {
            "ruleset": RULESET_VERSION,
            "presidio_analyzer": _package_version("presidio-analyzer"),
            "phonenumbers": _package_version("phonenumbers"),
            "spacy": _package_version("spacy"),
        }
        if self.config.language != DEFAULT_LANGUAGE:  # English results keep the keys they always had
            out["language"] = self.config.language
        if self.config.use_presidio:
            out["spacy_model"] = _spacy_model_version(self.config.spacy_model)
            out["case_view"] = CASE_VIEW_VERSION  # NER reads shouted lines true-cased
        if self.config.use_credsweeper:
            out["credsweeper"] = _package_version("credsweeper")
        if self.config.excluded_families:
            out["excluded_families"] = ",".join(sorted(self.config.excluded_families))
        return out


@functools.lru_cache(maxsize=4)
def suite_for_settings(settings) -> DetectorSuite:
    """The suite for a run's detector settings (``config.DetectorSettings``), once per process: a Dagster
    step and a Ray worker build the same one from the same settings (engines load lazily)."""
    kwargs: dict = {"deny_list": list(settings.deny_list), "allow_list": list(settings.allow_list)}
    if settings.score_threshold is not None:
        kwargs["score_threshold"] = settings.score_threshold
    if settings.use_credsweeper is not None:
        kwargs["use_credsweeper"] = settings.use_credsweeper
    return DetectorSuite(config_for_language(DetectorConfig(**kwargs), settings.language or DEFAULT_LANGUAGE))


def config_for_language(config: DetectorConfig, code: str) -> DetectorConfig:
    """``config`` for texts in language ``code``: its spaCy pipeline and rule families. A language whose
    pipeline is not installed runs without NER (the card says so); English without its model is an error."""
    language = get_language(code)
    if language.code == config.language and language.spacy_model == config.spacy_model:
        return config
    installed = ner_model_installed(language)
    return dataclasses.replace(
        config,
        language=language.code,
        spacy_model=language.spacy_model or config.spacy_model,
        use_presidio=config.use_presidio and (installed or language.code == DEFAULT_LANGUAGE),
    )


def detector_suite(settings: DetectorSettings) -> DetectorSuite:
    """The detector suite for a run's detector settings, once per process (engines load lazily)."""
    return suite_for_settings(settings)


def detector_key(config: CurationConfig, suite) -> str:
    """Identity of the detector results: rule/model versions plus the run's detector settings."""
    payload = json.dumps(
        {"versions": suite.versions, "settings": asdict(config.detectors)}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
