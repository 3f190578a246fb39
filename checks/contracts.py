"""Data contracts (great-expectations 1.x, BOOLEAN_ONLY) on the warehouse tables the release rests on."""

import dagster as dg

from assets._common import DELIVERY_BATCHES, batch_config, one_connection
from checks._record import to_check_result
from curation.delivery.deliver import UPSTREAM
from curation.gates.contracts import check_contract, frame_digest
from curation.gates.release_gates import (
    DOCUMENT_CONTRACT,
    MASK_SPAN_CONTRACT,
    TOKEN_SCORE_CONTRACT,
    GateResult,
    explained,
    reused_result,
)
from resources import CurationSettings, ReferenceModel


def _result(name: str, kind: str, frame, warehouse, batch_id: str) -> GateResult:
    """The contract's verdict; reused when the batch's last verdict was on exactly this data."""
    digest = frame_digest(kind, frame)
    reused = reused_result(warehouse, batch_id, UPSTREAM, name, "frame_digest", digest)
    if reused is not None:
        return reused
    contract = check_contract(kind, frame)
    failed = contract.failed_expectations
    return explained(
        GateResult(name, contract.passed, {**contract.to_dict(), "frame_digest": digest}),
        f"{len(failed)} failed expectations on {contract.rows} rows",
        "0 failed expectations",
        f"{kind} rows violate: {', '.join(failed)}" if failed else f"every {kind} expectation holds",
    )


@dg.asset_check(asset="raw_documents", name=DOCUMENT_CONTRACT, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def document_contract(context: dg.AssetCheckExecutionContext, settings: CurationSettings) -> dg.AssetCheckResult:
    """Documents: non-null unique ids, non-empty text, valid sha256, known kind."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    frame = warehouse.query(
        "SELECT doc_id, text IS NOT NULL AS text, n_chars, sha256, kind FROM documents WHERE batch_id = ?",
        [config.batch_id],
    )
    result = _result(DOCUMENT_CONTRACT, "documents", frame, warehouse, config.batch_id)
    return to_check_result(context, warehouse, config.batch_id, result)


@dg.asset_check(asset="reference_scores", name=TOKEN_SCORE_CONTRACT, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def token_score_contract(
    context: dg.AssetCheckExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.AssetCheckResult:
    """Token scores of the batch: finite, non-negative NLL; ordered character offsets."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    frame = warehouse.query(
        "SELECT t.nll, t.char_end - t.char_start AS width, t.char_start FROM token_scores t "
        "JOIN (SELECT DISTINCT sha256 FROM documents WHERE batch_id = ?) d ON d.sha256 = t.doc_sha256 "
        "WHERE t.model_key = ?",
        [config.batch_id, reference_model.scorer().model_key],
    )
    frame = frame.with_columns(frame["nll"].fill_nan(None))
    return to_check_result(
        context,
        warehouse,
        config.batch_id,
        _result(TOKEN_SCORE_CONTRACT, "token_scores", frame, warehouse, config.batch_id),
    )


@dg.asset_check(asset="mask_spans", name=MASK_SPAN_CONTRACT, partitions_def=DELIVERY_BATCHES, blocking=True)
@one_connection
def mask_span_contract(context: dg.AssetCheckExecutionContext, settings: CurationSettings) -> dg.AssetCheckResult:
    """Mask spans: labeled, non-empty, inside their document's text."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    frame = warehouse.query(
        'SELECT m.label, m."start" AS start, m."end" - m."start" AS length, m."end" <= d.n_chars AS within_text '
        "FROM mask_spans m JOIN documents d USING (doc_id) WHERE m.batch_id = ? AND d.batch_id = ?",
        [config.batch_id, config.batch_id],
    )
    return to_check_result(
        context,
        warehouse,
        config.batch_id,
        _result(MASK_SPAN_CONTRACT, "mask_spans", frame, warehouse, config.batch_id),
    )
