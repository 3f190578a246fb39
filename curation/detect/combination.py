"""How detection signals are combined: the detector sources (rules, CredSweeper, the tagger, and rule or
CredSweeper spans the tagger confirms), the candidate combinations, and choosing one per domain.

Facts first: each source's spans are stored in ``detector_spans`` with their source. Policy later:
calibration picks, per domain, which combination of sources to trust by F1 on the calibration split,
where the tagger's own spans come from heads that did not train on those documents (out of fold).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from curation.core.identifiers import STRUCTURED_LABELS
from curation.core.spans import Span, char_mask, merge
from curation.policy.calibration import Metrics, bootstrap_metrics, canonical_objective, doc_counts, upper_bound

TAGGER = "tagger"
CREDSWEEPER = "credsweeper"
RULES = "rules"
CONFIRMED = "credsweeper&tagger"  # CredSweeper spans the tagger agrees with on >= AGREEMENT of their chars
RULES_CONFIRMED = "rules&tagger"  # rule spans the tagger agrees with: the tagger's precision, the rules' edges
AGREEMENT = 0.3

# Candidate detector combinations calibration chooses from (per domain).
COMBINATIONS: tuple[tuple[str, ...], ...] = (
    (RULES,),
    (TAGGER,),
    (RULES, TAGGER),
    (CREDSWEEPER,),
    (CONFIRMED,),
    (TAGGER, CONFIRMED),
    (RULES, CONFIRMED),
    (RULES, TAGGER, CONFIRMED),
    (TAGGER, CREDSWEEPER),
    (RULES, TAGGER, CREDSWEEPER),
    (TAGGER, RULES_CONFIRMED),
    (TAGGER, RULES_CONFIRMED, CONFIRMED),
)
CONFIRMED_BY_TAGGER = {CONFIRMED: CREDSWEEPER, RULES_CONFIRMED: RULES}

# Per-label rule elements (``rules[EMAIL_ADDRESS]``): the rule spans of one label, kept on their own when the
# family combination chosen leaves the rules out (``choose_detectors``).
_LABEL_ELEMENT = re.compile(r"^rules\[([A-Z_]+)\]$")
# A span counts as a hit when at least this share of its characters is labeled private.
HIT_SHARE = 0.5
# The prior for an exact-format label's precision on a new domain, in spans (Beta(9, 1): precision 0.9
# over ten pseudo-spans, below what these validated patterns score on the bundled sets): with few labels
# the prior keeps the recognizer; a domain's own misses outweigh it after a handful of spans.
PRIOR_HITS, PRIOR_MISSES = 9.0, 1.0
# Kept when the posterior mean precision is at least this: a kept span is more often private than not.
KEEP_PRECISION = 0.5
# A broad label's rule spans (names, places, organisations, dates) are added on their own only with at least
# this many private spans among those the combination leaves open.
MIN_OPEN_HITS = 3


def label_element(label: str) -> str:
    return f"rules[{label}]"


def element_label(name: str) -> str | None:
    """The label of a per-label rule element, None for a family element."""
    m = _LABEL_ELEMENT.match(name)
    return m.group(1) if m else None


def source_family(source: str) -> str:
    if source == TAGGER:
        return TAGGER
    if source == CREDSWEEPER:
        return CREDSWEEPER
    return RULES


def select_sources(text_len: int, spans: Sequence[Span], combination: Sequence[str]) -> list[Span]:
    """The spans a detector combination keeps (CONFIRMED / RULES_CONFIRMED: CredSweeper's or the rules'
    spans the tagger's own spans cover on >= AGREEMENT of their characters)."""
    by_family: dict[str, list[Span]] = {RULES: [], TAGGER: [], CREDSWEEPER: []}
    for span in spans:
        by_family[source_family(span.source)].append(span)
    kept: list[Span] = []
    for name in combination:
        label = element_label(name)
        if label is not None:
            kept += [s for s in by_family[RULES] if s.label == label]
        elif name in CONFIRMED_BY_TAGGER:
            tagged = np.array(char_mask(by_family[TAGGER], text_len), dtype=bool)
            family = by_family[CONFIRMED_BY_TAGGER[name]]
            kept += [s for s in family if s.length and tagged[s.start : s.end].mean() >= AGREEMENT]
        else:
            kept += by_family[name]
    unique = {(s.start, s.end, s.label, s.source): s for s in kept}  # a span two elements keep, once
    return sorted(unique.values(), key=lambda s: (s.start, s.end))


def dropped_spans(text_len: int, spans: Sequence[Span], masked: Sequence[Span], covered: float = 0.5) -> list[Span]:
    """The signals' spans (each above its own threshold) that the mask leaves mostly open: less than
    ``covered`` of their characters masked. What a combination that leaves a signal out costs, per span."""
    mask = np.array(char_mask(masked, text_len), dtype=bool)
    return [s for s in spans if s.length and mask[s.start : s.end].mean() < covered]


def dropped_summary(dropped: Sequence[Span]) -> dict:
    """Counts only (never values): spans and characters dropped, by signal family and by label."""
    by_family: dict[str, int] = {}
    by_label: dict[str, int] = {}
    for span in dropped:
        family = source_family(span.source or "")
        by_family[family] = by_family.get(family, 0) + 1
        by_label[span.label] = by_label.get(span.label, 0) + 1
    return {
        "spans": len(dropped),
        "chars": int(sum(s.length for s in dropped)),
        "by_signal": dict(sorted(by_family.items())),
        "by_label": dict(sorted(by_label.items())),
    }


def choose_combination(
    docs: Sequence, combinations=COMBINATIONS, collateral_budget: float | None = None, objective: str = "f1"
) -> tuple[tuple[str, ...], list[dict]]:
    """The detector combination for labeled docs (ScoredDoc-like: text, gold, detected), by a one-standard-
    error rule: among the combinations whose pooled character F1 is within one bootstrap standard error
    of the paired difference (documents resampled, the same resamples for every combination) of the best,
    and whose collateral is within one such error of the best's or within ``collateral_budget`` (the
    calibration's acceptable collateral), the one that finds the most (recall); ties go to the earlier
    (simpler) combination. On a small validation set the best F1 alone picked "rules" over a tagger that
    found more at the same collateral: within the noise, the stronger signal is kept.

    ``objective`` f2 runs the same rule on F2; recall_at_budget keeps the combination that finds the most
    among those whose collateral's upper bound over document resamples is within the budget (the least
    bounded collateral when none is)."""
    objective = canonical_objective(objective)
    table, measured = [], []
    golds = [np.array(char_mask(d.gold, len(d.text)), bool) for d in docs]
    present = {source_family(s.source) for d in docs for s in d.detected}
    for combination in combinations:
        needed = set().union(*({TAGGER, CONFIRMED_BY_TAGGER.get(c, TAGGER)} if "&" in c else {c} for c in combination))
        if not needed <= present and combination != (RULES,):
            continue
        preds = [
            np.array(char_mask(select_sources(len(d.text), d.detected, combination), len(d.text)), bool) for d in docs
        ]
        counts = np.array([doc_counts(p, g) for p, g in zip(preds, golds, strict=True)]).reshape(-1, 4)
        tp, fp, pos, neg = (int(v) for v in counts.sum(axis=0)) if len(counts) else (0, 0, 0, 0)
        metrics = Metrics.from_counts(tp, fp, pos, neg)
        boot = bootstrap_metrics(counts)
        measured.append((combination, metrics, boot))
        row = {"combination": "+".join(combination), **rounded_metrics(metrics)}
        if objective == "recall_at_budget":
            row["fpr_upper"] = round(upper_bound(boot["fpr"], metrics.fpr), 4)
        table.append(row)
    if not measured:
        return (RULES,), table
    if objective == "recall_at_budget":
        return _recall_at_budget_choice(measured, table, 0.03 if collateral_budget is None else collateral_budget)
    key = "f2" if objective == "f2" else "f1"
    pool = measured
    if objective == "f2" and collateral_budget is not None:
        # F2 pays for recall with collateral: only combinations within the budget compete (all, if none is)
        pool = [item for item in measured if item[1].fpr <= collateral_budget] or measured
    best_f1 = max(getattr(m, key) for _, m, _ in pool)
    best = next(item for item in pool if getattr(item[1], key) >= best_f1 - 1e-9)

    def indistinguishable(item) -> bool:
        """Paired differences over the same document resamples: F1 no more than one standard error below
        the best's, collateral no more than one standard error above it."""
        if item is best:
            return True
        d_f1, d_fpr = item[2][key] - best[2][key], item[2]["fpr"] - best[2]["fpr"]
        se_f1 = float(np.std(d_f1)) if len(d_f1) else 0.0
        se_fpr = float(np.std(d_fpr)) if len(d_fpr) else 0.0
        collateral_ok = item[1].fpr <= best[1].fpr + se_fpr + 1e-12 or (
            collateral_budget is not None and item[1].fpr <= collateral_budget
        )
        return getattr(item[1], key) >= best_f1 - se_f1 - 1e-9 and collateral_ok

    competing = {id(item) for item in pool}
    eligible = [i for i, item in enumerate(measured) if id(item) in competing and indistinguishable(item)]
    chosen = measured[max(eligible, key=lambda i: (measured[i][1].tpr, -i))]
    for i, (row, (combination, _, _)) in enumerate(zip(table, measured, strict=True)):
        row["within_one_se"] = i in eligible
        row["best_f1"] = combination == best[0]
        row["chosen"] = combination == chosen[0]
    return chosen[0], table


def _recall_at_budget_choice(measured: list, table: list[dict], budget: float) -> tuple[tuple[str, ...], list[dict]]:
    """The combination with the most recall whose collateral bound is within ``budget`` (ties: the simpler)."""
    uppers = [upper_bound(boot["fpr"], m.fpr) for _, m, boot in measured]
    eligible = [i for i, u in enumerate(uppers) if u <= budget]
    if eligible:
        pick = max(eligible, key=lambda i: (measured[i][1].tpr, -i))
    else:
        pick = min(range(len(measured)), key=lambda i: (uppers[i], i))
    for i, row in enumerate(table):
        row["within_budget_bound"] = i in eligible
        row["chosen"] = i == pick
    return measured[pick][0], table


def rounded_metrics(m: Metrics) -> dict:
    return {"precision": round(m.precision, 4), "recall": round(m.tpr, 4), "f1": round(m.f1, 4), "fpr": round(m.fpr, 4)}


def merged(spans: Sequence[Span]) -> list[Span]:
    return merge(spans)


def recognizer_counts(docs: Sequence) -> dict[tuple[str, str], dict]:
    """Per rule recognizer (source) and label on labeled docs: spans, hits (spans with >= HIT_SHARE of their
    characters labeled private), characters, and characters outside the labels (collateral). Counts only."""
    counts: dict[tuple[str, str], dict] = {}
    for doc in docs:
        gold = np.array(char_mask(doc.gold, len(doc.text)), dtype=bool)
        for span in doc.detected:
            if source_family(span.source or "") != RULES or not span.length:
                continue
            row = counts.setdefault(
                (span.source or "", span.label), {"spans": 0, "hits": 0, "chars": 0, "collateral_chars": 0}
            )
            inside = int(gold[span.start : span.end].sum())
            row["spans"] += 1
            row["hits"] += int(inside >= HIT_SHARE * span.length)
            row["chars"] += span.length
            row["collateral_chars"] += span.length - inside
    return counts


def marginal_counts(docs: Sequence, combination: Sequence[str], label: str) -> tuple[int, int]:
    """(hits, spans) of a label's rule spans that ``combination`` leaves mostly open (< HIT_SHARE of their
    characters masked): what adding ``rules[label]`` would add. A pattern whose every match the tagger
    already masks adds nothing on the labels; one whose open matches are mostly public text (an employer's
    website next to the candidate's profile URL) adds collateral, whatever its precision overall."""
    hits = spans = 0
    for doc in docs:
        n = len(doc.text)
        gold = np.array(char_mask(doc.gold, n), dtype=bool)
        masked = np.array(char_mask(select_sources(n, doc.detected, combination), n), dtype=bool)
        for span in select_sources(n, doc.detected, (label_element(label),)):
            if span.length and masked[span.start : span.end].mean() < HIT_SHARE:
                spans += 1
                hits += int(gold[span.start : span.end].mean() >= HIT_SHARE)
    return hits, spans


def posterior_precision(hits: int, spans: int) -> float:
    """The mean of the Beta(PRIOR_HITS + hits, PRIOR_MISSES + misses) posterior of a span being private."""
    return (PRIOR_HITS + hits) / (PRIOR_HITS + PRIOR_MISSES + spans)


def choose_detectors(
    docs: Sequence, combinations=COMBINATIONS, collateral_budget: float | None = None, objective: str = "f1"
) -> tuple[tuple[str, ...], list[dict], list[dict]]:
    """(combination, the family table of :func:`choose_combination`, one row per rule recognizer and label).

    The family choice weighs the rules as one family: on a domain where the broad recognizers fire on text
    its labels call public, the family loses to the tagger and the exact e-mail, phone and URL patterns
    are thrown away with it, though each of them alone would have masked its values whole. So after the
    family choice, each exact-format label (``STRUCTURED_LABELS``) the combination leaves out is measured on
    its own: its rule spans are kept (``rules[LABEL]`` appended) unless their posterior precision on the
    domain's labels (a Beta prior that trusts validated patterns, updated with the domain's own hits and
    misses) is below KEEP_PRECISION, overall or over the spans the combination leaves open (what adding
    them adds), or adding them would take the collateral above both the family choice's and the budget.
    A broad label's rule spans (names, places, organisations) get no such prior: they are added only where
    they pay for themselves on the domain's labels (:func:`_pays_for_itself`).
    Every recognizer is listed, kept or dropped, with its counts and the reason."""
    family, table = choose_combination(docs, combinations, collateral_budget, objective)
    counts = recognizer_counts(docs)
    rules_in = RULES in family
    by_label: dict[str, list[int]] = {}
    for (_, label), row in counts.items():
        agg = by_label.setdefault(label, [0, 0])
        agg[0] += row["hits"]
        agg[1] += row["spans"]
    added: list[str] = []
    reasons: dict[str, str] = {}
    marginal: dict[str, tuple[int, int]] = {}
    if not rules_in:
        base_fpr = _pooled(docs, family).fpr
        for label in [*sorted(STRUCTURED_LABELS & set(by_label)), *sorted(set(by_label) - STRUCTURED_LABELS)]:
            if label in STRUCTURED_LABELS:
                verdict = _exact_format_verdict(
                    docs, (*family, *added), label, by_label[label], base_fpr, collateral_budget
                )
            else:
                verdict = _pays_for_itself(docs, (*family, *added), label, objective, collateral_budget)
            keep, open_counts, reasons[label] = verdict
            if open_counts is not None:
                marginal[label] = open_counts
            if keep:
                added.append(label_element(label))
    backed: dict[tuple[str, str], int] = {}
    if RULES_CONFIRMED in family:
        for doc in docs:
            for span in select_sources(len(doc.text), doc.detected, (RULES_CONFIRMED,)):
                backed[(span.source or "", span.label)] = backed.get((span.source or "", span.label), 0) + 1
    rows = []
    for (source, label), row in sorted(counts.items()):
        if rules_in:
            reason = "kept: the rules family is in the combination"
        elif label in reasons and (reasons[label].startswith("kept") or RULES_CONFIRMED not in family):
            reason = reasons[label]
        elif RULES_CONFIRMED in family and backed.get((source, label)):
            reason = f"kept where the tagger backs it (rules&tagger): {backed[(source, label)]} spans"
        elif RULES_CONFIRMED in family:
            reason = "dropped: the tagger backs none of its spans (rules&tagger)"
        else:
            reason = "dropped: with the rules family (not an exact-format label)"
        rows.append(_recognizer_row(source, label, row, by_label[label], marginal.get(label), reason))
    return (*family, *added), table, rows


def _recognizer_row(
    source: str, label: str, row: dict, label_counts: list[int], open_counts: tuple[int, int] | None, reason: str
) -> dict:
    hits, spans = label_counts
    return {
        "recognizer": source,
        "label": label,
        **row,
        "precision": round(row["hits"] / row["spans"], 4) if row["spans"] else None,
        "label_posterior_precision": round(posterior_precision(hits, spans), 4) if label in STRUCTURED_LABELS else None,
        # the label's rule spans the family choice left mostly open, and how many of them are private
        "label_open_spans": open_counts[1] if open_counts else None,
        "label_open_hits": open_counts[0] if open_counts else None,
        "kept": reason.startswith("kept"),
        "reason": reason,
    }


def _exact_format_verdict(
    docs: Sequence,
    combination: Sequence[str],
    label: str,
    label_counts: list[int],
    base_fpr: float,
    budget: float | None,
) -> tuple[bool, tuple[int, int] | None, str]:
    """(keep, (open hits, open spans), reason) for an exact-format label's rule spans: a Beta(9, 1) prior
    trusts the validated pattern; the domain's labels, overall and over the spans the combination leaves
    open, can overrule it; the collateral must stay within the family choice's or the budget."""
    hits, spans = label_counts
    if posterior_precision(hits, spans) < KEEP_PRECISION:
        return False, None, "dropped: precision on the domain's labels below the bar"
    new_hits, new_spans = marginal_counts(docs, combination, label)
    if posterior_precision(new_hits, new_spans) < KEEP_PRECISION:
        reason = f"dropped: of its {new_spans} spans the combination leaves open, {new_hits} are private"
        return False, (new_hits, new_spans), reason
    fpr = _pooled(docs, (*combination, label_element(label))).fpr
    if fpr > base_fpr + 1e-12 and (budget is None or fpr > budget):
        return False, (new_hits, new_spans), "dropped: collateral above the budget"
    return True, (new_hits, new_spans), "kept: exact format, precision on the domain's labels holds"


def _pays_for_itself(
    docs: Sequence, combination: Sequence[str], label: str, objective: str, budget: float | None
) -> tuple[bool, tuple[int, int], str]:
    """(keep, (open hits, open spans), reason) for a broad (not exact-format) label's rule spans: no prior
    trust, so they must earn their place on the domain's labels: at least MIN_OPEN_HITS of the spans the
    combination leaves open private, their Beta(1, 1) posterior precision at least KEEP_PRECISION, the
    calibration objective raised by adding them, and the collateral within the budget."""
    hits, spans = marginal_counts(docs, combination, label)
    if not spans:
        return False, (hits, spans), "dropped: the combination already masks its spans"
    if hits < MIN_OPEN_HITS or (1 + hits) / (2 + spans) < KEEP_PRECISION:
        return False, (hits, spans), f"dropped: of its {spans} spans the combination leaves open, {hits} are private"
    key = "f2" if objective == "f2" else "tpr" if objective == "recall_at_budget" else "f1"
    base, more = _pooled(docs, combination), _pooled(docs, (*combination, label_element(label)))
    gain = getattr(more, key) - getattr(base, key)
    if gain <= 0 or (more.fpr > base.fpr + 1e-12 and (budget is None or more.fpr > budget)):
        return False, (hits, spans), f"dropped: adding it does not raise calibration {key} within the budget"
    return True, (hits, spans), f"kept: pays for itself on the domain's labels ({key} +{gain:.4f})"


def _pooled(docs: Sequence, combination: Sequence[str]) -> Metrics:
    tp = fp = pos = neg = 0
    for doc in docs:
        gold = np.array(char_mask(doc.gold, len(doc.text)), dtype=bool)
        pred = np.array(char_mask(select_sources(len(doc.text), doc.detected, combination), len(doc.text)), bool)
        counts = doc_counts(pred, gold)
        tp, fp, pos, neg = tp + counts[0], fp + counts[1], pos + counts[2], neg + counts[3]
    return Metrics.from_counts(tp, fp, pos, neg)


def recognizer_summary(rows: Sequence[dict]) -> dict:
    """Kept and dropped recognizers by label, counts only: what the card and the metrics file show."""
    out: dict[str, dict] = {}
    for row in rows:
        entry = out.setdefault(row["label"], {"kept": [], "dropped": [], "spans": 0, "hits": 0})
        entry["kept" if row["kept"] else "dropped"].append(row["recognizer"])
        entry["spans"] += row["spans"]
        entry["hits"] += row["hits"]
    return dict(sorted(out.items()))
