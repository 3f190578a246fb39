"""The partial-leak scan (#42, #36): a structured identifier partly masked, or a surrogate that kept a part of
its original, is a finding that blocks `residual_independent_audit`; counts by label only, never values."""

from __future__ import annotations

import dataclasses
import json

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import Warehouse
from curation.gates.residual_signals import partial_leak_scan

ROW = {"batch_id": ["b"], "doc_id": ["d1"], "scope_id": ["s1"], "kind": ["log"]}


def _batch(tmp_path, text: str, masks: list[tuple[str, str]], surrogate: str, ranges: list[list[int]]):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.append("documents", pl.DataFrame({**ROW, "text": [text]}))
    rows = []
    for value, label in masks:
        start = text.index(value)
        rows.append(("b", "d1", start, start + len(value), label, 1.0, "detector", "c"))
    warehouse.append(
        "mask_spans",
        pl.DataFrame(
            rows,
            schema=["batch_id", "doc_id", "start", "end", "label", "score", "source", "calibration_id"],
            orient="row",
        ),
    )
    warehouse.append(
        "surrogate_view",
        pl.DataFrame(
            {**ROW, "text": [surrogate], "n_replacements": [len(ranges)], "replaced_ranges": [json.dumps(ranges)]}
        ),
    )
    return dataclasses.replace(CurationConfig(base_dir=str(tmp_path)), batch_id="b"), warehouse


def _range(text: str, piece: str) -> list[int]:
    start = text.index(piece)
    return [start, start + len(piece)]


def test_a_partly_masked_email_is_a_finding(tmp_path):
    text = "reply to orla.quenby@brightmail.net please"
    surrogate = "reply to Mara.Linn@brightmail.net please"  # the host shipped
    config, warehouse = _batch(tmp_path, text, [("orla.quenby", "PERSON")], surrogate, [_range(surrogate, "Mara.Linn")])
    result = partial_leak_scan(config, warehouse)
    assert not result["passed"] and result["structured_partly_masked_by_label"] == {"EMAIL_ADDRESS": 1}
    assert "orla" not in json.dumps(result) and "brightmail" not in json.dumps(result)


def test_a_surrogate_that_kept_a_surname_is_a_finding(tmp_path):
    text = "NOTE: MR. CALLUM ABERNATHY-STRODE CALLED ABOUT THE INVOICE"
    surrogate = "NOTE: MR. CALLUM ABERNATHY-QWXPLT CALLED ABOUT THE INVOICE"  # the id surrogate's kept "prefix"
    config, warehouse = _batch(
        tmp_path, text, [("ABERNATHY-STRODE", "ACCOUNT_ID")], surrogate, [_range(surrogate, "ABERNATHY-QWXPLT")]
    )
    result = partial_leak_scan(config, warehouse)
    assert not result["passed"] and result["surrogate_kept_parts_by_label"] == {"ACCOUNT_ID": 1}


def test_whole_masks_and_fresh_surrogates_pass(tmp_path):
    text = "reply to orla.quenby@brightmail.net, ref ABERNATHY-STRODE, on https://example.org/u/7"
    surrogate = "reply to kai.moss@example.com, ref KQZWPLTMN-XRTVB, on https://example.org/u/7"
    masks = [("orla.quenby@brightmail.net", "EMAIL_ADDRESS"), ("ABERNATHY-STRODE", "ACCOUNT_ID")]
    ranges = [_range(surrogate, "kai.moss@example.com"), _range(surrogate, "KQZWPLTMN-XRTVB")]
    config, warehouse = _batch(tmp_path, text, masks, surrogate, ranges)
    result = partial_leak_scan(config, warehouse)
    assert result["passed"], result
    assert result["structured_identifiers_checked"] == 2 and result["surrogates_checked"] == 2
