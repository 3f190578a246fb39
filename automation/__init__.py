"""Jobs, the inbox sensor and the recalibration schedule: how deliveries run without a person at the keyboard.

- `curation_job`: every asset for one delivery batch (a partition). Calibration assets run in it too but
  reuse the stored calibration when its inputs are unchanged, so a batch never runs on missing thresholds.
- `calibration_job`: validation data -> scores -> detector spans -> thresholds; the schedule re-runs it so
  new labeled data (or a new model / detector version) reaches the thresholds.
- `inbox_sensor`: one partition and one run per new, complete batch in the inbox.
- `dead_run_sensor`: runs whose process is gone are marked failed and give back their pool slots.
"""

import time

import dagster as dg

from assets import ALL_ASSETS
from assets._common import CALIBRATION_GROUP, DELIVERY_BATCHES
from automation.run_recovery import dead_run_sensor
from curation.inbox import scan_inbox
from resources import CurationSettings

curation_job = dg.define_asset_job(
    "curation_job",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    partitions_def=DELIVERY_BATCHES,
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
    scan = scan_inbox(config.inbox_path)
    for problem in scan.skipped:
        context.log.warning(f"inbox {config.inbox_path}: {problem}")
    seen = context.instance.get_dynamic_partitions(DELIVERY_BATCHES.name)
    new = scan.ready(seen, time.time(), config.inbox_settle_seconds)
    if not new:
        waiting = scan.new(seen)
        why = f"{len(waiting)} batch(es) still settling" if waiting else "no new batches"
        return dg.SkipReason(f"inbox {config.inbox_path}: {why}")
    keys = [b.key for b in new]
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=key, run_key=f"delivery:{key}") for key in keys],
        dynamic_partitions_requests=[DELIVERY_BATCHES.build_add_request(keys)],
    )


ALL_JOBS = [curation_job, calibration_job, evaluation_job]
ALL_SCHEDULES = [recalibration_schedule]
ALL_SENSORS = [inbox_sensor, dead_run_sensor]
