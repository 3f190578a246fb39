"""Warehouse sessions and transactions: one connection per short step, errors leave nothing half-written."""

import polars as pl
import pytest

from curation.core.warehouse import Warehouse


def _frame(*ids: str) -> pl.DataFrame:
    return pl.DataFrame({"batch_id": ["b"] * len(ids), "source": ["s"] * len(ids), "record_id": list(ids)})


def test_session_shares_one_connection_and_closes_it(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    with warehouse.session():
        with warehouse.connect() as first, warehouse.connect() as second:
            assert first is second
        with Warehouse(tmp_path / "w.duckdb").session(), warehouse.connect() as nested:
            assert nested is first  # a nested session on the same file reuses the outer connection
        warehouse.append("quarantine", _frame("r1"))
        assert warehouse.query("SELECT count(*) AS n FROM quarantine")["n"][0] == 1
    with warehouse.connect() as after:
        assert after is not first  # the session ended: calls open their own connection again
    assert warehouse.query("SELECT record_id FROM quarantine")["record_id"].to_list() == ["r1"]


def test_failed_replace_rolls_back_and_the_session_stays_usable(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.append("quarantine", _frame("keep"))
    with warehouse.session():
        with pytest.raises(Exception, match="no_such_column"):
            warehouse.replace("quarantine", _frame("new").rename({"record_id": "no_such_column"}))
        assert warehouse.query("SELECT record_id FROM quarantine")["record_id"].to_list() == ["keep"]
        warehouse.replace("quarantine", _frame("new"))  # no dangling transaction on the shared connection
    assert warehouse.query("SELECT record_id FROM quarantine")["record_id"].to_list() == ["new"]


def test_sessions_on_different_files_are_separate(tmp_path):
    a, b = Warehouse(tmp_path / "a.duckdb"), Warehouse(tmp_path / "b.duckdb")
    with a.session(), b.session(), a.connect() as con_a, b.connect() as con_b:
        assert con_a is not con_b
