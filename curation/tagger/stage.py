"""The learned tagger: trained on the labeled sets' calibration splits (``pii_tagger``), then run on the
batch (``tagger_spans``)."""

from __future__ import annotations

from pathlib import Path

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, LABELED, VALIDATION, Warehouse, record_summary, stage_summary
from curation.score.stage import hidden_cache_for


def tagger_config(config: CurationConfig):
    from curation.tagger.model import TaggerConfig

    return TaggerConfig(encoder=config.tagger.encoder, hidden=config.tagger.hidden, epochs=config.tagger.epochs)


def tagger_stage(config: CurationConfig, warehouse: Warehouse, model_key: str, progress=None) -> dict:
    """Train (or reuse) the tagger on the labeled sets' calibration splits and store its facts for the
    labeled documents; the report (per-domain metrics, thresholds) is the stage summary."""
    if not config.tagger.enabled:
        summary = {"enabled": False}
        record_summary(warehouse, CALIBRATION_BATCH, "pii_tagger", summary)
        return summary
    from curation.detect.combination import train_stage
    from curation.score.scorer import cache_root

    tagger, report = train_stage(
        warehouse,
        model_key,
        hidden_cache_for(config, model_key),
        (VALIDATION, LABELED),
        tagger_config(config),
        cache_root(),
        progress=progress,
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


def current_tagger_path(warehouse: Warehouse) -> Path | None:
    """The saved head the last pii_tagger materialization trained (None when the tagger is off); raises
    RuntimeError when it is not in the local cache."""
    from curation.detect.combination import tagger_path
    from curation.score.scorer import cache_root

    summary = stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger")
    if not summary.get("enabled"):
        return None
    path = tagger_path(cache_root(), summary["digest"])
    if not path.exists():
        raise RuntimeError(
            f"tagger {summary['tagger_key']} is not in the local cache ({path}); rematerialize pii_tagger"
        )
    return path


def current_tagger(warehouse: Warehouse):
    """The tagger the last pii_tagger materialization trained (None when the tagger is off)."""
    from curation.tagger.model import Tagger

    path = current_tagger_path(warehouse)
    return None if path is None else Tagger.load(path)


def tagger_spans_stage(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """The tagger's token probabilities and spans, and CredSweeper's spans, for the batch (facts)."""
    tagger = current_tagger(warehouse) if config.tagger.enabled else None
    if tagger is None:
        return {"enabled": False}
    from curation.detect.combination import tag_corpus_stage

    # the batch domain's own threshold when the tagger learned that domain, else the calibration domain's:
    # the threshold the calibration's detector combination was measured with
    thresholds = tagger.report.get("thresholds", {})
    domain = config.batch_domain if config.batch_domain in thresholds else config.calibration_domain
    cache = hidden_cache_for(config, model_key)
    summary = tag_corpus_stage(warehouse, config.batch_id, model_key, cache, tagger, domain)
    record_summary(warehouse, config.batch_id, "tagger_spans", summary)
    return summary
