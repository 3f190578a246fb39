"""Privacy evidence for a batch: the leakage report of its views and, where canaries were planted, the canary
memorization probe. Not part of `curation_job` (they cost model time); `evaluation_job` and `curation canary`
run them, and the dataset card shows their results when they ran."""

import base64
import json

import dagster as dg

from assets._common import DELIVERY_BATCHES, as_metadata, batch_config
from assets.score import MODEL_POOL
from curation.core.warehouse import record_summary
from curation.evaluation import canary, canary_plan, leakage
from curation.gates import release_gates as gates
from resources import CurationSettings

EVALUATION_GROUP = "evaluation"


@dg.asset(
    group_name=EVALUATION_GROUP,
    kinds={"pytorch", "duckdb"},
    deps=["training_view", "redacted_view", "surrogate_view"],
    partitions_def=DELIVERY_BATCHES,
    pool=MODEL_POOL,
)
def leakage_report(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Per view (surrogate, redacted, training view with its loss mask) and label: direct leak rate of the
    batch's original values (verbatim and normalized; in the training view, values whose tokens carry loss),
    retention of non-target text, the surrogates' format-kept rate, and an inference-leak probe with the
    reference model. Counts and rates only."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    plan = canary_plan.load_plan(warehouse, config.batch_id)
    planted, detected = (), {}
    if plan is not None:
        _, canaries, _ = plan
        inputs = canary_plan.probe_inputs(warehouse, config.batch_id, canaries, [])
        planted = [(c.kind, c.value) for c in canaries]
        detected = {c.value.strip(): inputs.canary_masked.get(c.canary_id) == 1.0 for c in canaries}
    report = leakage.leakage_report(warehouse, config.batch_id, canary_values=planted, canary_detected=detected)
    report["content_digest"] = gates.content_digest(warehouse, config.batch_id)  # the card uses it only for this text
    record_summary(warehouse, config.batch_id, leakage.LEAKAGE_STAGE, report)
    context.log.info(leakage.format_report(report))
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "direct_leak_rate_detected": report["direct_leak_rate_detected"],
                "detected_values": report["detected_values"],
                "views": {
                    name: {k: v for k, v in data.items() if k != "per_label"} for name, data in report["views"].items()
                },
                "per_label": {name: data["per_label"] for name, data in report["views"].items()},
                "canaries": report["canaries"],
            }
        )
    )


@dg.asset(
    group_name=EVALUATION_GROUP,
    kinds={"pytorch"},
    deps=["raw_documents", "training_view", "surrogate_view"],
    partitions_def=DELIVERY_BATCHES,
    pool=MODEL_POOL,
)
def canary_probe(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Fine-tunes the embedded model on the raw text, on the training view with its loss mask and on the
    surrogate view of a batch with planted canaries (`curation canary`), and measures per duplication count
    the canaries' exposure (bits), greedy prefix extraction and held-out perplexity."""
    config, warehouse = batch_config(context, settings), settings.warehouse()
    plan = canary_plan.load_plan(warehouse, config.batch_id)
    if plan is None:
        raise dg.Failure(
            description=f"batch {config.batch_id!r} has no planted canaries: `curation canary` builds such a batch"
        )
    probe_settings, canaries, heldout = plan
    inputs = canary_plan.probe_inputs(warehouse, config.batch_id, canaries, heldout)
    result = canary.run_probe(inputs, probe_settings, log=context.log.info)
    summary = result["summary"]
    summary["content_digest"] = gates.content_digest(warehouse, config.batch_id)
    plot = canary.save_exposure_plot(summary, config.path(canary.plot_file(config.batch_id)))
    record_summary(warehouse, config.batch_id, canary.PROBE_STAGE, summary)
    context.log.info("\n" + canary.format_table(summary))
    encoded = base64.b64encode(plot.read_bytes()).decode()
    return dg.MaterializeResult(
        metadata={
            **as_metadata({k: v for k, v in summary.items() if k not in ("table", "metrics")}),
            "metrics": dg.MetadataValue.json(json.loads(json.dumps(summary["metrics"]))),
            "table": dg.MetadataValue.md(canary.markdown_table(summary)),
            "plot_exposure": dg.MetadataValue.md(f"![exposure](data:image/png;base64,{encoded})"),
            "plot_exposure_path": dg.MetadataValue.path(str(plot)),
        }
    )


EVALUATION_ASSETS = [leakage_report, canary_probe]
