"""Dagster resources: typed handles on the warehouse, the reference model, detectors and the vault.

Heavy objects (the model, Presidio) are built once per process and shared by every asset of a run.
"""

import functools
import logging
import os

import dagster as dg
from pydantic import PrivateAttr

from curation.core.config import CurationConfig, load_config
from curation.core.warehouse import Warehouse
from curation.score.scorer import ReferenceScorer, ScoringConfig

PARTITION_TAG = "dagster/partition"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")


class CurationSettings(dg.ConfigurableResource):
    """Where the run's YAML config lives, plus overrides of its top-level paths."""

    config_path: str | None = None
    base_dir: str | None = None
    input: str | None = None
    batch_id: str | None = None
    domain: str | None = None
    language: str | None = None

    # The config of the run's delivery batch, resolved once when the run starts (`setup_for_execution`).
    _batch_config: CurationConfig | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """A partitioned run reads its batch's registered source (`curation.batches`), wherever it was
        launched from: the CLI, the inbox sensor, a re-execution or a new launch in the UI."""
        run = context.dagster_run
        self.for_partition(run.tags.get(PARTITION_TAG) if run is not None else None)

    def for_partition(self, key: str | None) -> CurationConfig:
        """The config of delivery batch `key` (the configured one when None): the one place a partition's
        config is resolved, once per run and then reused by every asset and check of it."""
        from curation.batches import resolve

        if not key:
            return self.load()
        if self._batch_config is None or self._batch_config.batch_id != key:
            self._batch_config = resolve(self._configured(), key)
        return self._batch_config

    def _configured(self) -> CurationConfig:
        return load_config(
            self.config_path,
            base_dir=self.base_dir,
            input=self.input,
            batch_id=self.batch_id,
            domain=self.domain,
            language=self.language,
        )

    def load(self) -> CurationConfig:
        return self._batch_config or self._configured()

    def warehouse(self) -> Warehouse:
        return Warehouse(self.load().warehouse_path)


@functools.lru_cache(maxsize=4)
def _scorer(config: ScoringConfig) -> ReferenceScorer:
    return ReferenceScorer(config)  # weights load on first use: a fully cached re-run never loads them


class ReferenceModel(dg.ConfigurableResource):
    """The public causal LM that scores every token (loaded once per process)."""

    settings: CurationSettings

    def scorer(self) -> ReferenceScorer:
        return _scorer(self.settings.load().scoring)


class Detectors(dg.ConfigurableResource):
    """Presidio + credential patterns, configured from the run's detector settings."""

    settings: CurationSettings

    def suite(self):
        from curation.detect.suite import detector_suite

        return detector_suite(self.settings.load().detectors)


@functools.lru_cache(maxsize=8)
def _note_dev_key(key_id: str) -> None:
    logging.getLogger("curation").info("using a generated DEV HMAC key %s: not for real deliveries", key_id)


class KeyVault(dg.ConfigurableResource):
    """The HMAC key (from an env var or key file) and the vault file holding the surrogate map."""

    settings: CurationSettings

    def key(self):
        from curation.views.vault import configured_key

        info = configured_key(self.settings.load())
        if info.is_dev:  # once per process, in the run log (the CLI and the card say it to the user)
            _note_dev_key(info.key_id)
        return info

    def engine(self):
        from curation.core.languages import get_language
        from curation.views.convention import load_convention
        from curation.views.surrogates import SurrogateEngine

        info = self.key()
        config = self.settings.load()
        convention = load_convention(config.surrogates.convention)
        language = get_language(config.detectors.language or "en")
        return SurrogateEngine(
            info.key,
            convention,
            info.key_id,
            name_locales=language.name_locales,
            day_first_dates=language.day_first_dates,
        )

    def open_vault(self):
        from curation.views.vault import Vault

        return Vault(self.settings.load().vault_path)


def build_resources(settings: CurationSettings | None = None) -> dict:
    if settings is None:
        # Set at launch (run config `resources.settings.config`): a run records where its batch's config came
        # from, and the nested resources below resolve to this same instance (with its batch resolved).
        config_path = os.environ.get("CURATION_CONFIG") or None
        settings = CurationSettings.configure_at_launch(**({"config_path": config_path} if config_path else {}))
    return {
        "settings": settings,
        "reference_model": ReferenceModel(settings=settings),
        "detectors": Detectors(settings=settings),
        "key_vault": KeyVault(settings=settings),
    }
