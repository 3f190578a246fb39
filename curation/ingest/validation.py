"""The labeled sets as warehouse rows (``validation_docs``, ``gold_spans``), split into calibration and
held-out parts; the ingestion stage writes them and the calibration-is-current check compares with them."""

from __future__ import annotations

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, LABELED, VALIDATION, sha256_text
from curation.labels.sets import load_labeled, split_records


def validation_rows(config: CurationConfig) -> tuple[list[tuple], list[tuple], dict]:
    """The rows :func:`validation_stage` writes (``validation_docs``, ``gold_spans``) and its summary, from
    the labeled files alone: the calibration-is-current check compares the warehouse with exactly this."""
    sets = [(VALIDATION, config.calibration_domain, config.validation_path)]
    if config.tagger.enabled:
        sets += [(LABELED, domain, path) for domain, path in config.tagger_sets()]
    rows, gold, summary = [], [], {}
    label_map = config.label_table()
    for dataset, domain, path in sets:
        records = load_labeled(path, label_map)
        calib, heldout = split_records(records, 1 - config.calibration.heldout_fraction, config.calibration.seed)
        prefix = "" if dataset == VALIDATION else f"{domain}/"
        for split, part in (("calibration", calib), ("heldout", heldout)):
            for r in part:
                doc_id = prefix + r.id
                sha = sha256_text(r.text)
                rows.append((dataset, doc_id, r.scope_id or r.id, r.kind, r.text, sha, len(r.text), split, domain))
                gold.extend((dataset, CALIBRATION_BATCH, doc_id, s.start, s.end, s.label) for s in r.spans)
        entry = {"records": len(records), "calibration_records": len(calib), "heldout_records": len(heldout)}
        if dataset == VALIDATION:
            summary = {"source": str(path.name), "domain": domain, **entry}
        else:
            summary.setdefault("tagger_sets", {})[domain] = {"source": path.name, **entry}
    summary["gold_spans"] = sum(1 for g in gold if g[0] == VALIDATION)
    return rows, gold, summary
