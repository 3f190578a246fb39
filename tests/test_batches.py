"""The batch registry (a run of a partition reads the source its batch was added with) and the
release automation sensor being on by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.batches import lookup, register, resolve, source_for
from curation.core.config import ConfigError, load_config
from curation.core.warehouse import Warehouse


def _project(tmp_path: Path) -> Path:
    (tmp_path / "main.jsonl").write_text(json.dumps({"id": "a", "text": "hello"}) + "\n", encoding="utf-8")
    (tmp_path / "other.jsonl").write_text(json.dumps({"id": "b", "text": "world"}) + "\n", encoding="utf-8")
    (tmp_path / "curation.yaml").write_text("input: main.jsonl\nbatch_id: main\n", encoding="utf-8")
    (tmp_path / "strict.yaml").write_text(
        "batch_id: strict\ngates:\n  masked_fraction_min: 0.0001\n  masked_fraction_max: 0.001\n", encoding="utf-8"
    )
    return tmp_path


def test_registered_batch_resolves_to_its_own_input_and_config(tmp_path):
    root = _project(tmp_path)
    home = load_config(root / "curation.yaml")  # what a launch from the UI starts from
    strict = load_config(root / "strict.yaml", input=str(root / "other.jsonl"), batch_id="strict")
    register(Warehouse(home.warehouse_path), source_for(strict, str(root / "strict.yaml"), origin="cli"))

    resolved = resolve(home, "strict")
    assert resolved.batch_id == "strict"
    assert resolved.input_path == (root / "other.jsonl").resolve()
    assert resolved.gates.masked_fraction_max == 0.001  # the batch's own config, not the launching one
    assert resolved.digest() == strict.digest()
    assert resolve(home, "main") is home

    source = lookup(Warehouse(home.warehouse_path), "strict")
    assert source is not None and source.origin == "cli" and len(source.input_digest) == 64
    # registering again replaces the entry (one source per batch)
    register(Warehouse(home.warehouse_path), source_for(strict, None, origin="ui"))
    again = lookup(Warehouse(home.warehouse_path), "strict")
    assert again.origin == "ui" and again.config_path is None
    assert Warehouse(home.warehouse_path).query("SELECT count(*) FROM delivery_batches").item() == 1


def test_unknown_batch_names_the_ways_to_add_it(tmp_path):
    home = load_config(_project(tmp_path) / "curation.yaml")
    with pytest.raises(ConfigError) as error:
        resolve(home, "nowhere")
    message = str(error.value)
    assert "not registered" in message and "curation run --batch-id nowhere --input PATH" in message
    assert "inbox inbox" not in message and f"inbox folder {home.inbox_path.resolve()}" in message


def test_registered_input_that_disappeared_is_a_clear_error(tmp_path):
    root = _project(tmp_path)
    home = load_config(root / "curation.yaml")
    gone = load_config(root / "curation.yaml", input=str(root / "other.jsonl"), batch_id="gone")
    register(Warehouse(home.warehouse_path), source_for(gone, None, origin="cli"))
    (root / "other.jsonl").unlink()
    with pytest.raises(ConfigError, match="no longer exists"):
        resolve(home, "gone")


def test_release_automation_sensor_is_on_by_default():
    import dagster as dg

    from definitions import defs

    sensor = defs.resolve_sensor_def("default_automation_condition_sensor")
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert dg.AssetKey("release") in sensor.asset_selection.resolve(defs.resolve_asset_graph())
    release = defs.resolve_assets_def("release")
    assert release.automation_conditions_by_key[dg.AssetKey("release")] is not None


def test_delivery_checks_are_partitioned_and_calibration_health_is_not():
    from checks import ALL_CHECKS

    specs = [spec for check in ALL_CHECKS for spec in check.check_specs]
    partitioned = {spec.name: spec.partitions_def is not None for spec in specs}
    assert partitioned.pop("calibration_health") is False
    assert all(partitioned.values()), partitioned

@pytest.mark.slow

def test_release_automation_launches_nothing_when_only_calibration_moved():
    """Under `dagster dev` every batch run re-materialized the shared calibration, and the automation
    sensor then re-released every earlier batch (70 automatic runs for 25 real ones): a re-release with
    unchanged masks and views has nothing to do. A batch whose views are new is still released."""
    import dagster as dg
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    from definitions import defs

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("delivery_batch", ["a", "b", "c"])
    graph = defs.resolve_asset_graph()
    release = dg.AssetKey("release")
    upstream = sorted(graph.get(release).parent_keys, key=lambda k: k.to_user_string())

    def materialize(key: dg.AssetKey, partition: str | None) -> None:
        """A materialization and a passed result of each of its checks, targeting it (as a run records)."""
        partition = partition if graph.get(key).is_partitioned else None
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key, partition=partition))
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None), limit=1
        ).records
        target = AssetCheckEvaluationTargetMaterializationData(
            storage_id=records[0].storage_id, run_id=records[0].run_id, timestamp=records[0].timestamp
        )
        for check in graph.get(key).check_keys:
            instance.report_runless_asset_event(
                dg.AssetCheckEvaluation(
                    asset_key=key,
                    check_name=check.name,
                    passed=True,
                    partition=partition,
                    target_materialization_data=target,
                )
            )

    materialize(dg.AssetKey("threshold_calibration"), None)
    for batch in ("a", "b"):
        for key in upstream:
            if key != dg.AssetKey("threshold_calibration"):
                materialize(key, batch)
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=release, partition=batch))
    selection = dg.AssetSelection.assets(release)
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=selection)
    assert tick.total_requested == 0  # everything released is up to date

    calibration = dg.AssetKey("threshold_calibration")
    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=calibration))  # re-calibrated
    for key in upstream:
        if key != calibration:
            materialize(key, "c")  # and a new batch c came through to its views
    tick = dg.evaluate_automation_conditions(
        defs=defs, instance=instance, asset_selection=selection, cursor=tick.cursor
    )
    assert tick.get_requested_partitions(release) == {"c"}  # not a and b: nothing of theirs changed
