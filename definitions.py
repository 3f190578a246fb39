"""The one place the Dagster Definitions are assembled: assets, checks, jobs, sensors and resources."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import dagster as dg

from assets import ALL_ASSETS, EVALUATION_ASSETS
from assets._common import DELIVERY_BATCHES
from automation import ALL_JOBS, ALL_SCHEDULES, ALL_SENSORS
from automation.run_recovery import reclaim_dead_runs
from checks import ALL_CHECKS
from resources import build_resources

defs = dg.Definitions(
    assets=[*ALL_ASSETS, *EVALUATION_ASSETS],
    asset_checks=ALL_CHECKS,
    jobs=ALL_JOBS,
    schedules=ALL_SCHEDULES,
    sensors=ALL_SENSORS,
    resources=build_resources(),
)


def run_curation(settings, log_level: str = "INFO", instance=None, tags: dict[str, str] | None = None):
    """Execute `curation_job` in-process for the configured batch (what `curation run` calls); a persistent
    instance when DAGSTER_HOME is set, so the run shows up in the UI."""
    if instance is None:
        persistent = bool(os.environ.get("DAGSTER_HOME"))
        instance = dg.DagsterInstance.get() if persistent else dg.DagsterInstance.ephemeral()
    reclaim_dead_runs(instance)  # a killed earlier run must not hold the model pool slot forever
    batch_id = settings.load().batch_id
    if not instance.has_dynamic_partition(DELIVERY_BATCHES.name, batch_id):
        instance.add_dynamic_partitions(DELIVERY_BATCHES.name, [batch_id])
    return defs.resolve_job_def("curation_job").execute_in_process(
        instance=instance,
        resources=build_resources(settings),
        partition_key=batch_id,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
        tags=tags or {},
    )
