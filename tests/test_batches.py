"""The batch registry (a run of a partition reads the source its batch was added with) and the
release automation sensor being on by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.batches import lookup, register, resolve, source_for
from curation.config import ConfigError, load_config
from curation.warehouse import Warehouse


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
