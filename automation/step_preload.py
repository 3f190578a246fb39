"""Imported once by the step executor's fork server (after `definitions`), so steps fork with the heavy
libraries already in memory instead of importing them each: measured here on top of `definitions`,
great_expectations 3.0 s (every contract check), presidio_analyzer + spaCy 5.3 s (detection, the
detector audit), torch 0.8 s and CredSweeper 1.2 s (scoring, tagging); and the classes the Dagster
instance is built from (its storages pull in SQLAlchemy and Alembic: ~300 modules, 0.4-0.7 s of every
step's ~1 s worker start, measured). Only imports: no model is loaded, no database is opened and no thread
is started before the fork. A library that is not installed is skipped (the step that needs
it reports that itself)."""

import importlib
import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

PRELOADED = (
    "torch", "transformers", "great_expectations", "spacy", "presidio_analyzer", "credsweeper",
    "upath", "dotenv",  # the compute log manager's
)  # fmt: skip

# A run started by `curation run` validates its contracts in the CLI's contract server
# (`curation.gates.contract_worker`): its steps never import great_expectations, so neither does the server.
from curation.gates.contracts import CONTRACT_SOCKET_ENV  # noqa: E402  (polars only: definitions has it)

_SKIPPED = {"great_expectations"} if os.environ.get(CONTRACT_SOCKET_ENV) else set()

for _name in PRELOADED:
    if _name in _SKIPPED:
        continue
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(_name)
    except ImportError:
        pass


def _preload_instance_classes() -> None:
    """Import (never instantiate) every class the instance in DAGSTER_HOME is configured with."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        return
    from dagster._core.instance.ref import InstanceRef
    from dagster._serdes import ConfigurableClassData

    ref = InstanceRef.from_dir(home)
    for name in ref._fields:
        data = getattr(ref, name)
        if isinstance(data, ConfigurableClassData):
            getattr(importlib.import_module(data.module_name), data.class_name, None)


try:
    _preload_instance_classes()
except Exception:  # an optimisation only: the step builds its instance (and reports problems) itself
    pass
