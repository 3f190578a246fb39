"""Reference scoring: per-token surprise from the public causal LM, cached by (model key, text sha256)."""

import dagster as dg

from assets._common import (
    CALIBRATION_GROUP,
    DELIVERY_BATCHES,
    DELIVERY_GROUP,
    as_metadata,
    batch_config,
    one_connection,
)
from curation.calibration import default_candidates
from curation.pipeline import VALIDATION, score_stage, window_stage
from resources import CurationSettings, ReferenceModel

# Every step that runs the model draws from one pool: set its limit (dagster.yaml `concurrency.pools`)
# to the number of model replicas the machine holds, so parallel batches queue instead of thrashing.
MODEL_POOL = "reference_model"


@dg.asset(group_name=CALIBRATION_GROUP, kinds={"pytorch", "duckdb"}, deps=["validation_set"], pool=MODEL_POOL)
def validation_scores(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Per-token negative log-likelihood of every validation text: what thresholds are calibrated on."""
    scorer = reference_model.scorer()
    summary = score_stage(settings.load(), settings.warehouse(), scorer, progress=context.log.info, dataset=VALIDATION)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(
    group_name=DELIVERY_GROUP,
    kinds={"pytorch", "duckdb"},
    deps=["raw_documents"],
    partitions_def=DELIVERY_BATCHES,
    pool=MODEL_POOL,
)
def reference_scores(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Per-token negative log-likelihood (nats) of every document of the batch under the reference model,
    with token->character offsets. Texts already scored under the same model key are not scored again
    (re-runs make no model calls)."""
    scorer = reference_model.scorer()
    summary = score_stage(batch_config(context, settings), settings.warehouse(), scorer, progress=context.log.info)
    return dg.MaterializeResult(metadata=as_metadata(summary))


@dg.asset(
    group_name=DELIVERY_GROUP, kinds={"duckdb", "numpy"}, deps=[reference_scores], partitions_def=DELIVERY_BATCHES
)
@one_connection
def window_scores(
    context: dg.AssetExecutionContext, settings: CurationSettings, reference_model: ReferenceModel
) -> dg.MaterializeResult:
    """Window scores (mean NLL per token and NLL per character over fixed-width token windows) of the
    batch: the facts masking and the drift check read."""
    specs = sorted(
        {p.window for p in default_candidates() if p.window.kind == "fixed" and p.window.size == 8},
        key=lambda s: s.name,
    )
    config = batch_config(context, settings)
    summary = window_stage(config, settings.warehouse(), reference_model.scorer().model_key, specs)
    return dg.MaterializeResult(metadata=as_metadata(summary))
