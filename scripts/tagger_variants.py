"""Where the learned tagger's ceiling is: head variants trained on one seeded half, scored on the other.

    .venv/bin/python scripts/tagger_variants.py ../shared/data/tab_echr_dev/labeled.jsonl \
        --also curation/data/public/tab_echr.jsonl --variants base seeds3 rules

Each variant trains the head on the first half of ``split_records(records, 0.5, 0)`` (the half
``scripts/dev_halves.py`` calls ``cal``) plus ``--also``, and sweeps the character threshold on the
other half: recall at precision >= 0.80, precision at recall >= 0.90 and the best F1 (tagger alone,
before propagation). ``--consistency`` also counts, on each half, the unmarked occurrences of strings
that are gold targets elsewhere in the same half: a decision no model reading one text can get right
both ways. Scores and hidden states come from the cache ``scripts/dev_eval.sh`` fills (no model calls
when it ran); a missing text is scored first.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.core.spans import char_mask, spans_from_mask
from curation.core.warehouse import Warehouse, load_token_scores, sha256_text
from curation.labels.sets import LabeledRecord, load_labeled, split_records
from curation.policy.calibration import char_metrics
from curation.score.pending import score_missing
from curation.score.scorer import ReferenceScorer
from curation.tagger.model import HiddenStateCache, TaggedText, TaggerConfig, char_private_scores, train_tagger

RULE_LABELS = ("PERSON", "LOCATION", "ORGANIZATION", "DATE_TIME", "NRP")


@dataclass
class Example:
    item: TaggedText
    nll: np.ndarray
    rules: list


# name -> (TaggerConfig overrides, options): seeds averages several heads' probabilities; features adds
# input columns (token NLL, one-hot rule spans); no_also drops --also; hysteresis decodes phrases
VARIANTS: dict[str, tuple[dict, dict]] = {
    "base": ({}, {}),
    "no_public_set": ({}, {"no_also": True}),
    "nll_feature": ({}, {"features": ("nll",)}),
    "rule_features": ({}, {"features": ("rules",)}),
    "rule_and_nll_features": ({}, {"features": ("rules", "nll")}),
    "seeds3": ({}, {"seeds": (0, 1, 2)}),
    "epochs40": ({"epochs": 40}, {}),
    "hidden256": ({"hidden": 256}, {}),
    "dropout0.3": ({"dropout": 0.3}, {}),
    "segment512": ({"segment": 512}, {}),
    "hysteresis0.1": ({}, {"hysteresis": 0.1}),
}


def examples(records: list[LabeledRecord], with_rules: bool, cache_dir: Path) -> list[Example]:
    warehouse = Warehouse(cache_dir / "eval.duckdb")
    scorer = ReferenceScorer()
    cache = HiddenStateCache(cache_dir, scorer.model_key)
    shas = [sha256_text(r.text) for r in records]
    score_missing(warehouse, scorer, list(zip(shas, [r.text for r in records], strict=True)), print, cache)
    scores = load_token_scores(warehouse, scorer.model_key, shas)
    rules: list[list] = [[] for _ in records]
    if with_rules:
        from curation.detect import DetectorConfig, DetectorSuite

        rules = DetectorSuite(DetectorConfig()).detect([r.text for r in records], [r.kind for r in records])
    return [
        Example(
            TaggedText(r.text, scores[s].char_start, scores[s].char_end, cache.get(s), list(r.spans)), scores[s].nll, ru
        )
        for r, s, ru in zip(records, shas, rules, strict=True)
    ]


def with_features(example: Example, features: tuple[str, ...]) -> TaggedText:
    item = example.item
    columns = [item.hidden.astype(np.float32)]
    if "nll" in features:
        columns.append((np.clip(example.nll, 0, 20) / 5.0)[:, None].astype(np.float32))
    if "rules" in features:
        onehot = np.zeros((len(item.char_start), len(RULE_LABELS) + 1), np.float32)
        for span in example.rules:
            lo = int(np.searchsorted(item.char_end, span.start, side="right"))
            hi = int(np.searchsorted(item.char_start, span.end, side="left"))
            onehot[lo:hi, RULE_LABELS.index(span.label) if span.label in RULE_LABELS else -1] = 1.0
        columns.append(onehot)
    return TaggedText(item.text, item.char_start, item.char_end, np.concatenate(columns, axis=1), item.gold)


def hysteresis(scores: np.ndarray, low: float) -> np.ndarray:
    """Each run of characters scoring >= low takes its maximum: a phrase is masked whole or not at all."""
    out = scores.copy()
    for run in spans_from_mask(scores >= low):
        a, b = run.start, run.end
        out[a:b] = np.where(scores[a:b] > 0, scores[a:b].max(), 0.0)
    return out


def sweep_summary(items: list[TaggedText], char_scores: list[np.ndarray]) -> dict:
    scores = np.concatenate(char_scores)
    gold = np.concatenate([np.array(char_mask(it.gold, len(it.text)), bool) for it in items])
    rows = []
    for threshold in np.arange(0.05, 0.96, 0.01):
        m = char_metrics(scores >= threshold, gold)
        rows.append((float(threshold), m.precision, m.tpr, m.f1))
    best = max(rows, key=lambda r: r[3])
    return {
        "recall_at_p80": max([r for _, p, r, _ in rows if p >= 0.80] or [0.0]),
        "precision_at_r90": round(max([p for _, p, r, _ in rows if r >= 0.90] or [0.0]), 3),
        "best_f1": best[3],
        "best_point": f"t {best[0]:.2f}: P {best[1]:.3f} R {best[2]:.3f}",
    }


def run_variant(name: str, train: list[Example], also: list[Example], test: list[Example]) -> dict:
    overrides, options = VARIANTS[name]
    features = options.get("features", ())
    train_items = [with_features(e, features) for e in train + ([] if options.get("no_also") else also)]
    test_items = [with_features(e, features) for e in test]
    started = time.perf_counter()
    total: list[np.ndarray] | None = None
    seeds = options.get("seeds", (0,))
    for seed in seeds:
        head = train_tagger(train_items, "variants", TaggerConfig(seed=seed, **overrides))
        probs = head.predict_many([it.hidden for it in test_items])
        total = probs if total is None else [a + b for a, b in zip(total, probs, strict=True)]
    char_scores = [
        char_private_scores(it.text, it.char_start, it.char_end, p / len(seeds))
        for it, p in zip(test_items, total or [], strict=True)
    ]
    if "hysteresis" in options:
        char_scores = [hysteresis(s, options["hysteresis"]) for s in char_scores]
    return {**sweep_summary(test_items, char_scores), "seconds": time.perf_counter() - started}


def inconsistent_occurrences(records: list[LabeledRecord]) -> tuple[int, int, int, Counter]:
    """(target chars, unmarked occurrences, their chars, top strings) of strings >= 3 characters that
    are a gold target in some record of ``records`` and appear unmarked (word-bounded) in one of them."""
    marked: dict[str, set[int]] = defaultdict(set)
    for i, record in enumerate(records):
        for span in record.spans:
            marked[record.text[span.start : span.end]].add(i)
    target_chars = occurrences = occurrence_chars = 0
    top: Counter = Counter()
    for record in records:
        gold = np.array(char_mask(record.spans, len(record.text)), bool)
        target_chars += int(gold.sum())
        for value in (v for v in marked if len(v) >= 3):
            for match in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", record.text):
                if not gold[match.start() : match.end()].any():
                    occurrences += 1
                    occurrence_chars += match.end() - match.start()
                    top[value] += 1
    return target_chars, occurrences, occurrence_chars, top


def propagated_gold(records: list[LabeledRecord]) -> dict:
    """P / R of a perfect detector (the gold spans) after the masking step's per-document propagation,
    as ``curation eval`` applies it: the mentions a convention leaves public beside a masked copy."""
    from curation.core.config import MaskingConfig
    from curation.policy.propagation import propagate_mentions

    texts = {r.id: r.text for r in records}
    masked, _ = propagate_mentions(
        texts,
        {r.id: list(r.spans) for r in records},
        {r.id: r.id for r in records},
        scope="document",
        min_chars=MaskingConfig().min_propagation_chars,
    )
    predicted = np.concatenate([np.array(char_mask(masked[r.id], len(r.text)), bool) for r in records])
    gold = np.concatenate([np.array(char_mask(r.spans, len(r.text)), bool) for r in records])
    m = char_metrics(predicted, gold)
    return {"precision": m.precision, "recall": m.tpr, "extra_chars": int((predicted & ~gold).sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", help="a labeled JSONL (a shared dev set)")
    parser.add_argument("--also", nargs="*", default=[], help="extra training sets, as the eval's public sets")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--cache", default=".devcache", help="the scores / hidden-state cache")
    parser.add_argument("--consistency", action="store_true")
    args = parser.parse_args()
    records = load_labeled(Path(args.gold))
    for record in records:
        if record.id.startswith("cred-data/"):
            record.scope_id = record.id.split("/")[1]
    train_records, test_records = split_records(records, 0.5, 0)
    if args.consistency:
        for name, half in (("calibration half", train_records), ("held-out half", test_records)):
            chars, count, count_chars, top = inconsistent_occurrences(half)
            print(
                f"{name}: {chars} target chars; {count} unmarked occurrences ({count_chars} chars) of strings "
                f"that are targets elsewhere in the half; most often: {', '.join(v for v, _ in top.most_common(8))}"
            )
            oracle = propagated_gold(half)
            print(
                f"{name}: the gold spans after per-document propagation: P {oracle['precision']:.3f} "
                f"R {oracle['recall']:.3f} ({oracle['extra_chars']} non-target chars masked)"
            )
    with_rules = any("rules" in VARIANTS[v][1].get("features", ()) for v in args.variants)
    cache_dir = Path(args.cache)
    train = examples(train_records, with_rules, cache_dir)
    test = examples(test_records, with_rules, cache_dir)
    also = examples([r for path in args.also for r in load_labeled(Path(path))], with_rules, cache_dir)
    print("| variant | recall at P >= 0.80 | precision at R >= 0.90 | best F1 (threshold: P, R) | seconds |")
    print("|---|---|---|---|---|")
    for name in args.variants:
        r = run_variant(name, train, also, test)
        print(
            f"| {name} | {r['recall_at_p80']:.3f} | {r['precision_at_r90'] or 'not reached'} | {r['best_f1']:.3f} "
            f"({r['best_point']}) | {r['seconds']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
