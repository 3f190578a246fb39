"""Call shapes on this CPU: the pipeline's scorer over the generated corpus with each fixed call plan.

    .venv/bin/python -m benchmarks.call_shapes [--docs 48] [--rounds 2]

A `CallPlan(width_step, rows)` fixes every model call's shape from its own chunk's length, so scores stay
the same bits whatever the split (a text's hidden states measured identical in any row of a fixed 4 x 256
call, beside any companions). This asks whether taller calls (several chunks of one width bucket, filler
rows to complete them) are faster than one chunk per call at its own width, with calls on one thread each
side by side as the pipeline runs them. Rounds alternate the plans; prints tokens/s per plan and round,
then one JSON line with each plan's best and its ratio to the own-width plan's best.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PLANS = {"own_width_x1": (1, 1), "w64_x4": (64, 4), "w64_x8": (64, 8), "w128_x4": (128, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import curation.score.scorer as scoring
    from benchmarks.corpus import write_corpus

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        write_corpus(path, args.docs)
        texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    scorer = scoring.ReferenceScorer(scoring.ScoringConfig())
    scorer.load()
    tokens = sum(len(scorer.tokenize(t)[0]) for t in texts)
    best: dict[str, float] = {}
    original = scoring.call_plan_for
    try:
        for round_ in range(args.rounds):
            for name, (step, rows) in PLANS.items():
                plan = scoring.CallPlan(step, rows)
                scoring.call_plan_for = lambda device, budget, width=512, plan=plan: plan
                started = time.perf_counter()
                scorer.score_texts(texts)
                rate = tokens / (time.perf_counter() - started)
                best[name] = max(best.get(name, 0.0), rate)
                print(f"round {round_} {name:<13} {rate:7.0f} tokens/s", flush=True)
    finally:
        scoring.call_plan_for = original
    own = best["own_width_x1"]
    result = {
        "cpu_dtype": scorer.description["dtype"],
        "texts": len(texts),
        "tokens": tokens,
        **{f"{name}_tokens_per_s": round(rate) for name, rate in best.items()},
        **{f"{name}_vs_own_width": round(rate / own, 3) for name, rate in best.items() if name != "own_width_x1"},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
