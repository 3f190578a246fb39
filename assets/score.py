"""Reference scoring: per-token surprise from the public causal LM, cached by (model key, text sha256)."""

import os
from pathlib import Path

import dagster as dg

from assets._common import (
    CALIBRATION_GROUP,
    DELIVERY_BATCHES,
    DELIVERY_GROUP,
    as_metadata,
    batch_config,
    one_connection,
)
from curation.core.warehouse import VALIDATION, record_summary
from curation.policy.calibration import default_candidates
from curation.score.pending import hidden_cache_for
from curation.score.shards import (
    ShardPlan,
    merge_shards,
    plan_shards,
    remove_stale_folders,
    score_shard,
    score_shard_on_ray,
    work_folder,
)
from curation.score.stage import score_stage, window_stage
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


def _shard_threads(context, n_shards: int) -> int:
    """Model calls side by side per shard: the cores shared by the shards that can hold a pool slot at once."""
    try:
        slots = context.instance.event_log_storage.get_concurrency_info(MODEL_POOL).slot_count or n_shards
    except Exception:  # an instance without pool storage (in-memory test instances): shards may all run
        slots = n_shards
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, min(n_shards, slots)))


@dg.op(ins={"raw_documents": dg.In(dg.Nothing), "pii_tagger": dg.In(dg.Nothing)}, out=dg.DynamicOut(dict))
def plan_score_shards(context: dg.OpExecutionContext, settings: CurationSettings, reference_model: ReferenceModel):
    """Split the batch's texts still to score into `sharding.workers` shards (Parquet inputs in a private
    work folder); at least one shard, so the merge always runs."""
    config = batch_config(context, settings)
    model_key = reference_model.scorer().model_key
    instance = context.instance

    def ended(run_id: str) -> bool:
        run = instance.get_run_by_id(run_id)
        return run is None or run.is_finished

    remove_stale_folders(config, ended)
    folder = work_folder(config, context.run_id)
    # on Ray the cluster's actors are the parallelism: one shard step drives them
    workers = 1 if config.engine.kind == "ray" else config.sharding.workers
    plans, counts = plan_shards(
        config, settings.warehouse(), model_key, folder, workers, hidden_cache_for(config, model_key)
    )
    context.log.info(
        f"{counts['texts_scored']} of {counts['texts']} texts to score, in {len(plans)} shard(s) of "
        f"{', '.join(str(p.n_texts) for p in plans)} texts"
    )
    for plan in plans:
        yield dg.DynamicOutput({**plan.to_dict(), **counts, "folder": str(folder)}, mapping_key=f"shard_{plan.shard}")


@dg.op(pool=MODEL_POOL)
def score_shard_step(
    context: dg.OpExecutionContext, settings: CurationSettings, reference_model: ReferenceModel, plan: dict
) -> dict:
    """Score one shard's texts with the reference model into its Parquet file (never opens the warehouse:
    it can run in another process, pod or GPU node). Holds one `reference_model` pool slot."""
    config = batch_config(context, settings)
    scorer = reference_model.scorer()
    shard = ShardPlan(**{k: plan[k] for k in ShardPlan.__dataclass_fields__})
    cache = hidden_cache_for(config, scorer.model_key)
    if config.engine.kind == "ray":
        from curation.tagger.store import current_tagger

        tagger = current_tagger(settings.warehouse()) if cache is not None else None
        warehouse = settings.warehouse()
        result = score_shard_on_ray(shard, scorer, config.engine, warehouse, cache, context.log.info, tagger)
        return {**result, **{k: plan[k] for k in ("texts", "texts_scored", "texts_cached", "folder", "n_shards")}}
    scorer.concurrency = _shard_threads(context, shard.n_shards)  # wall time only: scores do not depend on it
    result = score_shard(shard, scorer, cache, context.log.info)
    return {**result, **{k: plan[k] for k in ("texts", "texts_scored", "texts_cached", "folder", "n_shards")}}


@dg.op(out=dg.Out(dg.Nothing))
def merge_shard_scores(
    context: dg.OpExecutionContext, settings: CurationSettings, reference_model: ReferenceModel, shards: list[dict]
) -> None:
    """The one DuckDB writer: every shard's token scores in one transaction; the work folder is deleted."""
    config = batch_config(context, settings)
    scorer = reference_model.scorer()
    warehouse = settings.warehouse()
    first = shards[0]
    rows = merge_shards(warehouse, scorer.model_key, shards, Path(first["folder"]))
    tokens = sum(s["tokens_scored"] for s in shards)
    slowest = max(s["seconds"] for s in shards)
    summary = {
        "model_key": scorer.model_key,
        **scorer.description,
        "texts": first["texts"],
        "texts_scored": first["texts_scored"],
        "texts_cached": first["texts_cached"],
        "model_calls": sum(s["model_calls"] for s in shards),
        "tokens_scored": tokens,
        "tokens_per_s": round(tokens / slowest, 1) if slowest > 0 and tokens else None,
        "model_load_s": max(s["model_load_s"] for s in shards),
        "workers": config.sharding.workers,
        "shards": first["n_shards"],
        "shard_seconds": [s["seconds"] for s in sorted(shards, key=lambda s: s["shard"])],
        "rows_merged": rows,
        # the Ray engine's counters and where its time went (one shard runs the whole batch there)
        **{k: v for shard in shards for k, v in shard.items() if k.startswith("ray_")},
    }
    record_summary(warehouse, config.batch_id, "reference_scores", summary)
    context.add_output_metadata(as_metadata(summary))


@dg.graph_asset(
    group_name=DELIVERY_GROUP,
    kinds={"pytorch", "duckdb"},
    ins={"raw_documents": dg.AssetIn(dagster_type=dg.Nothing), "pii_tagger": dg.AssetIn(dagster_type=dg.Nothing)},
    partitions_def=DELIVERY_BATCHES,
)
def reference_scores(raw_documents, pii_tagger):
    """Per-token negative log-likelihood (nats) of every document of the batch under the reference model,
    with token->character offsets. Texts already scored under the same model key are not scored again
    (re-runs make no model calls). The batch is split into `sharding.workers` shards scored by parallel
    steps (each one `reference_model` pool slot), merged by one DuckDB writer; identical to one worker.
    After `pii_tagger`: texts the current head has tagged need no hidden states, so none are kept for them."""
    shards = plan_score_shards(raw_documents=raw_documents, pii_tagger=pii_tagger)
    return merge_shard_scores(shards.map(score_shard_step).collect())


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
