"""Release: the dataset card's facts and the tables a release ships (configured views, public ids)."""

from __future__ import annotations

from curation.core.config import CurationConfig
from curation.core.warehouse import CALIBRATION_BATCH, Warehouse, stage_summary
from curation.delivery.card import CardInfo
from curation.delivery.tables import internal_release_tables
from curation.policy.calibration import finite_or_none
from curation.policy.stored import current_calibration


def card_info(
    config: CurationConfig,
    warehouse: Warehouse,
    model_key: str,
    *,
    versions: dict,
    key_id: str,
    is_dev_key: bool,
    gates: dict[str, dict],
    convention_yaml: str,
    plots: dict[str, str],
) -> CardInfo:
    """Everything the dataset card prints, from the warehouse (counts, metrics, gates; no values)."""
    batch = config.batch_id
    counts = warehouse.query(
        "SELECT (SELECT count(*) FROM documents WHERE batch_id = $1) AS docs,"
        " (SELECT count(*) FROM quarantine WHERE batch_id = $1) AS quarantined,"
        " (SELECT coalesce(sum(n_chars), 0) FROM documents WHERE batch_id = $1) AS chars,"
        ' (SELECT coalesce(sum("end" - "start"), 0) FROM mask_spans WHERE batch_id = $1) AS masked',
        [batch],
    ).row(0, named=True)
    labels = warehouse.query(
        "SELECT label, count(*) AS n FROM mask_spans WHERE batch_id = ? GROUP BY 1 ORDER BY 1", [batch]
    )
    _, applied, summary = current_calibration(config, warehouse, model_key)
    from curation.gates.release_gates import calibration_coverage

    mask_summary = stage_summary(warehouse, batch, "mask_spans")
    coverage = calibration_coverage(summary, config, mask_summary)
    validation = summary["validation"]
    heldout = summary["heldout"]
    residual = gates.get("residual_detector_audit")
    leak = gates.get("residual_leak_scan", {})
    limitations = []
    if is_dev_key:
        limitations.append("Surrogates were made with a generated DEV key: this build is not a real delivery.")
    language = config.detectors.language or "en"
    if "spacy_model" not in versions:
        limitations.append(
            f"No NER model ran on this {language!r} batch (none installed for it, or NER switched off): names "
            "and places were found by the learned tagger and the rules alone."
        )
    return CardInfo(
        pretty_name=config.release.pretty_name,
        languages=[language],
        summary=(
            "Privacy-sanitized text/code corpus produced by `curation`: detector and surprise-masking spans, "
            "rewritten with consistent fictional surrogates (and a typed-tag redacted view)."
        ),
        license=config.release.license,
        tags=["privacy", "pii-redaction", "surprise-masking"],
        source_batches=[batch],
        documents=counts["docs"],
        quarantined=counts["quarantined"],
        masked_chars=int(counts["masked"]),
        total_chars=int(counts["chars"]),
        spans_per_label=dict(labels.iter_rows()),
        convention_yaml=convention_yaml,
        key_id=key_id,
        detectors=versions,
        reference_model={"model_key": model_key, "scoring": config.scoring.cache_fields()},
        thresholds={
            "policy": applied.policy,
            "params": applied.params.name,
            "threshold": finite_or_none(applied.threshold),
            "per_kind_thresholds": {k: finite_or_none(v) for k, v in applied.per_kind_thresholds.items()},
            "objective": config.calibration.objective,
            "collateral_budget": config.calibration.collateral_budget,
            **(
                {"objective_bought": _objective_line(summary["operating_point"], config.calibration.collateral_budget)}
                if summary.get("operating_point")
                else {}
            ),
            **({"policy_rule": _policy_rule_line(summary["policy_rule"])} if summary.get("policy_rule") else {}),
            **(
                {"surprise_transfer": _transfer_line(mask_summary["surprise_transfer"])}
                if mask_summary.get("surprise_transfer")
                else {}
            ),
            **(
                {"detector_transfer": _detector_transfer_line(mask_summary["detector_transfer"])}
                if mask_summary.get("detector_transfer")
                else {}
            ),
            **({"honorifics": _honorifics_line(summary["honorifics"])} if summary.get("honorifics") else {}),
        },
        validation_metrics={**(validation["metrics"] or {}), "auroc": validation["auroc"]},
        held_out_metrics={**(heldout["metrics"] or {}), "auroc": heldout["auroc"]},
        plots=plots,
        collateral={
            "heldout_collateral_rate": (heldout["metrics"] or {}).get("fpr"),
            "heldout_coverage": (heldout["metrics"] or {}).get("tpr"),
            "batch_masked_fraction": round(counts["masked"] / counts["chars"], 4) if counts["chars"] else None,
            "automatic_recall_on_supplied_labels": mask_summary.get("automatic_recall_on_supplied_labels"),
            "supplied_labels_masked": mask_summary.get("supplied_labels_masked"),
            "name_variant_spans": (mask_summary.get("name_variants") or {}).get("variant_spans"),
        },
        residual_audit=residual,
        independent_audit=gates.get("residual_independent_audit"),
        known_value_findings=leak.get("findings"),
        gates=gates,
        limitations=limitations,
        contact=config.release.contact,
        tagger={
            **{k: v for k, v in stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger").items() if k != "enabled"},
            "detector_combination": summary.get("detector_combination"),
            "detector_recognizers": summary.get("detector_recognizers"),
            "dropped_by_combination": mask_summary.get("dropped_by_combination"),
        }
        if config.tagger.enabled
        else {},
        calibration_coverage={"passed": coverage.passed, **coverage.detail},
        # the views the release ships, so the card's `configs:` lets `datasets` load the folder as is
        tables={name: frame.height for name, frame in internal_release_tables(config, warehouse).items()},
    )


def _honorifics_line(evidence: dict) -> str:
    """Whether a name's title is masked with it, and the calibration labels that said so."""
    said = f"calibration labels: {evidence['private']} titles of names private, {evidence['public']} public"
    return f"masked with the name ({said})" if evidence["masked"] else f"kept before a masked name ({said})"


def _detector_transfer_line(transfer: dict) -> str:
    """Whether the detectors' collateral carried over to this batch (label-free), in words."""
    measured = (
        f"the detectors mask {transfer['batch_detector_fraction']:.2%} of this batch's text, "
        f"{transfer['calibration_detector_fraction']:.2%} of the calibration documents' (limit {transfer['limit']:.2%})"
    )
    if transfer["held"]:
        return f"held: {measured}"
    return (
        f"did not hold: {measured}; the collateral reported above was measured on other text, so label "
        "documents of this batch (`curation label export`) and calibrate on them"
    )


def _transfer_line(transfer: dict) -> str:
    """Whether the surprise threshold carried over to this batch (label-free), in words."""
    measured = (
        f"surprise masks {transfer['batch_added_fraction']:.2%} of this batch's text outside detector spans, "
        f"{transfer['calibration_added_fraction']:.2%} of the calibration documents' (limit {transfer['limit']:.2%})"
    )
    if transfer["held"]:
        return f"held: {measured}"
    return (
        f"did not hold, so {transfer['calibrated_policy']} fell back to {transfer['applied_policy']}: {measured}; "
        "label documents of this batch (`curation label export`) to calibrate on text like it"
    )


def _objective_line(point: dict, budget: float) -> str:
    """What the calibration objective bought on the calibration labels, with the collateral bound it held."""
    line = f"recall {point.get('tpr', 0):.3f} at collateral {point.get('fpr', 0):.4f} on the calibration labels"
    if point.get("fpr_upper") is not None:
        line += f" (95% upper bound over documents {point['fpr_upper']:.4f}, budget {budget})"
    else:
        line += f" (measured, budget {budget})"
    return line


def _policy_rule_line(rule: dict) -> str:
    """The one-standard-error choice between the best threshold policy and the detectors alone, in words."""
    metric, best, detectors = rule["metric"], rule["best"], rule["detectors"]
    if best["policy"] == rule["chosen"] == "detectors":
        return (
            f"detectors (best on calibration outright: {metric} {best[metric]}; no threshold policy reached "
            "it, so the one standard error rule had nothing to weigh)"
        )
    return (
        f"{rule['chosen']} (best on calibration: {best['policy']} {metric} {best[metric]}, detectors alone "
        f"{detectors[metric]}, one standard error {rule['standard_error']})"
    )
