"""Data contracts (great-expectations, BOOLEAN_ONLY) and the digest that lets unchanged data skip them."""

from __future__ import annotations

import polars as pl

from curation.gates.contracts import check_contract, frame_digest

SHA = "a" * 64


def _docs(**overrides) -> pl.DataFrame:
    data = {"doc_id": ["d1", "d2"], "text": [True, True], "n_chars": [5, 7], "sha256": [SHA, SHA], "kind": ["text"] * 2}
    return pl.DataFrame({**data, **overrides})


def test_documents_contract_passes_and_fails_without_values_in_the_result():
    assert check_contract("documents", _docs()).passed
    bad = check_contract("documents", _docs(doc_id=["d1", "d1"], sha256=["secret-value-1", SHA]))
    assert not bad.passed and bad.failed_expectations
    assert "secret-value-1" not in str(bad.to_dict())


def test_empty_table_fails():
    result = check_contract("documents", _docs().head(0))
    assert not result.passed and result.failed_expectations == ["table is empty"]


def test_frame_digest_is_order_free_and_sees_every_change():
    frame = _docs()
    assert frame_digest("documents", frame) == frame_digest("documents", frame.reverse())
    assert frame_digest("documents", frame) != frame_digest("documents", _docs(n_chars=[5, 8]))
    assert frame_digest("documents", frame) != frame_digest("mask_spans", frame)
    assert frame_digest("documents", frame) != frame_digest("documents", frame.head(1))
