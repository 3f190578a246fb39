"""The dataset card: a Hugging Face README (YAML front matter + Markdown) with the release evidence.

The card states what was done to the data and how well it worked: the redaction convention
verbatim, detectors and thresholds, validation next to held-out metrics, the residual audit with
its confidence bound, the gates, and the limits. It never names a private value, and
:func:`assert_card_clean` checks that before the card ships.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import yaml

from curation.gates.audit import find_known_values

SURROGATE_KEY_NOTE = "surrogate key: held by the supplier, not delivered"
METRICS = (("tpr", "TPR"), ("fpr", "FPR"), ("precision", "Precision"), ("f1", "F1"), ("auroc", "AUROC"))
LIMITATIONS = (
    (
        "No formal privacy guarantee: detection and surprise masking reduce, but do not rule out, residual "
        "private information. Treat the data as pseudonymized, not anonymized."
    ),
    (
        "Masked tokens still teach through context: loss masking removes a span from the loss, not from the "
        "context the model reads, and surrounding text can reveal what was masked."
    ),
    (
        "Surprise masking also masks useful but unfamiliar text (rare words, identifiers, code), so some "
        "non-private content is lost; the collateral rate above measures how much on validation data."
    ),
    (
        "Detectors miss novel formats: identifiers or secrets in formats no recognizer knows, and names a "
        "model has not seen, can pass through undetected."
    ),
    (
        "Validation data is synthetic: thresholds were calibrated on synthetic labeled examples, which may "
        "not match the release text; compare the held-out metrics."
    ),
    (
        "Realistic surrogates hide misses in plain sight: a missed real value looks like a substituted fake "
        "one, so residual review needs the supplier's vault."
    ),
)
# Hugging Face size_categories; bucket i holds n < 10 ** (i + 3)
_SIZE_NAMES = (
    "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "1B<n<10B",
    "10B<n<100B", "100B<n<1T",
)  # fmt: skip


@dataclass
class CardInfo:
    """Everything the card prints; plain dicts and lists so any stage can fill its part."""

    pretty_name: str
    summary: str = ""
    release_id: str = ""
    license: str = "other"
    languages: list[str] = field(default_factory=lambda: ["en"])
    task_categories: list[str] = field(default_factory=lambda: ["text-generation"])
    tags: list[str] = field(default_factory=list)
    tables: dict[str, int] = field(default_factory=dict)  # table name -> rows (data/<table>/*.parquet)
    source_batches: list[str | dict[str, Any]] = field(default_factory=list)  # ids, or dicts with batch_id
    documents: int = 0
    quarantined: int = 0
    masked_chars: int = 0
    total_chars: int | None = None
    spans_per_label: dict[str, int] = field(default_factory=dict)
    convention_yaml: str = ""
    key_id: str = ""  # public fingerprint of the HMAC key, never the key
    detectors: dict[str, Any] = field(default_factory=dict)  # name -> version (or a dict of details)
    reference_model: dict[str, Any] = field(default_factory=dict)  # id, revision, scoring settings
    thresholds: dict[str, Any] = field(default_factory=dict)  # tau, k, window, objective, policy...
    validation_metrics: dict[str, float] = field(default_factory=dict)  # tpr, fpr, precision, f1, auroc
    held_out_metrics: dict[str, float] = field(default_factory=dict)
    metric_gap_warning: float = 0.10
    plots: dict[str, str] = field(default_factory=dict)  # caption -> PNG path relative to the card
    collateral: dict[str, Any] = field(default_factory=dict)  # collateral_rate, coverage, budgets...
    residual_audit: Any = None  # audit.ResidualAudit or a dict with the same fields
    independent_audit: Any = None  # gate detail of residual_independent_audit (counts and rates)
    known_value_findings: int | None = None  # direct leaks found by the known-value / vault scans
    gates: dict[str, Any] = field(default_factory=dict)  # check name -> bool or {"passed": bool, ...}
    limitations: list[str] = field(default_factory=list)  # added to the standard ones
    contact: str = ""
    # stored results of the evaluation group: {"leakage": report, "canary": probe summary, "canary_plot": path}
    privacy_evidence: dict[str, Any] = field(default_factory=dict)
    # learned tagger: key, thresholds per domain, training (out-of-fold) and held-out metrics per domain
    tagger: dict[str, Any] = field(default_factory=dict)
    # gate detail of calibration_coverage: the batch's domain, what calibrated it, held-out counts, intervals
    calibration_coverage: dict[str, Any] = field(default_factory=dict)


def render_card(info: CardInfo) -> str:
    """The full README.md for a release: front matter, then one section per kind of evidence."""
    sections = [
        _front_matter(info),
        f"# {info.pretty_name}\n",
        _summary(info),
        _batches(info),
        _counts(info),
        _convention(info),
        _detectors(info),
        _reference(info),
        _metrics(info),
        _tagger(info),
        _collateral(info),
        _residual(info),
        _independent(info),
        _privacy_evidence(info),
        _gates(info),
        _limitations(info),
        _contact(info),
    ]
    return "\n".join(s.rstrip("\n") + "\n" for s in sections)


def assert_card_clean(card: str, private_values: Iterable[str], *, key: bytes | None = None) -> list[str]:
    """Digests (sha256 of the normalized value, or keyed) of private values that occur in the card.

    Empty list = clean. Values under 4 normalized characters are not checked (they match anywhere).
    """
    findings = find_known_values([("card", card)], (("private", v) for v in private_values if v), key=key)
    return sorted({f.value_sha256 for f in findings})


# --------------------------------------------------------------------------------------------
# Sections


def _front_matter(info: CardInfo) -> str:
    tags = list(dict.fromkeys(["privacy", "pii-redacted", *info.tags]))
    configs = [
        {
            "config_name": name,
            "data_files": [{"split": "train", "path": f"data/{name}/*.parquet"}],
            **({"default": True} if i == 0 else {}),
        }
        for i, name in enumerate(info.tables)
    ]
    meta: dict[str, Any] = {
        "pretty_name": info.pretty_name,
        "license": info.license,
        "language": list(info.languages),
        "task_categories": list(info.task_categories),
        "size_categories": [size_category(info.documents)],
        "tags": tags,
    }
    if configs:
        meta["configs"] = configs
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{body}---\n"


def size_category(n: int) -> str:
    """Hugging Face ``size_categories`` bucket for ``n`` records."""
    for i, name in enumerate(_SIZE_NAMES):
        if n < 10 ** (i + 3):
            return name
    return "n>1T"


def _coverage_statement(coverage: Mapping[str, Any], held_out: Mapping[str, Any]) -> str:
    """The card's first words: whose labels calibrated this batch, and whether its promise was verified."""
    if not coverage:
        return ""
    domain = coverage.get("domain")
    if not coverage.get("passed", True):
        return f"**Calibration coverage: unverified.** {coverage.get('reason')}.\n\n"
    intervals = coverage.get("heldout_intervals") or {}

    def shown(name: str, key: str) -> str:
        value = held_out.get(key)
        band = intervals.get(key)
        text = f"{name} {value:.3f}" if isinstance(value, int | float) else f"{name} n/a"
        return text + (f" [{band[0]:.3f}, {band[1]:.3f}]" if band else "")

    return (
        f"**Calibration coverage:** domain `{domain}`, calibrated on {coverage.get('calibration_documents')} labeled "
        f"documents of its own and verified on {coverage.get('heldout_documents')} held-out documents "
        f"({coverage.get('heldout_target_chars')} target characters): {shown('recall', 'tpr')}, "
        f"{shown('precision', 'precision')}, {shown('F1', 'f1')}, {shown('collateral', 'fpr')} "
        "(95% bootstrap intervals over documents).\n\n"
    )


def _summary(info: CardInfo) -> str:
    text = info.summary.strip() or "Text released after detection, surprise masking and surrogate replacement."
    text = _coverage_statement(info.calibration_coverage, info.held_out_metrics) + text
    release = f"\n\nRelease id: `{info.release_id}`." if info.release_id else ""
    tables = ", ".join(f"`{name}` ({rows:,} rows)" for name, rows in info.tables.items())
    files = f"\n\nTables: {tables}, as Parquet shards under `data/<table>/`." if tables else ""
    return f"## Summary\n\n{text}{release}{files}\n"


def _batches(info: CardInfo) -> str:
    if not info.source_batches:
        return "## Source batches\n\nNo source batches were recorded.\n"
    rows = [{"batch_id": b} if isinstance(b, str) else dict(b) for b in info.source_batches]
    return "## Source batches\n\n" + _table(rows)


def _counts(info: CardInfo) -> str:
    rows: list[dict[str, Any]] = [
        {"count": "documents", "value": info.documents},
        {"count": "quarantined records", "value": info.quarantined},
        {"count": "masked characters", "value": info.masked_chars},
    ]
    if info.total_chars:
        rows.append({"count": "total characters", "value": info.total_chars})
        rows.append({"count": "masked fraction", "value": info.masked_chars / info.total_chars})
    out = "## Counts\n\n" + _table(rows)
    if info.spans_per_label:
        labels = [{"label": k, "spans": v} for k, v in sorted(info.spans_per_label.items())]
        out += "\nSpans per label:\n\n" + _table(labels)
    return out


def _convention(info: CardInfo) -> str:
    text = info.convention_yaml.rstrip("\n") or "# no redaction convention was recorded"
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    key = f"key fingerprint id: `{info.key_id}`" if info.key_id else "key fingerprint id: not recorded"
    return (
        "## Redaction convention\n\n"
        "Each entity label is rewritten by the rule below (style, value source, consistency scope and what "
        "is kept). This is the exact convention file that was applied:\n\n"
        f"{fence}yaml\n{text}\n{fence}\n\n"
        f"- {SURROGATE_KEY_NOTE[0].upper()}{SURROGATE_KEY_NOTE[1:]}.\n"
        f"- The surrogate map (vault) is not part of this release; {key}.\n"
        "- `manifest.json` is signed (HMAC-SHA256) under a key derived from that key, which is never part of "
        "the release: `curation audit` with the key verifies that no file or checksum was changed.\n"
    )


def _detectors(info: CardInfo) -> str:
    if not info.detectors:
        return "## Detectors and versions\n\nNo detectors were recorded.\n"
    rows = [
        {"detector": name, **(dict(v) if isinstance(v, Mapping) else {"version": v})}
        for name, v in info.detectors.items()
    ]
    return "## Detectors and versions\n\n" + _table(rows)


def _reference(info: CardInfo) -> str:
    out = "## Reference model and thresholds\n\n"
    out += _kv(info.reference_model, "No reference model was recorded.")
    out += "\nOperating point and thresholds:\n\n" + _kv(info.thresholds, "No thresholds were recorded.")
    return out


def _metrics(info: CardInfo) -> str:
    val = {k.lower(): v for k, v in info.validation_metrics.items()}
    held = {k.lower(): v for k, v in info.held_out_metrics.items()}
    names = dict(METRICS)
    names.update({k: k for k in [*val, *held] if k not in names})
    rows, warnings = [], []
    for key, title in names.items():
        v, h = val.get(key), held.get(key)
        gap = None if v is None or h is None else h - v
        rows.append({"metric": title, "validation": v, "held-out": h, "gap": gap})
        # rates only: counts always differ (the held-out part is a fraction of the validation data)
        if gap is not None and key in dict(METRICS) and abs(gap) > info.metric_gap_warning:
            warnings.append(f"{title} differs by {abs(gap):.3f} between validation and held-out data")
    out = (
        "## Validation and held-out metrics\n\n"
        "Character-level pooled metrics: TPR = target characters masked / target characters, FPR = "
        "non-target characters masked / non-target characters.\n\n" + _table(rows)
    )
    if not held:
        warnings.append("no held-out metrics were measured, so the validation numbers are unconfirmed")
    for text in warnings:
        out += f"\n> **Warning:** {text} (threshold {info.metric_gap_warning:g}); thresholds may not transfer.\n"
    return out + _plots(info)


def _augmented(t: dict) -> str:
    """What mention-swap augmentation added to the tagger's training texts, when it ran."""
    if not t.get("augmented_texts"):
        return ""
    return (
        f"; {t['augmented_texts']} of them mention-swap variants of the {t.get('labeled_texts')} labeled "
        f"calibration texts, {t.get('augment_variants')} per text, names and places from the surrogate pools"
    )


def _tagger(info: CardInfo) -> str:
    """The learned tagger's per-domain metrics (training out of fold, held-out) and the chosen combination."""
    t = info.tagger
    if not t:
        return "## Learned tagger\n\nNo learned tagger was used for this release.\n"
    rows = []
    for part, key in (("training (out of fold)", "training_metrics_out_of_fold"), ("held-out", "heldout_metrics")):
        for domain, m in sorted((t.get(key) or {}).items()):
            rows.append(
                {
                    "domain": domain,
                    "split": part,
                    "documents": m.get("documents"),
                    "precision": m.get("precision"),
                    "recall": m.get("recall"),
                    "f1": m.get("f1"),
                    "fpr": m.get("fpr"),
                    "threshold": (t.get("thresholds") or {}).get(domain),
                }
            )
    out = (
        "## Learned tagger\n\n"
        + (
            f"A {t.get('hidden')}-unit bidirectional GRU over the reference model's last hidden states (left "
            "context from the model, right context from the GRU), "
            if t.get("encoder", "window") == "bigru"
            else f"A {t.get('hidden', 256)}-unit head over the reference model's last hidden states of tokens t..t+2, "
        )
        + f"trained on {t.get('training_texts')} labeled texts ({t.get('training_tokens')} tokens"
        f"{_augmented(t)}) in the "
        f"scoring pass's by-product (no second model pass); key `{t.get('tagger_key')}`. Character-level "
        "metrics per domain at the calibrated threshold:\n\n" + (_table(rows) if rows else "No metrics.\n")
    )
    own = {d: v for d, v in (t.get("label_thresholds") or {}).items() if v}
    if "label_thresholds" in t:
        listed = "; ".join(
            f"`{d}`: " + ", ".join(f"{label} {v:.2f}" for label, v in sorted(v.items())) for d, v in sorted(own.items())
        )
        out += (
            "\nPer-label thresholds (tagger.label_thresholds: a label with at least 30 gold spans in a domain's "
            "calibration part gets its own where it adds F1 there, on out-of-fold probabilities): "
            + (listed or "none chosen, every label at its domain's threshold")
            + ".\n"
        )
    held = t.get("heldout_metrics") or {}
    mentions = [
        {"domain": d, **{label: v for label, v in sorted((m.get("mentions_fully_masked_by_label") or {}).items())}}
        for d, m in sorted(held.items())
    ]
    if mentions:
        out += "\nHeld-out mentions fully masked (every character), per label:\n\n" + _table(mentions)
    if t.get("detector_combination"):
        out += (
            f"\nDetector combination chosen on the calibration split for domain `{t.get('domain')}`: "
            f"`{'+'.join(t['detector_combination'])}`.\n"
        )
    out += _recognizers(t.get("detector_recognizers"))
    out += _dropped(t.get("dropped_by_combination"))
    return out


def _recognizers(rows: list[Mapping[str, Any]] | None) -> str:
    """Each rule recognizer kept or dropped on the calibration labels, with its counts (never values):
    an exact-format one (e-mail, phone, URL, ...) is kept on its own when its family is left out."""
    if not rows:
        return ""
    columns = ("recognizer", "label", "spans", "hits", "collateral_chars", "kept", "reason")
    return "\nRule recognizers on the calibration labels (spans; hits: spans mostly inside a label):\n\n" + _table(
        [{c: row.get(c) for c in columns} for row in rows]
    )


def _dropped(dropped: Mapping[str, Any] | None) -> str:
    """What the chosen combination costs on this batch: spans other signals found above their own
    thresholds that the mask leaves mostly open (counts only, never values)."""
    if not dropped:
        return ""
    if not dropped.get("spans"):
        return "\nEvery span a signal found above its own threshold is masked (the combination drops none).\n"
    signals = ", ".join(f"{name} {n}" for name, n in dropped.get("by_signal", {}).items())
    labels = ", ".join(f"{name} {n}" for name, n in dropped.get("by_label", {}).items())
    return (
        f"\nWhat the combination leaves open in this batch: {dropped['spans']} span(s), {dropped['chars']} "
        f"characters, that a signal found above its own threshold but the mask covers less than half of "
        f"(by signal: {signals}; by label: {labels}). Calibration judged them not worth their collateral on the "
        "labeled data; review a sample if the batch's domain differs from it.\n"
    )


def _plots(info: CardInfo) -> str:
    if not info.plots:
        return ""
    lines = []
    for caption, path in info.plots.items():
        if not _is_relative(path):
            raise ValueError(f"plot {caption!r}: path {path!r} must be relative to the card, without '..'")
        lines.append(f"![{_cell(caption)}]({PurePosixPath(path).as_posix()})")
    return "\n" + "\n\n".join(lines) + "\n"


def _collateral(info: CardInfo) -> str:
    body = _kv(info.collateral, "No collateral or coverage measurements were recorded.")
    return (
        "## Collateral and coverage\n\n"
        "Collateral = share of non-target characters masked (useful text lost); coverage = share of target "
        "characters masked.\n\n" + body
    )


def _residual(info: CardInfo) -> str:
    audit = info.residual_audit
    if dataclasses.is_dataclass(audit) and not isinstance(audit, type):
        audit = dataclasses.asdict(audit)
    if not audit:
        return "## Residual audit\n\n> **Warning:** no residual audit was run for this release.\n"
    fields = (
        ("method", "method"),
        ("sampled", "sample size"),
        ("with_residual", "documents with findings"),
        ("rate", "residual rate"),
        ("upper_bound", "upper confidence bound"),
        ("confidence", "confidence"),
        ("budget", "budget"),
        ("reason", "detail"),
    )
    rows = [{"item": title, "value": audit[key]} for key, title in fields if key in audit]
    if info.known_value_findings is not None:
        rows.append({"item": "known-value / vault scan findings", "value": info.known_value_findings})
    passed = audit.get("passed")
    rows.append({"item": "result", "value": _verdict(passed)})
    rule = (
        "Rule: the detectors are re-run on the released text of a seeded random sample of documents. A batch no "
        "larger than the sample size is audited in full (all documents audited) and passes when its measured "
        "residual rate is within the budget; a larger batch passes when the one-sided upper confidence bound "
        "(Clopper-Pearson) on the rate of its sample is within the budget.\n\n"
    )
    return "## Residual audit\n\n" + rule + _table(rows)


def _privacy_evidence(info: CardInfo) -> str:
    """Measured leakage of the views and, when the canary probe ran, memorization by a fine-tuned model."""
    evidence = info.privacy_evidence or {}
    leakage, probe = evidence.get("leakage"), evidence.get("canary")
    if not leakage and not probe:
        return ""
    out = "## Privacy evidence\n\n"
    if leakage:
        out += (
            "Leakage of the views (Privasis-style): direct leak = an original value of the batch still in the view "
            "(verbatim or case/space-normalized; training view: a value whose tokens carry loss); retention = share "
            "of non-target text kept unchanged (training view: non-target tokens that carry loss); inference leak = "
            "the reference model ranks the true value first among same-label decoys, from the released context.\n\n"
        )
        rows = []
        for name, view in leakage.get("views", {}).items():
            rows.append(
                {
                    "view": name,
                    "direct leak (detected values)": view.get("direct_leak_rate_detected"),
                    "retention": view.get("retention", view.get("retention_loss_tokens")),
                    "format kept": view.get("format_kept"),
                    "inference leak": view.get("inference_leak_rate"),
                    "chance": view.get("inference_chance_rate"),
                    "probed": view.get("inference_probed"),
                }
            )
        out += _table(rows)
        canaries = leakage.get("canaries")
        if canaries:
            out += (
                f"\nPlanted canaries: {_fmt(canaries.get('planted'))}, fully masked by detection "
                f"{_fmt(canaries.get('detected'))}, missed {_fmt(canaries.get('missed'))}. Direct leak rate of the "
                "missed ones per view: "
                + ", ".join(
                    f"{v} {_fmt((canaries.get(v) or {}).get('missed'))}"
                    for v in ("surrogate", "redacted", "training_view")
                )
                + ".\n"
            )
    if probe:
        out += _probe_section(probe, evidence.get("canary_plot"))
    return out


def _probe_section(probe: dict, plot: str | None) -> str:
    """The canary memorization probe's settings, table and perplexity ratios, with its plot."""
    settings = probe.get("settings", {})
    out = (
        "\n### Canary memorization probe\n\n"
        f"Fabricated canaries planted {', '.join(str(d) for d in settings.get('duplicates', []))} times; the "
        f"reference model fine-tuned ({_fmt(settings.get('steps'))} steps, batch "
        f"{_fmt(settings.get('batch_size'))} x {_fmt(settings.get('seq_len'))} tokens, seed "
        f"{_fmt(settings.get('seed'))}) on the raw text, the "
        "training view with its loss mask and the surrogate view. Exposure (Carlini et al.) ranks each canary "
        f"among {_fmt(settings.get('candidates'))} random values of its format (rank-only ceiling "
        f"{_fmt(probe.get('max_rank_exposure_bits'))} bits; past it, a skew-normal extrapolation); extraction = "
        "greedy decoding from the canary's prefix reproduces it.\n\n"
    )
    out += _table(
        [
            {
                "variant": r["variant"],
                "duplicates": r["duplicates"],
                "canaries": r["canaries"],
                "exposure (bits)": r["exposure_bits"],
                "extraction rate": r["extraction_rate"],
                "held-out ppl": r["heldout_ppl"],
            }
            for r in probe.get("table", [])
        ]
    )
    metrics = probe.get("metrics", {})
    out += (
        f"\nHeld-out perplexity ratio, training view vs raw: {_fmt(metrics.get('ppl_ratio_training_vs_raw'))} "
        f"over all tokens, {_fmt(metrics.get('ppl_ratio_training_vs_raw_nontarget'))} over the tokens outside "
        "labeled private spans. "
        f"Canaries missed by detection: {_fmt(probe.get('canaries_missed_by_detection'))} of "
        f"{_fmt(probe.get('canaries'))}. A small model and a few minutes of CPU fine-tuning bound these numbers; "
        "they show the mechanism, not a guarantee.\n"
    )
    if plot:
        if not _is_relative(plot):
            raise ValueError(f"canary plot path {plot!r} must be relative to the card, without '..'")
        out += f"\n![canary exposure by duplication count]({PurePosixPath(plot).as_posix()})\n"
    return out


def _independent(info: CardInfo) -> str:
    """The residual audit's second signal, independent of the detectors that made the masks."""
    audit = info.independent_audit
    title = "## Independent residual signals\n\n"
    if not audit:
        return title + "> **Warning:** no independent residual signal was recorded for this release.\n"
    names = audit.get("name_variant_scan") or {}
    surprise = audit.get("surprise_signal") or {}
    rows = [
        {"signal": "name-variant scan (blocking)", "item": "people / name words checked",
         "value": f"{_fmt(names.get('people'))} / {_fmt(names.get('name_words'))}"},
        {"signal": "", "item": "name words left (capitalized)", "value": names.get("leaked_name_words")},
        {"signal": "", "item": "lowercase mentions (reported)", "value": names.get("lowercase_mentions")},
    ]  # fmt: skip
    partial = audit.get("partial_leak_scan")
    if partial:
        rows += [
            {"signal": "partial-leak scan (blocking)", "item": "structured identifiers partly masked / checked",
             "value": f"{sum(partial['structured_partly_masked_by_label'].values())} / "
                      f"{partial['structured_identifiers_checked']}"},
            {"signal": "", "item": "surrogates keeping a part of their original / checked",
             "value": f"{sum(partial['surrogate_kept_parts_by_label'].values())} / {partial['surrogates_checked']}"},
        ]  # fmt: skip
    rows.append({"signal": "", "item": "result", "value": _verdict(audit.get("passed"))})
    if surprise.get("available"):
        rows += [
            {"signal": "surprise (advisory)", "item": "threshold (its recall on calibration targets)",
             "value": f"{_fmt(surprise.get('threshold'))} ({_fmt(surprise.get('recall_on_calibration_targets'))})"},
            {"signal": "", "item": "released characters flagged",
             "value": f"{_fmt(surprise.get('flagged_rate'))} ({_fmt(surprise.get('flagged_spans'))} spans)"},
            {"signal": "", "item": "expected on clean text", "value": surprise.get("expected_rate_on_clean_text")},
            {"signal": "", "item": "ratio to expected", "value": surprise.get("ratio_to_expected")},
        ]  # fmt: skip
    else:
        rows.append({"signal": "surprise (advisory)", "item": "not available", "value": surprise.get("reason", "")})
    return (
        title + "Signals that do not come from the detectors that made the masks: leftover words of every "
        "masked or supplied person name in its scope (one fails the release), and the share of released "
        "characters that the reference model's surprise flags at a low threshold (the lowest that flags at "
        "most 10% of clean validation text), next to the share it flags on that clean text (reviewers' "
        "evidence; unusual but harmless text also raises it).\n\n" + _table(rows)
    )


def _gates(info: CardInfo) -> str:
    if not info.gates:
        return "## Gates\n\n> **Warning:** no gate results were recorded.\n"
    rows = []
    for name, result in info.gates.items():
        passed = result.get("passed") if isinstance(result, Mapping) else result
        detail = result.get("detail", "") if isinstance(result, Mapping) else ""
        rows.append({"check": name, "result": _verdict(passed), "detail": detail})
    return "## Gates\n\nBlocking checks that guard the release:\n\n" + _table(rows)


def _limitations(info: CardInfo) -> str:
    items = [*LIMITATIONS, *info.limitations]
    return "## Known limitations\n\n" + "".join(f"- {item}\n" for item in items)


def _contact(info: CardInfo) -> str:
    where = info.contact.strip()
    how = f"write to **{where}**" if where else "contact the data supplier (no address was configured)"
    return (
        "## How to report a leak\n\n"
        f"If you find private information in this dataset, {how} with the release id, the file and row, "
        "and a description of the value's type. Do not quote the value itself in public issues or "
        "forums; the supplier will confirm it against the vault and issue a corrected release.\n"
    )


# --------------------------------------------------------------------------------------------
# Markdown helpers


def _verdict(passed: Any) -> str:
    return "pass" if passed is True else "FAIL" if passed is False else "not run"


def _fmt(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "n/a", True: "yes", False: "no"}[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _cell(value: Any) -> str:
    return _fmt(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(_cell(row.get(c)) for c in columns) + " |\n" for row in rows)


def _kv(data: Mapping[str, Any], empty: str) -> str:
    if not data:
        return f"{empty}\n"
    return _table([{"name": k, "value": v} for k, v in data.items()])


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _is_relative(path: str) -> bool:
    pure = PurePosixPath(path.replace("\\", "/"))
    return not (pure.is_absolute() or PureWindowsPath(path).is_absolute() or ".." in pure.parts)
