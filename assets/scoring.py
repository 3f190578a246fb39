"""Reference scoring: per-token surprise from the public causal LM, cached by (model key, text sha256)."""

import dagster as dg

from assets._common import GROUP, as_metadata
from curation.calibration import default_candidates
from curation.pipeline import score_stage, window_stage
from resources import CurationSettings, ReferenceModel


@dg.asset(group_name=GROUP, kinds={"pytorch", "duckdb"}, deps=["raw_documents", "validation_set"])
def reference_scores(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Per-token negative log-likelihood (nats) of every document and validation text under the reference
    model, with token->character offsets. Texts already scored under the same model key are not scored
    again (re-runs make no model calls)."""
    scorer = reference_model.scorer()
    summary = score_stage(settings.load(), settings.warehouse(), scorer, progress=context.log.info)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(group_name=GROUP, kinds={"duckdb", "numpy"}, deps=[reference_scores])
def window_scores(settings: CurationSettings, reference_model: ReferenceModel) -> dg.MaterializeResult:
    """Window scores (mean NLL per token and NLL per character over fixed-width token windows) of the
    batch: the facts threshold calibration and drift checks read."""
    specs = sorted(
        {p.window for p in default_candidates() if p.window.kind == "fixed" and p.window.size == 8},
        key=lambda s: s.name,
    )
    summary = window_stage(settings.load(), settings.warehouse(), reference_model.scorer().model_key, specs)
    return dg.MaterializeResult(metadata=as_metadata(summary))
