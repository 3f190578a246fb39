"""Dagster resources: typed handles on the warehouse, the reference model, detectors and the vault.

Heavy objects (the model, Presidio) are built once per process and shared by every asset of a run.
"""

from __future__ import annotations

import functools
import os
import warnings

import dagster as dg

from curation.config import CurationConfig, load_config
from curation.scoring import ReferenceScorer, ScoringConfig
from curation.warehouse import Warehouse

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")


class CurationSettings(dg.ConfigurableResource):
    """Where the run's YAML config lives, plus overrides of its top-level paths."""

    config_path: str | None = None
    base_dir: str | None = None
    input: str | None = None
    batch_id: str | None = None

    def load(self) -> CurationConfig:
        return load_config(self.config_path, base_dir=self.base_dir, input=self.input, batch_id=self.batch_id)

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
        from curation.pipeline import detector_suite

        return detector_suite(self.settings.load().detectors)


class KeyVault(dg.ConfigurableResource):
    """The HMAC key (from an env var or key file) and the vault file holding the surrogate map."""

    settings: CurationSettings

    def key(self):
        from curation.vault import configured_key

        info = configured_key(self.settings.load())
        if info.is_dev:
            warnings.warn("using a generated DEV HMAC key: not for real deliveries", stacklevel=2)
        return info

    def engine(self):
        from curation.convention import load_convention
        from curation.surrogates import SurrogateEngine

        info = self.key()
        convention = load_convention(self.settings.load().surrogates.convention)
        return SurrogateEngine(info.key, convention, info.key_id)

    def open_vault(self):
        from curation.vault import Vault

        return Vault(self.settings.load().vault_path)


def build_resources(settings: CurationSettings | None = None) -> dict:
    settings = settings or CurationSettings(config_path=os.environ.get("CURATION_CONFIG") or None)
    return {
        "settings": settings,
        "reference_model": ReferenceModel(settings=settings),
        "detectors": Detectors(settings=settings),
        "key_vault": KeyVault(settings=settings),
    }
