"""Dev measurement of the learned tagger: train on one seeded half of a labeled set, test on the other.

    .venv/bin/python scripts/tagger_dev.py /work/shared/data/presidio_synth/labeled.jsonl [--also FILE ...]

Scores (and hidden states) are cached in --cache (DuckDB + .npy per text sha256), so a second run
makes no model calls. Prints char-level P/R/F1 and entity-level recall for each signal.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from curation.core.spans import char_mask, merge
from curation.core.warehouse import Warehouse, load_token_scores, sha256_text
from curation.labels.sets import load_labeled, split_records
from curation.policy.calibration import char_metrics
from curation.score.pending import score_missing
from curation.score.scorer import ReferenceScorer
from curation.tagger.model import (
    HiddenStateCache,
    TaggedText,
    TaggerConfig,
    choose_threshold,
    decode_spans,
    entity_recall,
    out_of_fold_probs,
    train_tagger,
)


def repo_scoped(records):
    for r in records:
        if r.id.startswith("cred-data/"):
            r.scope_id = r.id.split("/")[1]
    return records


def tagged(records, scorer, warehouse, cache) -> list[TaggedText]:
    shas = [sha256_text(r.text) for r in records]
    started = time.perf_counter()
    n = score_missing(warehouse, scorer, list(zip(shas, [r.text for r in records], strict=True)), print, cache)
    if n:
        print(f"scored {n} texts in {time.perf_counter() - started:.0f}s")
    scores = load_token_scores(warehouse, scorer.model_key, shas)
    return [
        TaggedText(r.text, scores[s].char_start, scores[s].char_end, cache.get(s), list(r.spans))
        for r, s in zip(records, shas, strict=True)
    ]


def report(name, items, predicted):
    pred = np.concatenate([np.array(char_mask(p, len(it.text)), bool) for it, p in zip(items, predicted, strict=True)])
    gold = np.concatenate([np.array(char_mask(it.gold, len(it.text)), bool) for it in items])
    m = char_metrics(pred, gold)
    docs = [(it.text, it.gold, p) for it, p in zip(items, predicted, strict=True)]
    ent = entity_recall(docs, "identifier")
    per_label = entity_recall(docs, "label")
    print(
        f"{name:<28} P {m.precision:.3f} R {m.tpr:.3f} F1 {m.f1:.3f} FPR {m.fpr:.3f} | "
        + " ".join(f"{k}:{v['fully_masked']:.3f}" for k, v in ent.items())
        + " | "
        + " ".join(f"{k}:{v['fully_masked']:.2f}" for k, v in per_label.items())
    )
    return m


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("gold")
    parser.add_argument("--also", nargs="*", default=[], help="extra training sets (all records)")
    parser.add_argument("--cache", default=".devcache")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--credsweeper", action="store_true")
    parser.add_argument("--rules", action="store_true")
    args = parser.parse_args()
    cache_dir = Path(args.cache)
    cache_dir.mkdir(exist_ok=True)
    warehouse = Warehouse(cache_dir / "eval.duckdb")
    scorer = ReferenceScorer()
    cache = HiddenStateCache(cache_dir, scorer.model_key)
    records = repo_scoped(load_labeled(Path(args.gold)))
    train_recs, test_recs = split_records(records, 0.5, args.seed)
    extra = [r for path in args.also for r in load_labeled(Path(path))]
    train = tagged(train_recs, scorer, warehouse, cache)
    test = tagged(test_recs, scorer, warehouse, cache)
    extra_items = tagged(extra, scorer, warehouse, cache) if extra else []
    config = TaggerConfig(epochs=args.epochs)
    started = time.perf_counter()
    oof = out_of_fold_probs(train, scorer.model_key, config)
    threshold, fit = choose_threshold(train, oof)
    head = train_tagger(train + extra_items, scorer.model_key, config)
    print(f"trained in {time.perf_counter() - started:.0f}s; threshold {threshold:.3f} (oof F1 {fit['f1']:.3f})")
    tagger_spans = [
        decode_spans(it.text, it.char_start, it.char_end, head.predict(it.hidden), head.labels, threshold)
        for it in test
    ]
    report("tagger", test, tagger_spans)
    for t in (0.3, 0.5, 0.7):
        report(
            f"tagger@{t}",
            test,
            [decode_spans(it.text, it.char_start, it.char_end, head.predict(it.hidden), head.labels, t) for it in test],
        )
    if args.rules or args.credsweeper:
        from curation.detect import DetectorConfig, DetectorSuite

        kinds = [r.kind for r in test_recs]
        texts = [r.text for r in test_recs]
        if args.rules:
            rules = DetectorSuite(DetectorConfig()).detect(texts, kinds)
            report("rules", test, rules)
            report("rules+tagger", test, [merge(a + b) for a, b in zip(rules, tagger_spans, strict=True)])
        if args.credsweeper:
            from curation.detect import CredSweeperDetector

            cs = CredSweeperDetector()
            found = [cs.find(t) for t in texts]
            report("credsweeper", test, found)
            for agree in (0.0, 0.3):
                kept = []
                for it, spans, tags in zip(test, found, tagger_spans, strict=True):
                    mask = np.array(char_mask(tags, len(it.text)), bool)
                    kept.append(
                        [s for s in spans if s.length and mask[s.start : s.end].mean() >= agree and (agree > 0 or True)]
                    )
                report(f"credsweeper&tagger>={agree}", test, kept)
            report("credsweeper|tagger", test, [merge(a + b) for a, b in zip(found, tagger_spans, strict=True)])
    print(json.dumps(head.report))


if __name__ == "__main__":
    main()
