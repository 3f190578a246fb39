"""Policy: turn stored scores and detector spans into mask spans, views and loss masks.

Nothing here runs a model: it reads token scores and candidate spans (facts) and applies a
calibration (policy), so re-calibrating never re-scores.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from curation.core.matching import ValueFinder
from curation.core.spans import SURPRISE, Span, blanked, char_mask, merge, spans_from_mask, subtract
from curation.policy.calibration import AppliedCalibration, ScoredDoc, doc_char_scores

PROPAGATION_SCOPES = ("document", "scope", "batch")


def surprise_spans(doc: ScoredDoc, calibration: AppliedCalibration) -> list[Span]:
    """Character spans selected by surprise alone (outside detector spans for union/residual)."""
    if calibration.policy == "detectors":
        return []
    threshold = calibration.threshold_for(doc.kind)
    chars = doc_char_scores(doc, calibration.policy, calibration.params)
    selected = np.isfinite(chars) & (chars >= threshold)
    spans = []
    for span in spans_from_mask(selected.tolist(), SURPRISE, "surprise"):
        peak = float(np.max(chars[span.start : span.end]))
        spans.append(Span(span.start, span.end, SURPRISE, round(peak, 4), "surprise"))
    return trim_whitespace(doc.text, spans)


def surprise_added_fraction(
    docs: Sequence[ScoredDoc],
    calibration: AppliedCalibration,
    surprising: Mapping[str, Sequence[Span]] | None = None,
) -> float:
    """Share of the characters outside detector spans that the policy's surprise part masks: needs no
    labels, so it can be measured on the batch the calibration is applied to. ``surprising`` (doc id ->
    :func:`surprise_spans`) reuses spans the caller computed already."""
    added = outside = 0
    for doc in docs:
        n = len(doc.text)
        detected = np.array(char_mask(doc.detected, n), dtype=bool)
        spans = surprising[doc.doc_id] if surprising is not None else surprise_spans(doc, calibration)
        added += int(np.sum(np.array(char_mask(spans, n), dtype=bool) & ~detected))
        outside += int(np.sum(~detected))
    return added / outside if outside else 0.0


def surprise_transfer(
    calibration_fraction: float, batch_fraction: float, collateral_budget: float, calibrated_fpr: float
) -> dict:
    """Whether a surprise threshold carried over to a batch, judged without labels.

    Calibration chose the threshold at collateral ``calibrated_fpr`` (within ``collateral_budget``) while
    its surprise part masked ``calibration_fraction`` of the text outside detector spans. On the batch,
    whatever surprise masks beyond that fraction may all be collateral; the threshold held if even then
    the collateral stays within budget. When it does not, the labeled documents were not like the batch
    (too few, or picked as the ones the tagger was least sure of)."""
    limit = calibration_fraction + max(0.0, collateral_budget - calibrated_fpr)
    return {
        "calibration_added_fraction": round(calibration_fraction, 4),
        "batch_added_fraction": round(batch_fraction, 4),
        "calibrated_fpr": round(calibrated_fpr, 4),
        "limit": round(limit, 4),
        "held": batch_fraction <= limit,
    }


def detector_masked_fraction(docs: Sequence[ScoredDoc]) -> float:
    """Share of all characters inside the (chosen) detector spans: needs no labels."""
    masked = total = 0
    for doc in docs:
        masked += int(np.sum(np.array(char_mask(doc.detected, len(doc.text)), dtype=bool)))
        total += len(doc.text)
    return masked / total if total else 0.0


def detector_collateral(docs: Sequence[ScoredDoc]) -> float:
    """The chosen detectors' collateral on labeled documents: clean characters they mask / clean characters."""
    clean = false_hits = 0
    for doc in docs:
        n = len(doc.text)
        gold = np.array(char_mask(doc.gold, n), dtype=bool)
        found = np.array(char_mask(doc.detected, n), dtype=bool)
        false_hits += int(np.sum(found & ~gold))
        clean += int(np.sum(~gold))
    return false_hits / clean if clean else 0.0


def detector_transfer(
    calibration_fraction: float, batch_fraction: float, collateral_budget: float, calibrated_fpr: float
) -> dict:
    """Whether the detectors' collateral carried over to a batch, judged without labels, as
    :func:`surprise_transfer` judges surprise: whatever the detectors mask beyond their share of the
    calibration documents may all be collateral; it held if even then the collateral stays within budget.
    A batch in a language the calibration never saw is the case it is for: English NER on Spanish notes
    masked 30% of their clean text while the card carried the English calibration's 0.017."""
    limit = calibration_fraction + max(0.0, collateral_budget - calibrated_fpr)
    return {
        "calibration_detector_fraction": round(calibration_fraction, 4),
        "batch_detector_fraction": round(batch_fraction, 4),
        "calibrated_fpr": round(calibrated_fpr, 4),
        "limit": round(limit, 4),
        "held": batch_fraction <= limit,
    }


def checked_detector_transfer(stored_summary: dict, docs: Sequence[ScoredDoc], collateral_budget: float) -> dict | None:
    """:func:`detector_transfer` of a batch (its docs' chosen detector spans) against the stored calibration;
    None for a calibration stored before it measured its detectors' share."""
    if stored_summary.get("detector_masked_fraction") is None:
        return None
    return detector_transfer(
        stored_summary["detector_masked_fraction"],
        detector_masked_fraction(docs),
        collateral_budget,
        float(stored_summary.get("detector_fpr") or 0.0),
    )


def trim_whitespace(text: str, spans: Sequence[Span]) -> list[Span]:
    """Drop leading/trailing whitespace from spans (BPE tokens carry their leading space)."""
    out = []
    for span in spans:
        start, end = span.start, span.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append(Span(start, end, span.label, span.score, span.source))
    return out


def combine(policy: str, detected: Sequence[Span], surprising: Sequence[Span]) -> list[Span]:
    """Final mask spans: detector labels win; surprise adds typed-as-SURPRISE spans elsewhere."""
    if policy == "detectors":
        return merge(detected)
    if policy == "surprise":
        return merge(surprising)
    return merge(list(detected) + subtract(surprising, detected))


def propagate_duplicates(
    texts: Mapping[str, str],
    spans: Mapping[str, list[Span]],
    scope_of: Mapping[str, str],
    *,
    scope: str = "scope",
    min_chars: int = 4,
) -> dict[str, list[Span]]:
    """Mask every other occurrence of a selected span's text within the propagation scope.

    Occurrences are found by the residual leak scan's own matcher (`matching.ValueFinder`): case- and
    accent-insensitive runs of letters and digits on word edges, punctuation, spaces and underscores
    between runs ignored ('HttpClient' in 'http_client', 'TOKEN' in 'GITHUB_TOKEN'); whatever the gate
    would report as a surviving value is masked here.

    A secret masked once must not survive verbatim in the next file or chat turn of the same scope.
    Values under ``min_chars`` letters and digits are not propagated (they would match ordinary words).
    """
    if scope not in PROPAGATION_SCOPES:
        raise ValueError(f"propagation scope {scope!r} is not one of {PROPAGATION_SCOPES}")

    def group_of(doc_id: str) -> str:
        return doc_id if scope == "document" else ("*" if scope == "batch" else scope_of.get(doc_id, doc_id))

    values: dict[str, dict[str, str]] = defaultdict(dict)
    for doc_id, doc_spans in spans.items():
        for span in doc_spans:
            value = texts[doc_id][span.start : span.end].strip()
            values[group_of(doc_id)].setdefault(value, span.label)
    finders = {g: ValueFinder([(label, v) for v, label in vs.items()], min_chars) for g, vs in values.items()}
    out: dict[str, list[Span]] = {}
    for doc_id, text in texts.items():
        found = list(spans.get(doc_id, []))
        finder = finders.get(group_of(doc_id))
        # The gate scans the release text with our tags blanked out, so a mask creates word edges: the rest of
        # 'newHttpClient' after a mask on 'new' is 'HttpClient'. Search the text as the gate will see it, again
        # after each pass that masked something (rarely more than two).
        for _ in range(PROPAGATION_PASSES if finder is not None else 0):
            # every match is of unmasked characters (masked ones are blanks, never part of a run): all new
            seen = blanked(text, [(s.start, s.end) for s in found])
            new = [Span(start, end, label, None, "propagation") for start, end, label in finder.find(seen)]
            if not new:
                break
            found = merge(found + new)
        out[doc_id] = merge(found)
    return out


PROPAGATION_PASSES = 4


def redact(text: str, spans: Sequence[Span]) -> str:
    """Typed-tag redaction: every masked span becomes ``[LABEL]``."""
    pieces, cursor = [], 0
    for span in merge(spans):
        pieces.append(text[cursor : span.start])
        pieces.append(f"[{span.label}]")
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def loss_mask_for_tokenizer(text: str, spans: Sequence[Span], tokenizer) -> tuple[list[int], list[bool]]:
    """Project mask spans onto a downstream tokenizer: ids plus a per-token "no loss" flag.

    Masked tokens stay in the input (they still give context); only their loss is dropped.
    A token is masked when any of its characters is masked.
    """
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    covered = np.zeros(len(text) + 1, dtype=np.int64)
    for span in merge(spans):
        covered[span.start + 1 : span.end + 1] += 1
    prefix = np.cumsum(covered > 0)
    mask = []
    for start, end in enc["offset_mapping"]:
        mask.append(bool(end > start and prefix[end] - prefix[start] > 0))
    return list(enc["input_ids"]), mask


def transfer_check(
    calibration: AppliedCalibration,
    reference_fraction: float | None,
    calibrated_fpr: float,
    docs: Sequence[ScoredDoc],
    collateral_budget: float,
    surprising: Mapping[str, Sequence[Span]] | None = None,
) -> dict | None:
    """Whether a surprise policy's threshold carried over to ``docs`` (:func:`surprise_transfer`: it must
    not mask far more of their other text than of the calibration documents', ``reference_fraction``), with
    the policy calibrated and the policy to apply; None for the detectors policy or with no reference.
    The pipeline's masking and ``curation eval`` both decide with it."""
    if calibration.policy == "detectors" or reference_fraction is None:
        return None
    batch_fraction = surprise_added_fraction(docs, calibration, surprising)
    transfer = surprise_transfer(reference_fraction, batch_fraction, collateral_budget, calibrated_fpr)
    transfer["calibrated_policy"] = calibration.policy
    transfer["applied_policy"] = calibration.policy if transfer["held"] else "detectors"
    return transfer


def checked_transfer(
    applied: AppliedCalibration,
    stored_summary: dict,
    docs: Sequence[ScoredDoc],
    collateral_budget: float,
    surprising: Mapping[str, Sequence[Span]] | None = None,
) -> tuple[AppliedCalibration, dict | None]:
    """The stored calibration to apply to this batch: a surprise policy whose threshold did not carry over
    (:func:`transfer_check`) falls back to the detectors alone, and the summary says so; the card prints it."""
    calibrated_fpr = float(stored_summary.get("operating_point", {}).get("fpr") or 0.0)
    reference = stored_summary.get("surprise_added_fraction")
    transfer = transfer_check(applied, reference, calibrated_fpr, docs, collateral_budget, surprising)
    if transfer is None or transfer["held"]:
        return applied, transfer
    return AppliedCalibration("detectors", applied.params, math.inf, {}), transfer


def supplied_label_recall(docs: Sequence[ScoredDoc], selected: dict[str, list[Span]]) -> float | None:
    """Share of supplied-label characters that detectors + surprise masked on their own."""
    total = hit = 0
    for doc in docs:
        mask = char_mask(selected[doc.doc_id], len(doc.text))
        for s in doc.gold:
            total += s.length
            hit += sum(mask[s.start : s.end])
    return round(hit / total, 4) if total else None
