"""What the learned tagger adds to the scoring pass, measured in one run on the same texts.

    python -m benchmarks.tagger [--docs 24] [--rounds 3]

(a) the scoring pass alone (NLL per token); (b) the same pass also returning each token's last hidden
state, writing it to the hidden-state cache and applying a 256-unit head (t, t+1, t+2) to it. Timed in
short alternating slices (the order flips every slice) because the shared CPU's speed drifts. The
head's weights do not change its cost, so an untrained head of the production shape is timed.
Prints one JSON line with tagger_overhead (b/a - 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def tagger_overhead(texts: list[str], rounds: int = 3, group_size: int = 8) -> dict:
    import torch

    from curation.score.scorer import ReferenceScorer, ScoringConfig
    from curation.tagger.model import HiddenStateCache, Tagger, TaggerConfig, _build_head

    scorer = ReferenceScorer(ScoringConfig(device="cpu"))  # the CPU section; the GPU has benchmarks/gpu.py
    scorer.load()
    config = TaggerConfig()
    head = _build_head(scorer.hidden_size, 24, config)
    tagger = Tagger(["O", *[f"L{i}" for i in range(23)]], config, head.state_dict(), scorer.hidden_size, "bench")
    plain_s = tagged_s = 0.0
    tokens = 0
    with tempfile.TemporaryDirectory() as tmp:
        cache = HiddenStateCache(Path(tmp), scorer.model_key)
        groups = [texts[i : i + group_size] for i in range(0, len(texts), group_size)]
        flip = False
        for group in groups:  # warm-up, untimed: kernels per shape, the scorer's thread tuner's first looks
            scorer.score_texts(group, with_hidden=True)
        for _ in range(rounds):
            for group in groups:
                for mode in ("plain", "tagged") if not flip else ("tagged", "plain"):
                    started = time.perf_counter()
                    if mode == "plain":
                        scored = scorer.score_texts(group)
                        plain_s += time.perf_counter() - started
                        tokens += sum(s.n_tokens for s in scored)
                    else:
                        scored = scorer.score_texts(group, with_hidden=True)
                        for i, s in enumerate(scored):
                            cache.put(f"{i}", s.hidden)
                        tagger.predict_many([s.hidden for s in scored])  # as tagger_spans does per batch
                        tagged_s += time.perf_counter() - started
                flip = not flip
    del torch
    return {
        "tagger_overhead": round(tagged_s / plain_s - 1, 4),
        "plain_tokens_per_s": round(tokens / plain_s, 1),
        "tagged_tokens_per_s": round(tokens / tagged_s, 1),
        "tokens": tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from benchmarks.corpus import make_corpus

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        make_corpus(path, args.docs)
        texts = [json.loads(x)["text"] for x in path.read_text().splitlines()]
    print(json.dumps(tagger_overhead(texts, args.rounds)))


if __name__ == "__main__":
    main()
