"""The one place the Dagster Definitions are assembled: assets, checks, jobs, sensors and resources."""

import contextlib
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import dagster as dg

from assets import ALL_ASSETS, EVALUATION_ASSETS
from assets._common import DELIVERY_BATCHES, DELIVERY_GROUP
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


WORKSPACE_FILE = Path(__file__).resolve().parent / "workspace.yaml"


def run_curation(settings, log_level: str = "INFO", instance=None, tags: dict[str, str] | None = None):
    """Run `curation_job` for the configured batch (what `curation run` calls).

    The batch's source goes into the batch registry, its partition into the instance, and the run is
    launched in the code location the UI serves (`workspace.yaml`), so it is in the job's history and can be
    re-executed or relaunched there. The instance is the persistent one when DAGSTER_HOME is set, else a
    temporary one for this call. A caller-supplied *ephemeral* instance (tests) cannot be shared with
    another process: the job then executes in this process, on the same partition and selection."""
    from curation.batches import register, source_for
    from curation.core.warehouse import Warehouse

    config = settings.load()
    register(Warehouse(config.warehouse_path), source_for(config, settings.config_path, origin="cli"))
    selection = batch_run_selection(config)
    run_config = {
        "loggers": {"console": {"config": {"log_level": log_level}}},
        # The run records where its batch's config comes from, so "Re-execute" in the UI reads the same.
        "resources": {"settings": {"config": settings_overrides(settings)}},
    }
    if instance is not None and instance.is_ephemeral:
        reclaim_dead_runs(instance)
        _add_partition(instance, config.batch_id)
        # Settings go in as run config (as for a launched run), not as resources: an asset subset of the job
        # keeps the resources bound in `defs`, and a second `settings` resource would conflict with them.
        return defs.resolve_job_def("curation_job").execute_in_process(
            instance=instance,
            partition_key=config.batch_id,
            asset_selection=selection,
            raise_on_error=False,
            run_config=run_config,
            tags=tags or {},
        )
    from automation.launch import launch_and_wait
    from curation.preflight import count_records_upto

    limit = config.sharding.in_process_max_docs
    records = count_records_upto(config.input_path, limit) if limit > 0 else None
    if records is not None and records <= limit:
        run_config["execution"] = {"config": {"in_process": True}}  # no fork server for a handful of documents
    with _instance_for_cli(instance) as active:
        reclaim_dead_runs(active)  # a killed earlier run must not hold the model pool slot forever
        _add_partition(active, config.batch_id)
        return launch_and_wait(
            active,
            WORKSPACE_FILE,
            "curation_job",
            partition_key=config.batch_id,
            run_config=run_config,
            tags=tags or {},
            asset_selection=selection,
            log_level=log_level,
        )


def settings_overrides(settings) -> dict:
    return {
        name: getattr(settings, name)
        for name in ("config_path", "base_dir", "input", "batch_id", "domain")
        if getattr(settings, name) is not None
    }


def batch_run_selection(config) -> list[dg.AssetKey] | None:
    """The delivery assets alone when the shared calibration is current for this config (its inputs
    unchanged), so a batch run does not re-materialize it; None (every asset of the job) otherwise."""
    from curation.batches import calibration_is_current
    from curation.core.warehouse import Warehouse
    from curation.detect.suite import detector_key, detector_suite
    from curation.score.scorer import ReferenceScorer

    model_key = ReferenceScorer(config.scoring).model_key
    detectors = detector_key(config, detector_suite(config.detectors))
    if not calibration_is_current(config, Warehouse(config.warehouse_path), model_key, detectors):
        return None
    return [key for asset in ALL_ASSETS for key, group in asset.group_names_by_key.items() if group == DELIVERY_GROUP]


def _add_partition(instance, batch_id: str) -> None:
    if not instance.has_dynamic_partition(DELIVERY_BATCHES.name, batch_id):
        instance.add_dynamic_partitions(DELIVERY_BATCHES.name, [batch_id])


def persistent_instance() -> dg.DagsterInstance:
    """DAGSTER_HOME's instance, built under a file lock in that folder. Building it creates its SQLite
    schema when the folder is new, and several `curation run` started at once on a new DAGSTER_HOME raced
    to create it ("table alembic_version already exists": the heavy four-batch test caught it)."""
    import fcntl

    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    with (home / ".curation-instance.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return dg.DagsterInstance.get()


@contextlib.contextmanager
def _instance_for_cli(instance):
    if instance is not None:
        yield instance
    elif os.environ.get("DAGSTER_HOME"):
        with persistent_instance() as persistent:
            yield persistent
    else:
        with tempfile.TemporaryDirectory(prefix="curation-dagster-") as home:
            Path(home, "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
            with dg.DagsterInstance.from_config(home) as temporary:
                yield temporary


def delivery_asset_names() -> list[str]:
    """Names of the pipeline's assets (not the evaluation group), in definition order."""
    return [key.to_user_string() for asset in ALL_ASSETS for key in asset.keys]


def materialize_for_batch(settings, selection: list[str], log_level: str = "INFO"):
    """Materialize some assets (with their checks, the evaluation group included) for the settings' batch
    partition, in-process, on the persistent instance when DAGSTER_HOME is set (what `curation canary` runs
    stage by stage)."""
    instance = persistent_instance() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    reclaim_dead_runs(instance, watch=False)  # a killed earlier run must not hold the model pool slot forever
    batch_id = settings.load().batch_id
    _add_partition(instance, batch_id)
    return dg.materialize(
        [*ALL_ASSETS, *EVALUATION_ASSETS, *ALL_CHECKS],
        selection=selection,
        instance=instance,
        resources=build_resources(settings),
        partition_key=batch_id,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
    )
