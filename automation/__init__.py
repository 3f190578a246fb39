"""Jobs, the inbox sensor and the recalibration schedule: how deliveries run without a person at the keyboard.

- `curation_job`: every asset for one delivery batch (a partition). Calibration assets run in it too but
  reuse the stored calibration when its inputs are unchanged, so a batch never runs on missing thresholds.
- `calibration_job`: validation data -> scores -> detector spans -> thresholds; the schedule re-runs it so
  new labeled data (or a new model / detector version) reaches the thresholds.
- `inbox_sensor`: one partition, one batch-registry entry and one run per new, complete batch in the inbox.
- `default_automation_condition_sensor`: releases a batch once its blocking gates pass (on by default).
- `dead_run_sensor`: runs whose process is gone are marked failed and give back their pool slots.
"""

import time

import dagster as dg

from assets import ALL_ASSETS
from assets._common import CALIBRATION_GROUP, DELIVERY_BATCHES
from automation.run_recovery import dead_run_sensor
from curation.batches import register, source_for
from curation.ingest.inbox import scan_inbox
from resources import CurationSettings

# Steps run in their own processes (parallel shards, parallel stages), forked from a server that has
# imported the code once: a spawned step re-imports Dagster and the project, measured 5-14 s per step on
# the loaded 2-core machine (~28 steps a run), against well under 1 s forked. In a cluster the k8s executor
# (`dagster_k8s.k8s_job_executor`) runs the same steps as pods instead.
# A small batch's steps are cheap and the fork server's start is not: `execution: {config: {in_process:
# true}}` runs the same plan in the run's own process (what `curation run` asks for at or below
# `sharding.in_process_max_docs`). A launch from the UI or a sensor gets the forked default.
FORKED_STEPS = {"start_method": {"forkserver": {"preload_modules": ["definitions", "automation.step_preload"]}}}


def _step_executor_config(config: dict) -> dict:
    return {"in_process": {}} if config["in_process"] else {"multiprocess": FORKED_STEPS}


STEP_EXECUTOR = dg.multi_or_in_process_executor.configured(
    _step_executor_config,
    name="forked_multiprocess",
    config_schema={
        "in_process": dg.Field(
            bool, default_value=False, description="run every step in the run's process (small batches)"
        )
    },
)

curation_job = dg.define_asset_job(
    "curation_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    partitions_def=DELIVERY_BATCHES,
    executor_def=STEP_EXECUTOR,
    description="Ingest -> score -> calibrate -> mask -> surrogates -> card -> gated release, for one batch.",
)

calibration_job = dg.define_asset_job(
    "calibration_job",
    selection=dg.AssetSelection.groups(CALIBRATION_GROUP),
    description="Re-score and re-detect the labeled validation data and re-choose policy and thresholds.",
)

evaluation_job = dg.define_asset_job(
    "evaluation_job",
    selection=dg.AssetSelection.groups("evaluation"),
    partitions_def=DELIVERY_BATCHES,
    description="Privacy evidence for one batch: leakage report of its views; canary probe where canaries are planted.",
)

recalibration_schedule = dg.ScheduleDefinition(
    name="recalibration_schedule",
    job=calibration_job,
    cron_schedule="0 3 * * 1",  # Mondays 03:00: after a week of label fixes, before the week's deliveries
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Weekly recalibration; a stored calibration is reused when nothing it depends on changed.",
)


@dg.sensor(
    job=curation_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds a delivery_batch partition and requests a run for each new, complete inbox batch.",
)
def inbox_sensor(context: dg.SensorEvaluationContext, settings: CurationSettings):
    config = settings.load()
    scan = scan_inbox(config.inbox_path, config.known_domains())
    for problem in scan.skipped:
        context.log.warning(f"inbox folder {config.inbox_path.resolve()}: {problem}")
    seen = context.instance.get_dynamic_partitions(DELIVERY_BATCHES.name)
    new = scan.ready(seen, time.time(), config.inbox_settle_seconds)
    if not new:
        waiting = scan.new(seen)
        why = f"{len(waiting)} batch(es) still settling" if waiting else "no new batches"
        return dg.SkipReason(f"inbox folder {config.inbox_path.resolve()}: {why}")
    keys = [b.key for b in new]
    warehouse = settings.warehouse()
    for key in keys:  # the batch registry: a run of this partition, from anywhere, reads this entry
        register(warehouse, source_for(config.for_batch(key), settings.config_path, origin="inbox"))
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=key, run_key=f"delivery:{key}") for key in keys],
        dynamic_partitions_requests=[DELIVERY_BATCHES.build_add_request(keys)],
    )


# Evaluates `release`'s automation condition (eager, once every blocking check of its deps passed), so a
# batch whose gates pass later (a fixed gate re-run from the UI) is released without a person. On by default.
release_automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.assets("release"),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Releases a batch once all of its blocking gates have passed (release's automation condition).",
)

ALL_JOBS = [curation_job, calibration_job, evaluation_job]
ALL_SCHEDULES = [recalibration_schedule]
ALL_SENSORS = [inbox_sensor, release_automation_sensor, dead_run_sensor]
