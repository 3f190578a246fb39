"""The learned tagger: trained on the labeled sets' calibration splits (``pii_tagger``), then run on the
batch (``tagger_spans``)."""

from __future__ import annotations

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, LABELED, VALIDATION, Warehouse, record_summary, stage_summary
from curation.score.pending import hidden_cache_for
from curation.tagger.store import augment_config, current_tagger, tagger_config


def tagger_stage(config: CurationConfig, warehouse: Warehouse, model_key: str, progress=None) -> dict:
    """Train (or reuse) the tagger on the labeled sets' calibration splits and store its facts for the
    labeled documents; the report (per-domain metrics, thresholds) is the stage summary."""
    if not config.tagger.enabled:
        summary = {"enabled": False}
        record_summary(warehouse, CALIBRATION_BATCH, "pii_tagger", summary)
        return summary
    from curation.score.scorer import cache_root
    from curation.tagger.store import train_on_labeled

    tagger, report = train_on_labeled(
        warehouse,
        model_key,
        hidden_cache_for(config, model_key),
        (VALIDATION, LABELED),
        tagger_config(config),
        cache_root(),
        progress=progress,
        augment=augment_config(config),
        label_thresholds=config.tagger.label_thresholds,
    )
    summary = {
        "enabled": True,
        "tagger_key": tagger.key,
        "digest": tagger.digest,
        "hidden": tagger.config.hidden,
        "encoder": tagger.config.encoder,
        "domain": config.calibration_domain,
        **report,
    }
    record_summary(warehouse, CALIBRATION_BATCH, "pii_tagger", summary)
    return summary


def tagger_spans_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """The tagger's token probabilities and spans, and CredSweeper's spans, for the batch (facts)."""
    tagger = current_tagger(warehouse) if config.tagger.enabled else None
    if tagger is None:
        return {"enabled": False}
    from curation.tagger.store import tag_corpus

    # the batch domain's own threshold when the tagger learned that domain, else the calibration domain's:
    # the threshold the calibration's detector combination was measured with
    thresholds = tagger.report.get("thresholds", {})
    domain = config.batch_domain if config.batch_domain in thresholds else config.calibration_domain
    cache = hidden_cache_for(config, model_key)
    # per-label thresholds are policy chosen by pii_tagger (its stage summary), not part of the saved head
    own = stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger").get("label_thresholds", {}).get(domain)
    summary = tag_corpus(warehouse, config.batch_id, model_key, cache, tagger, domain, own)
    record_summary(warehouse, config.batch_id, "tagger_spans", summary)
    return summary
