"""Issue 35 item 1's premise, measured: the tagger on the states of fewer decoder layers.

    .venv/bin/python scripts/layer_probe.py --halves DIR [--sets social_dev,presidio_synth] [--layers 8,16,24,30]
        [--max-docs N]

For each dev set's seeded halves (scripts/dev_halves.py): one forward pass per chunk of the embedded model
(the pipeline's chunk plan and prompt), keeping every asked layer's states (the final norm applied, as the
last layer's are); the tagger head (the default TaggerConfig) trained per layer on the calibration half,
then character-level P / R / F1 of its spans on the held-out half at the default decode threshold 0.5,
any gold label counting as private. Tagger-only: the detectors and the calibrated combination are not
involved, so this says whether a truncated pass can keep the tagger's quality, not the pipeline's F1.
Prints one JSON line per set and layer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def states_by_layer(scorer, texts: list[str], layers: list[int]) -> list[dict]:
    import torch

    from curation.score.scorer import plan_chunks

    model, cfg, prefix = scorer._model, scorer.config, scorer._prefix_ids()
    out = []
    torch.set_num_threads(2)
    with torch.inference_mode():
        for text in texts:
            ids, starts, ends = scorer.tokenize(text)
            per_layer = {k: np.zeros((len(ids), model.config.hidden_size), dtype=np.float16) for k in layers}
            for lo, first, hi in plan_chunks(len(ids), cfg.max_length - len(prefix), cfg.min_context):
                x = torch.tensor([prefix + ids[lo:hi]])
                hs = model.model(input_ids=x, output_hidden_states=True).hidden_states
                a, b = len(prefix) + first - lo, len(prefix) + hi - lo
                for k in layers:
                    h = hs[k] if k == len(hs) - 1 else model.model.norm(hs[k])
                    per_layer[k][first:hi] = h[0, a:b].float().numpy().astype(np.float16)
            out.append({"text": text, "starts": np.asarray(starts), "ends": np.asarray(ends), "states": per_layer})
    return out


def char_prf(gold_items, pred_spans) -> tuple[float, float, float]:
    tp = fp = fn = 0
    for (text, gold), pred in zip(gold_items, pred_spans, strict=True):
        g = np.zeros(len(text), bool)
        p = np.zeros(len(text), bool)
        for s in gold:
            g[s.start : s.end] = True
        for s in pred:
            p[s.start : s.end] = True
        nonspace = np.array([not c.isspace() for c in text], bool) if text else np.zeros(0, bool)
        tp += int((g & p & nonspace).sum())
        fp += int((~g & p & nonspace).sum())
        fn += int((g & ~p & nonspace).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return prec, rec, 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def main() -> None:
    from curation.labels.sets import load_labeled
    from curation.score.scorer import ReferenceScorer, ScoringConfig
    from curation.tagger.model import TaggedText, TaggerConfig, decode_spans, train_tagger

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--halves", type=Path, required=True)
    parser.add_argument("--sets", default="social_dev,presidio_synth")
    parser.add_argument("--layers", default="8,16,24,30")
    parser.add_argument("--max-docs", type=int, default=0, help="first N records of each half (0: all)")
    args = parser.parse_args()
    layers = [int(x) for x in args.layers.split(",")]
    scorer = ReferenceScorer(ScoringConfig(device="cpu"))
    scorer.load()
    for name in args.sets.split(","):
        halves = {}
        for part in ("cal", "test"):
            records = load_labeled(args.halves / f"{name}.{part}.jsonl")
            records = records[: args.max_docs] if args.max_docs else records
            t0 = time.perf_counter()
            halves[part] = (records, states_by_layer(scorer, [r.text for r in records], layers))
            print(f"# {name} {part}: {len(records)} records, states in {time.perf_counter() - t0:.0f} s", flush=True)
        for k in layers:
            t0 = time.perf_counter()
            items = [
                TaggedText(r.text, s["starts"], s["ends"], s["states"][k], list(r.spans))
                for r, s in zip(*halves["cal"], strict=True)
            ]
            tagger = train_tagger(items, f"layer-probe-{k}", TaggerConfig())
            test_records, test_states = halves["test"]
            probs = tagger.predict_many([s["states"][k] for s in test_states])
            pred = [
                decode_spans(r.text, s["starts"], s["ends"], p, tagger.labels, 0.5)
                for r, s, p in zip(test_records, test_states, probs, strict=True)
            ]
            prec, rec, f1 = char_prf([(r.text, r.spans) for r in test_records], pred)
            row = {"set": name, "layer": k, "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4)}
            print(json.dumps({**row, "seconds": round(time.perf_counter() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()
