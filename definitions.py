"""The one place the Dagster Definitions are assembled: assets, checks, jobs and resources."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import dagster as dg

from assets import ALL_ASSETS
from checks import ALL_CHECKS
from resources import build_resources

# Materializes every stage; blocking checks run inside it, so a failed gate skips `release`.
curation_job = dg.define_asset_job(
    "curation_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Ingest -> score -> calibrate -> mask -> surrogates -> card -> gated release.",
)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    asset_checks=ALL_CHECKS,
    jobs=[curation_job],
    resources=build_resources(),
)


def run_curation(settings, log_level: str = "INFO"):
    """Execute `curation_job` in-process (what `curation run` calls); a persistent instance when
    DAGSTER_HOME is set, so the run shows up in the UI."""
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    return defs.resolve_job_def("curation_job").execute_in_process(
        instance=instance,
        resources=build_resources(settings),
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
    )
