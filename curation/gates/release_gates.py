"""Release gates as plain functions: each returns a GateResult of counts, rates and hashes.

The Dagster checks in ``checks/`` call these and record the outcome in ``gate_results`` keyed by
the digest of the release text, so a release can ship only text that passed every gate.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import polars as pl

from curation.core.config import CurationConfig
from curation.core.spans import Span
from curation.core.warehouse import CORPUS, Warehouse
from curation.detect.combination import CREDSWEEPER, TAGGER
from curation.detect.suite import detector_key
from curation.gates.audit import audit_sample, find_known_values, sampled_residual_audit
from curation.gates.release_text import TAG, content_digest, original_text_only, original_values

RESIDUAL_LEAK_SCAN = "residual_leak_scan"
RESIDUAL_DETECTOR_AUDIT = "residual_detector_audit"
RESIDUAL_INDEPENDENT_AUDIT = "residual_independent_audit"
MASKED_FRACTION_BUDGET = "masked_fraction_budget"
CALIBRATION_HEALTH = "calibration_health"
SURROGATE_CONSISTENCY = "surrogate_consistency"
SCORE_DRIFT = "score_drift"
DOCUMENT_CONTRACT = "document_contract"
MASK_SPAN_CONTRACT = "mask_span_contract"
TOKEN_SCORE_CONTRACT = "token_score_contract"
CALIBRATION_COVERAGE = "calibration_coverage"

# Gates recorded against the release text; the release asset refuses to ship without all of them.
RELEASE_GATES = (RESIDUAL_LEAK_SCAN, RESIDUAL_DETECTOR_AUDIT, SURROGATE_CONSISTENCY, RESIDUAL_INDEPENDENT_AUDIT)
# Every blocking gate a release needs a passed result of (release-text gates + upstream gates).
REQUIRED_GATES = (
    *RELEASE_GATES,
    DOCUMENT_CONTRACT,
    TOKEN_SCORE_CONTRACT,
    MASK_SPAN_CONTRACT,
    MASKED_FRACTION_BUDGET,
    CALIBRATION_HEALTH,
)
# Warnings: shown in the card and the UI, never a reason to refuse a release. A gate may also say so in its
# own result (`advisory: true`): calibration_coverage does unless `gates.require_domain_labels` is set.
ADVISORY_GATES = (SCORE_DRIFT,)


def required_gates(config: CurationConfig) -> tuple[str, ...]:
    """The gates a release of this config needs a passed result of."""
    return (*REQUIRED_GATES, CALIBRATION_COVERAGE) if config.gates.require_domain_labels else REQUIRED_GATES


def is_advisory(name: str, detail: dict) -> bool:
    return name in ADVISORY_GATES or bool(detail.get("advisory"))


@dataclass
class GateResult:
    name: str
    passed: bool
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, **self.detail}

    @property
    def reason(self) -> str:
        return str(self.detail.get("reason") or "")


def explained(result: GateResult, measured: str, limit: str, reason: str) -> GateResult:
    """The gate with what it measured, the limit it applied and a one-line reason, pass or fail (shown in
    the UI, the run log and the card); an explanation the gate already gave is kept."""
    detail = {"measured": measured, "limit": limit, **result.detail}
    detail["reason"] = result.detail.get("reason") or reason
    return GateResult(result.name, result.passed, detail)


def residual_leak_scan(warehouse: Warehouse, batch_id: str, key: bytes | None, audit_id: str) -> GateResult:
    """No original value (masked or gold) appears in the release text, verbatim or normalized."""
    texts = original_text_only(warehouse, batch_id)
    findings = find_known_values(texts, original_values(warehouse, batch_id), key=key)
    rows = [
        (audit_id, batch_id, RESIDUAL_LEAK_SCAN, f.doc_id, f.label, f.value_sha256, f.kind, f.count) for f in findings
    ]
    warehouse.replace(
        "audit_findings",
        pl.DataFrame(
            rows,
            schema=["audit_id", "batch_id", "check_name", "doc_id", "label", "value_sha256", "kind", "count"],
            orient="row",
        ),
        "batch_id = ? AND check_name = ?",
        [batch_id, RESIDUAL_LEAK_SCAN],
    )
    by_label: dict[str, int] = {}
    for f in findings:
        by_label[f.label] = by_label.get(f.label, 0) + f.count
    occurrences = sum(by_label.values())
    result = GateResult(
        RESIDUAL_LEAK_SCAN,
        passed=len(texts) > 0 and not findings,
        detail={
            "texts_scanned": len(texts),
            "values_checked": findings.values_checked,
            "values_skipped_short": findings.values_skipped,
            "findings": len(findings),
            "occurrences_by_label": by_label,
            "reason": "" if texts else "no release text to scan",
        },
    )
    return explained(
        result,
        f"{len(findings)} original values found ({occurrences} occurrences) in {len(texts)} release texts",
        "0 findings",
        f"{len(findings)} masked or gold values survive in the release text: {', '.join(sorted(by_label))}"
        if findings
        else f"no masked or gold value survives in the release text ({findings.values_checked} values checked)",
    )


def residual_detector_audit(
    warehouse: Warehouse, config: CurationConfig, suite, digest: str | None = None
) -> GateResult:
    """Re-run the detectors on a sample of the redacted view; bound the residual rate (Clopper-Pearson).

    Detections inside our own ``[LABEL]`` tags do not count.
    """
    g = config.gates
    key = detector_key(config, suite)
    audit_config = {
        "detector_key": key,
        "sample": g.audit_sample,
        "seed": g.seed,
        "budget": g.residual_budget,
        "confidence": g.confidence,
    }
    digest = digest or content_digest(warehouse, config.batch_id)
    # Same release text, detectors and audit settings: the audit's answer cannot change.
    reused = reused_result(warehouse, config.batch_id, digest, RESIDUAL_DETECTOR_AUDIT, "audit_config", audit_config)
    if reused is not None:
        return reused
    frame = warehouse.query(
        "SELECT doc_id, text, kind FROM redacted_view WHERE batch_id = ? ORDER BY doc_id", [config.batch_id]
    )
    docs = {doc_id: (text, kind) for doc_id, text, kind in frame.iter_rows()}
    labels: dict[str, int] = {}
    sample = audit_sample(sorted(docs), g.audit_sample, g.seed)
    # A sampled document the policy left untouched has the release text `detector_spans` already ran on with
    # these detectors: its stored spans are this run's answer. The others are detected in one batched call.
    # (Not when the suite runs CredSweeper itself: the tagger step rewrites those rows under the same source.)
    reusable = not suite.config.use_credsweeper
    detected = _stored_detections(warehouse, config.batch_id, key, sample) if reusable else {}
    todo = [d for d in sample if d not in detected]
    if todo:
        found = suite.detect([docs[d][0] for d in todo], [docs[d][1] for d in todo])
        detected.update(zip(todo, found, strict=True))

    def has_residual(doc_id: str) -> bool:
        text, _ = docs[doc_id]
        tags = [Span(*m.span()) for m in TAG.finditer(text)]
        residual = [s for s in detected[doc_id] if not any(s.overlaps(t) for t in tags)]
        for s in residual:
            labels[s.label] = labels.get(s.label, 0) + 1
        return bool(residual)

    audit = sampled_residual_audit(sorted(docs), has_residual, g.audit_sample, g.seed, g.confidence, g.residual_budget)
    detail = {k: getattr(audit, k) for k in audit.__dataclass_fields__}
    detail["residual_spans_by_label"] = labels
    detail["documents_detected"] = len(todo)
    detail["documents_unchanged_reused"] = len(sample) - len(todo)
    detail["audit_config"] = audit_config
    census = audit.sampled == audit.population
    measured = (
        f"residual rate {audit.rate:.4f} ({audit.with_residual} of {audit.population} documents, all audited)"
        if census
        else f"upper bound {audit.upper_bound:.4f} ({audit.with_residual} of {audit.sampled} sampled documents)"
    )
    return explained(
        GateResult(RESIDUAL_DETECTOR_AUDIT, bool(audit.passed), detail),
        measured,
        f"residual budget {g.residual_budget:.4f}" + ("" if census else f" at {g.confidence:.0%} confidence"),
        audit.reason,
    )


def _stored_detections(warehouse: Warehouse, batch_id: str, key: str, doc_ids: list[str]) -> dict[str, list[Span]]:
    """Spans stored by `detector_spans` (same detector key, same text) for documents whose redacted text is
    their original text (no mask span touched them). The table also holds the tagger step's rows (tagger
    and CredSweeper signals): those are not the suite's and are left out."""
    if not doc_ids:
        return {}
    frame = warehouse.query(
        "SELECT d.doc_id, s.start, s.\"end\", s.label, s.score, s.source FROM documents d "
        "JOIN redacted_view r ON r.batch_id = d.batch_id AND r.doc_id = d.doc_id AND r.text = d.text "
        "JOIN detector_runs k ON k.dataset = ? AND k.batch_id = d.batch_id AND k.doc_id = d.doc_id "
        "AND k.sha256 = d.sha256 AND k.detector_key = ? "
        "LEFT JOIN detector_spans s ON s.dataset = k.dataset AND s.batch_id = d.batch_id AND s.doc_id = d.doc_id "
        "AND s.source NOT IN (?, ?) "
        "WHERE d.batch_id = ? AND d.doc_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY d.doc_id, s.start, s.\"end\"",
        [CORPUS, key, TAGGER, CREDSWEEPER, batch_id, doc_ids],
    )
    found: dict[str, list[Span]] = {}
    for doc_id, start, end, label, score, source in frame.iter_rows():
        spans = found.setdefault(doc_id, [])
        if start is not None:
            spans.append(Span(start, end, label, score, source))
    return found


def residual_independent_audit(warehouse: Warehouse, config: CurationConfig, model_key: str) -> GateResult:
    """Second, independent residual signals (`curation.gates.residual_signals`): the name-variant scan of every
    person of the batch over the release text and the partial-leak scan (structured identifiers partly
    masked, surrogates that kept a part of their original) decide; surprise at a recall-oriented threshold
    is reported beside them, advisory. No release text to scan is no evidence: failed."""
    from curation.gates.residual_signals import name_variant_scan, partial_leak_scan, surprise_residual_signal

    names = name_variant_scan(config, warehouse)
    partial = partial_leak_scan(config, warehouse)
    surprise = surprise_residual_signal(config, warehouse, model_key)
    passed = bool(names["passed"]) and bool(partial["passed"])
    problems = []
    if names["reason"] or not names["passed"]:
        problems.append(names["reason"] or f"{names['leaked_name_words']} name words left")
    if not partial["passed"]:
        problems.append(
            f"{partial['findings']} partial leaks (structured identifiers partly masked: "
            f"{partial['structured_partly_masked_by_label']}; surrogates keeping a part of their original: "
            f"{partial['surrogate_kept_parts_by_label']})"
        )
    detail = {
        "decided_by": "name_variant_scan+partial_leak_scan",
        "name_variant_scan": {k: v for k, v in names.items() if k not in ("passed", "reason")},
        "partial_leak_scan": {k: v for k, v in partial.items() if k != "passed"},
        "surprise_signal": surprise,
        "reason": "; ".join(problems),
    }
    measured = (
        f"{names['leaked_name_words']} name words of {names['people']} people left in "
        f"{names['documents_with_leaks']} of {names['texts_scanned']} release texts; "
        f"{partial['findings']} partial leaks"
    )
    reason = (
        f"no word of a masked person's name is left in the release text ({names['name_words']} words checked), "
        f"no structured identifier is partly masked ({partial['structured_identifiers_checked']} checked) and no "
        f"surrogate keeps a part of its original ({partial['surrogates_checked']} checked)"
        if passed
        else "; ".join(problems)
    )
    return explained(GateResult(RESIDUAL_INDEPENDENT_AUDIT, passed, detail), measured, "0", reason)


def masked_fraction_budget(warehouse: Warehouse, config: CurationConfig) -> GateResult:
    """Masked fraction of the batch within bounds: catches a model that masks everything or nothing."""
    row = warehouse.query(
        "SELECT (SELECT sum(n_chars) FROM documents WHERE batch_id = $1) AS total, "
        '(SELECT sum("end" - "start") FROM mask_spans WHERE batch_id = $1) AS masked',
        [config.batch_id],
    ).row(0)
    total, masked = int(row[0] or 0), int(row[1] or 0)
    g = config.gates
    fraction = masked / total if total else float("nan")
    passed = total > 0 and g.masked_fraction_min <= fraction <= g.masked_fraction_max
    if not total:
        why = ""
    elif passed:
        why = f"masked fraction {fraction:.4f} within [{g.masked_fraction_min}, {g.masked_fraction_max}]"
    elif fraction > g.masked_fraction_max:
        why = f"masked fraction {fraction:.4f} above the maximum {g.masked_fraction_max}: masking most of the text"
    else:
        why = f"masked fraction {fraction:.4f} below the minimum {g.masked_fraction_min}: masking almost nothing"
    result = GateResult(
        MASKED_FRACTION_BUDGET,
        passed,
        {
            "total_chars": total,
            "masked_chars": masked,
            "masked_fraction": round(fraction, 4) if total else None,
            "min": g.masked_fraction_min,
            "max": g.masked_fraction_max,
            "reason": "" if total else "empty batch: no characters to mask",
        },
    )
    measured = f"masked fraction {fraction:.4f} ({masked} of {total} characters)" if total else "no characters"
    return explained(result, measured, f"[{g.masked_fraction_min}, {g.masked_fraction_max}]", why)


def calibration_coverage(summary: dict, config: CurationConfig, mask_summary: dict | None = None) -> GateResult:
    """Was this batch's domain calibrated on labeled data of its own, and enough of it? Otherwise the
    collateral and recall the calibration reports were measured on other text and do not carry over (on
    informal posts calibrated on synthetic PII, precision fell to 0.32 and collateral tripled the budget).
    And did the detectors' collateral carry over to the batch (``mask_summary``'s label-free
    ``detector_transfer``)? Advisory (WARN) unless `gates.require_domain_labels`; the card says the same."""
    g = config.gates
    domain, calibrated_on = config.batch_domain, summary.get("domain") or config.calibration_domain
    heldout = summary.get("heldout") or {}
    docs = int(heldout.get("documents") or 0)
    target_chars = int((heldout.get("metrics") or {}).get("target_chars") or 0)
    label_cmd = f"`curation label export INPUT --n 40 --domain {domain} --out tasks.json`"
    detail = {
        "domain": domain,
        "calibrated_on": calibrated_on,
        "calibration_documents": int((summary.get("validation") or {}).get("documents") or 0),
        "heldout_documents": docs,
        "heldout_target_chars": target_chars,
        "min_heldout_documents": g.min_domain_heldout_docs,
        "min_heldout_target_chars": g.min_domain_target_chars,
        "heldout_intervals": heldout.get("intervals"),
        "advisory": not g.require_domain_labels,
    }
    if calibrated_on != domain:
        detail["reason"] = (
            f"collateral and recall are unverified for domain {domain}: calibrated on {calibrated_on}; "
            f"label documents of {domain} with {label_cmd}, then register them (tagger.labeled_sets "
            f"'{domain}=labeled.jsonl')"
        )
        passed = False
    elif docs < g.min_domain_heldout_docs or target_chars < g.min_domain_target_chars:
        detail["reason"] = (
            f"collateral and recall of domain {domain} rest on {docs} held-out documents with {target_chars} "
            f"target characters (needs >= {g.min_domain_heldout_docs} and >= {g.min_domain_target_chars}): "
            f"label more with {label_cmd}"
        )
        passed = False
    else:
        passed = True
    transfer = (mask_summary or {}).get("detector_transfer")
    if transfer is not None:
        detail["detector_transfer"] = transfer
        if passed and not transfer["held"]:
            detail["reason"] = (
                f"the detectors mask {transfer['batch_detector_fraction']:.1%} of this batch, "
                f"{transfer['calibration_detector_fraction']:.1%} of the calibration documents (limit "
                f"{transfer['limit']:.1%}): the collateral the card reports cannot hold here; label documents "
                f"like these with {label_cmd} (another language? set `languages` for domain {domain})"
            )
            passed = False
    return explained(
        GateResult(CALIBRATION_COVERAGE, passed, detail),
        f"domain {domain}, calibrated on {calibrated_on}: {docs} held-out documents, {target_chars} target chars",
        f"calibrated on its own domain, >= {g.min_domain_heldout_docs} documents and "
        f">= {g.min_domain_target_chars} target chars held out",
        f"domain {domain} calibrated and verified on its own labeled data",
    )


def calibration_health(summary: dict, config: CurationConfig) -> GateResult:
    """Held-out coverage and collateral within budget; surprise AUROC above the minimum."""
    g = config.gates
    held = (summary.get("heldout") or {}).get("metrics") or {}
    auroc = summary.get("surprise_auroc")
    checks = {
        "heldout_tpr": held.get("tpr"),
        "heldout_fpr": held.get("fpr"),
        "surprise_auroc": auroc,
    }
    problems = []
    if held.get("tpr") is None or held["tpr"] < g.coverage_goal:
        problems.append(f"held-out coverage {held.get('tpr')} below goal {g.coverage_goal}")
    if held.get("fpr") is None or held["fpr"] > g.collateral_budget:
        problems.append(f"held-out collateral {held.get('fpr')} above budget {g.collateral_budget}")
    if summary.get("policy") != "detectors" and (auroc is None or auroc < g.min_auroc):
        problems.append(f"surprise AUROC {auroc} below minimum {g.min_auroc}")
    result = GateResult(
        CALIBRATION_HEALTH,
        not problems,
        {
            **checks,
            "coverage_goal": g.coverage_goal,
            "collateral_budget": g.collateral_budget,
            "min_auroc": g.min_auroc,
            "problems": problems,
        },
    )
    shown = {k: f"{v:.4g}" if isinstance(v, float) else str(v) for k, v in checks.items()}
    return explained(
        result,
        f"held-out coverage {shown['heldout_tpr']}, collateral {shown['heldout_fpr']}, "
        f"surprise AUROC {shown['surprise_auroc']}",
        f"coverage >= {g.coverage_goal}, collateral <= {g.collateral_budget}, AUROC >= {g.min_auroc}",
        "; ".join(problems) if problems else "held-out coverage, collateral and surprise AUROC within their limits",
    )


DRIFT_BINS = np.arange(0.0, 16.5, 0.5)  # token NLL in nats; the last bin also holds everything above


def population_stability_index(expected: np.ndarray, actual: np.ndarray, eps: float = 1e-4) -> float:
    """PSI between two histograms (counts): sum (a - e) * ln(a / e) over bins, with a floor so empty
    bins stay finite. Rule of thumb: < 0.1 stable, 0.1-0.25 moderate, > 0.25 shifted."""
    e = np.maximum(expected / max(expected.sum(), 1), eps)
    a = np.maximum(actual / max(actual.sum(), 1), eps)
    return float(np.sum((a - e) * np.log(a / e)))


def _nll_histogram(warehouse: Warehouse, model_key: str, sha_sql: str, params: list) -> np.ndarray:
    frame = warehouse.query(
        f"SELECT least(floor(nll / 0.5), {len(DRIFT_BINS) - 2})::INTEGER AS bin, count(*) AS n FROM token_scores "
        f"WHERE model_key = ? AND doc_sha256 IN ({sha_sql}) AND isfinite(nll) GROUP BY 1",
        [model_key, *params],
    )
    counts = np.zeros(len(DRIFT_BINS) - 1)
    for b, n in frame.iter_rows():
        counts[max(int(b), 0)] += n
    return counts


def score_drift(warehouse: Warehouse, config: CurationConfig, model_key: str) -> GateResult:
    """Has this batch's token-surprise distribution moved away from the data the thresholds were
    calibrated on (and from the batches before it)? Shifted scores make a calibrated threshold mask too
    much or too little, so a drift warning asks for recalibration on data like this batch."""
    batch = config.batch_id
    this = _nll_histogram(warehouse, model_key, "SELECT sha256 FROM documents WHERE batch_id = ?", [batch])
    reference = _nll_histogram(
        warehouse, model_key, "SELECT sha256 FROM validation_docs WHERE dataset = 'validation'", []
    )
    others = _nll_histogram(warehouse, model_key, "SELECT sha256 FROM documents WHERE batch_id <> ?", [batch])
    limit = config.gates.drift_max_psi
    detail: dict = {"tokens": int(this.sum()), "max_psi": limit}
    if this.sum() == 0 or reference.sum() == 0:
        detail["reason"] = "no token scores for this batch or for the calibration data: drift cannot be judged"
        return explained(GateResult(SCORE_DRIFT, False, detail), "no token scores", f"PSI <= {limit}", "")
    tokens, minimum = int(this.sum()), config.gates.drift_min_tokens
    if tokens < minimum:
        detail["reason"] = (
            f"drift not judged: {tokens} tokens is too few for a meaningful PSI (needs >= {minimum}; a batch drawn "
            f"from the calibration data itself would score about {32 / tokens:.2f} by chance)"
        )
        return explained(GateResult(SCORE_DRIFT, False, detail), f"{tokens} tokens", f">= {minimum} tokens", "")
    detail["psi_vs_calibration"] = round(population_stability_index(reference, this), 4)
    detail["psi_vs_other_batches"] = round(population_stability_index(others, this), 4) if others.sum() else None
    # The thresholds were fitted to the calibration data, so that comparison decides; the comparison with
    # the other batches is reported to tell "this batch is unusual" from "all deliveries have moved".
    passed = detail["psi_vs_calibration"] <= limit
    detail["reason"] = "" if passed else "token surprise distribution shifted: recalibrate on data like this batch"
    return explained(
        GateResult(SCORE_DRIFT, passed, detail),
        f"PSI {detail['psi_vs_calibration']:.4f} vs the calibration data ({int(this.sum())} tokens)",
        f"PSI <= {limit}",
        "token surprise distribution close to the calibration data",
    )


def batch_surrogate_consistency(warehouse: Warehouse, open_vault, key: bytes, batch_id: str) -> tuple[GateResult, str]:
    """:func:`surrogate_consistency` of one batch, and the content digest it judged, in the documented lock
    order: the warehouse reads in one short session, then the vault alone. Holding the warehouse while
    waiting for the vault deadlocked with a parallel batch's surrogate stage, which held the vault while
    waiting for the warehouse (both waited out the 300 s lock timeout)."""
    with warehouse.session():
        digest = content_digest(warehouse, batch_id)
        replacements = warehouse.query(
            "SELECT coalesce(sum(n_replacements), 0) FROM surrogate_view WHERE batch_id = ?", [batch_id]
        ).item()
        originals = original_values(warehouse, batch_id)
    with open_vault() as vault:
        result = surrogate_consistency(vault, key, originals, batch_id=batch_id, replacements=int(replacements))
    return result, digest


def surrogate_consistency(
    vault, key: bytes, batch_originals: list[tuple[str, str]], batch_id: str | None = None, replacements: int = 0
) -> GateResult:
    """One surrogate per (scope, type, value); no invented surrogate equals an original value of the batch.

    Records carry the style that made them: shifted dates, tags and generalizations equal to an original
    are counted in the detail (``equal_to_an_original_by_style``) but do not fail the gate.

    With ``batch_id`` the batch is judged by itself: the surrogates its own text uses (the vault's
    ``batch_surrogates``), against its own originals; other batches' mappings are not its business. A
    value's spellings ("Dana", "DANA", "Ms. Dana") agree when their surrogates normalize alike.
    ``replacements`` (spans the batch's text replaced) > 0 with no recorded surrogate is no evidence: fail.
    """
    from curation.views.vault import hmac_value, normalize_value

    records = list(vault.records()) if batch_id is None else vault.batch_records(batch_id)
    rendered: dict[tuple[str, str, str], set[str]] = {}
    for r in records:
        rendered.setdefault((r.scope_id, r.entity_type, r.value_hmac), set()).add(
            normalize_value(r.entity_type, r.surrogate)
        )
    conflicting = sum(1 for texts in rendered.values() if len(texts) > 1)
    originals = {hmac_value(key, value, label) for label, value in batch_originals}
    equal = [r for r in records if hmac_value(key, r.surrogate, r.entity_type) in originals]
    # Only invented values must differ from every original; a shifted date that equals another original
    # date is kept by the convention (intervals win), and a tag or generalization invents nothing.
    reused = sum(1 for r in equal if r.style == "surrogate")
    missing = batch_id is not None and replacements > 0 and not records
    detail = {
        "scope": "batch" if batch_id is not None else "vault",
        "vault_records": len(records),
        "values": len(rendered),
        "scopes": len({r.scope_id for r in records}),
        "conflicting_mappings": conflicting,
        "originals_reused": reused,
        "equal_to_an_original_by_style": dict(Counter(r.style for r in equal if r.style != "surrogate")),
    }
    if missing:
        detail["reason"] = f"{replacements} replacements but no surrogate records of this batch in the vault"
    result = GateResult(SURROGATE_CONSISTENCY, passed=conflicting == 0 and reused == 0 and not missing, detail=detail)
    return explained(
        result,
        f"{conflicting} conflicting mappings, {reused} originals reused as surrogates "
        f"({len(records)} {'batch' if batch_id is not None else 'vault'} records)",
        "0 conflicting mappings, 0 originals reused",
        "one surrogate per (scope, type, value), none equal to an original of the batch"
        if result.passed
        else f"{conflicting} values have more than one surrogate; {reused} surrogates equal an original value",
    )


def record_gate(warehouse: Warehouse, batch_id: str, digest: str, result: GateResult, run_id: str) -> None:
    warehouse.append(
        "gate_results",
        pl.DataFrame(
            {
                "batch_id": [batch_id],
                "content_digest": [digest],
                "check_name": [result.name],
                "passed": [result.passed],
                "detail": [json.dumps(result.detail, default=_json_default)],
                "run_id": [run_id],
                "created_at": [datetime.now(UTC).replace(tzinfo=None)],
            }
        ),
    )


def run_blocking_failures(warehouse: Warehouse, batch_id: str, run_id: str) -> dict[str, str]:
    """Every blocking gate that failed for ``batch_id`` in run ``run_id`` so far, with its reason (the latest
    result of each gate in that run). Shown together on the release partition: one gate per observation
    would leave the UI showing only the last one."""
    frame = warehouse.query(
        "SELECT check_name, passed, detail FROM gate_results WHERE batch_id = ? AND run_id = ? "
        "QUALIFY row_number() OVER (PARTITION BY check_name ORDER BY created_at DESC) = 1 ORDER BY check_name",
        [batch_id, run_id],
    )
    return {
        name: str(json.loads(detail).get("reason") or "failed")
        for name, passed, detail in frame.iter_rows()
        if not passed and not is_advisory(name, json.loads(detail))
    }


def gate_status(warehouse: Warehouse, batch_id: str, digest: str) -> dict[str, dict]:
    """Latest recorded result of each gate for exactly this release content."""
    frame = warehouse.query(
        "SELECT check_name, passed, detail FROM gate_results WHERE batch_id = ? AND content_digest = ? "
        "QUALIFY row_number() OVER (PARTITION BY check_name ORDER BY created_at DESC) = 1",
        [batch_id, digest],
    )
    return {name: {"passed": bool(p), **json.loads(d)} for name, p, d in frame.iter_rows()}


def reused_result(
    warehouse: Warehouse, batch_id: str, digest: str, name: str, field_name: str, value
) -> GateResult | None:
    """The stored result of gate `name` for this batch and digest, if it was computed from the same
    inputs (`detail[field_name] == value`): a deterministic gate need not run again on unchanged inputs."""
    previous = gate_status(warehouse, batch_id, digest).get(name)
    if previous is None or previous.get(field_name) != value:
        return None
    detail = {k: v for k, v in previous.items() if k not in ("passed", "reused")}
    return GateResult(name, bool(previous["passed"]), {**detail, "reused": True})


def missing_or_failed(status: dict[str, dict], required: Sequence[str] = RELEASE_GATES) -> list[str]:
    return [
        f"{n}: {'not run' if n not in status else 'failed'}" for n in required if not status.get(n, {}).get("passed")
    ]


def _json_default(value):
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
