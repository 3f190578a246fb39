"""How detection signals are combined: the detector sources (rules, CredSweeper, the tagger, and rule or
CredSweeper spans the tagger confirms), the candidate combinations, and choosing one per domain.

Facts first: each source's spans are stored in ``detector_spans`` with their source. Policy later:
calibration picks, per domain, which combination of sources to trust by F1 on the calibration split,
where the tagger's own spans come from heads that did not train on those documents (out of fold).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from curation.core.spans import Span, char_mask, merge
from curation.policy.calibration import Metrics, bootstrap_metrics, doc_counts

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
        if name in CONFIRMED_BY_TAGGER:
            tagged = np.array(char_mask(by_family[TAGGER], text_len), dtype=bool)
            family = by_family[CONFIRMED_BY_TAGGER[name]]
            kept += [s for s in family if s.length and tagged[s.start : s.end].mean() >= AGREEMENT]
        else:
            kept += by_family[name]
    return sorted(kept, key=lambda s: (s.start, s.end))


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
    docs: Sequence, combinations=COMBINATIONS, collateral_budget: float | None = None
) -> tuple[tuple[str, ...], list[dict]]:
    """The detector combination for labeled docs (ScoredDoc-like: text, gold, detected), by a one-standard-
    error rule: among the combinations whose pooled character F1 is within one bootstrap standard error
    of the paired difference (documents resampled, the same resamples for every combination) of the best,
    and whose collateral is within one such error of the best's or within ``collateral_budget`` (the
    calibration's acceptable collateral), the one that finds the most (recall); ties go to the earlier
    (simpler) combination. On a small validation set the best F1 alone picked "rules" over a tagger that
    found more at the same collateral: within the noise, the stronger signal is kept."""
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
        measured.append((combination, metrics, bootstrap_metrics(counts)))
        table.append({"combination": "+".join(combination), **rounded_metrics(metrics)})
    if not measured:
        return (RULES,), table
    best_f1 = max(m.f1 for _, m, _ in measured)
    best = next(item for item in measured if item[1].f1 >= best_f1 - 1e-9)

    def indistinguishable(item) -> bool:
        """Paired differences over the same document resamples: F1 no more than one standard error below
        the best's, collateral no more than one standard error above it."""
        if item is best:
            return True
        d_f1, d_fpr = item[2]["f1"] - best[2]["f1"], item[2]["fpr"] - best[2]["fpr"]
        se_f1 = float(np.std(d_f1)) if len(d_f1) else 0.0
        se_fpr = float(np.std(d_fpr)) if len(d_fpr) else 0.0
        collateral_ok = item[1].fpr <= best[1].fpr + se_fpr + 1e-12 or (
            collateral_budget is not None and item[1].fpr <= collateral_budget
        )
        return item[1].f1 >= best_f1 - se_f1 - 1e-9 and collateral_ok

    eligible = [i for i, item in enumerate(measured) if indistinguishable(item)]
    chosen = measured[max(eligible, key=lambda i: (measured[i][1].tpr, -i))]
    for i, (row, (combination, _, _)) in enumerate(zip(table, measured, strict=True)):
        row["within_one_se"] = i in eligible
        row["best_f1"] = combination == best[0]
        row["chosen"] = combination == chosen[0]
    return chosen[0], table


def rounded_metrics(m: Metrics) -> dict:
    return {"precision": round(m.precision, 4), "recall": round(m.tpr, 4), "f1": round(m.f1, 4), "fpr": round(m.fpr, 4)}


def merged(spans: Sequence[Span]) -> list[Span]:
    return merge(spans)
