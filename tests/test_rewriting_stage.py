"""The optional LM-rewriting path of the surrogate stage: verified rewrites are kept, rejected ones fall
back to the deterministic surrogates, and every chunk's fate is recorded without its values.

The generator here is a deterministic function (the real model's run is in test_rewriting.py): this
file tests the stage's wiring, which must hold whatever the model writes.
"""

from __future__ import annotations

import dataclasses

import polars as pl

from curation.core.config import CurationConfig
from curation.core.warehouse import Warehouse
from curation.views.convention import load_convention
from curation.views.rewriting import RewriteConfig, Rewriter
from curation.views.stage import surrogate_stage
from curation.views.surrogates import SurrogateEngine
from curation.views.vault import Vault

TEXT = (
    "Dana Whitfield called about invoice 4471 and asked for a refund.\n\n"
    "The weather was fine today and nothing else happened in the shop.\n\n"
    "Later Marco Alvarez wrote back about the same invoice 4471."
)


def _warehouse(tmp_path) -> Warehouse:
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.append(
        "documents",
        pl.DataFrame(
            {"doc_id": ["d1"], "batch_id": ["b"], "scope_id": ["s1"], "kind": ["text"], "text": [TEXT]},
        ),
    )
    spans = [(TEXT.index(name), TEXT.index(name) + len(name)) for name in ("Dana Whitfield", "Marco Alvarez")]
    warehouse.append(
        "mask_spans",
        pl.DataFrame(
            {
                "batch_id": ["b", "b"],
                "doc_id": ["d1", "d1"],
                "start": [s for s, _ in spans],
                "end": [e for _, e in spans],
                "label": ["PERSON", "PERSON"],
                "score": [1.0, 1.0],
                "source": ["detector", "detector"],
            }
        ),
    )
    return warehouse


def _generate(requests):
    """Rewrites the first name it is given plausibly; leaves Marco in place (a leak the verifier must catch)."""
    return [r.text.replace("Dana Whitfield", "Alex Moreno") for r in requests]


def test_rewriting_keeps_verified_chunks_and_falls_back_on_leaks(tmp_path):
    warehouse = _warehouse(tmp_path)
    config = dataclasses.replace(CurationConfig(batch_id="b"), rewriting=RewriteConfig(enabled=True, max_chars=80))
    engine = SurrogateEngine(bytes(range(32)), load_convention(), "k1")
    with Vault(tmp_path / "v.duckdb") as vault:
        summary = surrogate_stage(config, warehouse, engine, vault, rewriter=Rewriter(config.rewriting, _generate))
        audit_copy = vault.audit_copy("b")["d1"]
    out = warehouse.query("SELECT text FROM surrogate_view WHERE batch_id = 'b'")["text"][0]
    assert "Alex Moreno called about invoice 4471" in out
    assert "Dana" not in out and "Whitfield" not in out and "Marco" not in out and "Alvarez" not in out
    assert "The weather was fine today and nothing else happened in the shop." in out  # unflagged: untouched
    chunks = warehouse.query("SELECT action, reason, labels FROM rewrite_chunks ORDER BY chunk_index")
    assert chunks["action"].to_list() == ["rewritten", "kept", "fallback"]
    assert chunks["reason"][2] == "leak"
    assert all("Marco" not in str(row) for row in chunks.iter_rows())  # records hold no values
    assert summary["chunks"] == {"kept": 1, "rewritten": 1, "fallback": 1}
    assert "[PERSON_1]" in audit_copy and "[PERSON_2]" in audit_copy


def test_rewriting_off_by_default_uses_surrogates_only(tmp_path):
    warehouse = _warehouse(tmp_path)
    engine = SurrogateEngine(bytes(range(32)), load_convention(), "k1")
    with Vault(tmp_path / "v.duckdb") as vault:
        summary = surrogate_stage(CurationConfig(batch_id="b"), warehouse, engine, vault)
    assert summary["rewriting"] is False and summary["replacements"] == 2
    assert warehouse.query("SELECT count(*) AS n FROM rewrite_chunks")["n"][0] == 0
