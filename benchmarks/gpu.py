"""The scoring pass on a CUDA device, when the machine has one (`make bench` runs it; CPU keys unchanged).

    python -m benchmarks.gpu [--docs 24]

Reports the pipeline's GPU tokens/s, the GPU's bf16 matmul peak measured in the same run (an 8192^3
product, CUDA events, best of 5), the pipeline's useful FLOP/s as a fraction of it (FLOPs per token as
`benchmarks.flops.ModelFlops` counts them), and whether the scores hold the identical-results rule on
the device: the same texts scored in one pass and split in two must give the same bits (the call plan
fixes every call's shape on accelerators), and how far the GPU's NLLs lie from the CPU's (different
kernels and accumulation order: a tolerance, not bits). Without CUDA it says so in one key.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GPU_MATMUL_N = 8192
CPU_COMPARED_TEXTS = 8  # texts also scored on CPU for the GPU-vs-CPU distance (CPU time stays small)


def cuda_available() -> bool:
    from curation.score.scorer import no_accelerator_possible

    if no_accelerator_possible():  # no device node: do not import torch's CUDA runtime for nothing
        return False
    import torch

    return torch.cuda.is_available()


def gpu_matmul_peak(n: int = GPU_MATMUL_N, reps: int = 5) -> float:
    """GFLOP/s of an n x n x n bf16 matmul on the current CUDA device, best of ``reps`` after a warm-up."""
    import torch

    a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    a @ b
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1000)
    return 2 * n**3 / best / 1e9


def _same_bits(a: list, b: list) -> bool:
    import numpy as np

    return all(np.array_equal(x.nll, y.nll) and np.array_equal(x.hidden, y.hidden) for x, y in zip(a, b, strict=True))


def gpu_section(texts: list[str], rounds: int = 3) -> dict:
    """GPU keys for `make bench`: tokens/s, measured bf16 peak and fraction, identical-results checks."""
    if not cuda_available():
        return {"gpu": "skipped: no CUDA device on this machine"}
    import numpy as np
    import torch

    from benchmarks.flops import ModelFlops
    from curation.score.scorer import ReferenceScorer, ScoringConfig, plan_chunks

    scorer = ReferenceScorer(ScoringConfig(device="cuda"))
    scorer.load()
    peak = gpu_matmul_peak()
    scorer.score_texts(texts[:4], with_hidden=True)  # warm-up: kernels chosen, memory pools grown
    torch.cuda.synchronize()
    seconds = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        whole = scorer.score_texts(texts, with_hidden=True)
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - t0)
    tokens = sum(s.n_tokens for s in whole)
    cfg, prefix = scorer.config, scorer._prefix_ids()
    flops = ModelFlops(scorer._model)
    useful = sum(
        flops.of_plan(
            plan_chunks(len(scorer.tokenize(t)[0]), cfg.max_length - len(prefix), cfg.min_context), len(prefix)
        )
        for t in texts
    )
    best = min(seconds)
    half = len(texts) // 2
    split = scorer.score_texts(texts[:half], with_hidden=True) + scorer.score_texts(texts[half:], with_hidden=True)
    cpu = ReferenceScorer(ScoringConfig(device="cpu")).score_texts(texts[:CPU_COMPARED_TEXTS])
    diffs = np.concatenate([np.abs(g.nll - c.nll) for g, c in zip(whole, cpu, strict=False)])
    return {
        "gpu_name": torch.cuda.get_device_name(0),
        "gpu_dtype": scorer.description["dtype"],
        "gpu_call_plan": scorer.call_plan.key,
        "gpu_tokens_per_s": round(tokens / best, 1),
        "gpu_tokens_per_s_rounds": [round(tokens / s, 1) for s in seconds],
        "gpu_peak_matmul_gflops": round(peak, 1),
        "gpu_scoring_gflops": round(useful / best / 1e9, 1),
        "gpu_scoring_fraction_of_peak": round(useful / best / 1e9 / peak, 4),
        # the same texts in one pass and in two: the same bits (scores and hidden states)
        "gpu_split_identical": _same_bits(whole, split),
        "gpu_repeat_identical": _same_bits(whole, scorer.score_texts(texts, with_hidden=True)),
        # GPU vs CPU NLLs on the first texts: a tolerance (different kernels), never compared as bits
        "gpu_vs_cpu_nll_max_abs_diff": round(float(diffs.max()), 4),
        "gpu_vs_cpu_nll_mean_abs_diff": round(float(diffs.mean()), 5),
        "gpu_tokens": tokens,
    }


def main() -> None:
    from benchmarks.corpus import make_corpus

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=24)
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        make_corpus(corpus, args.docs)
        texts = [json.loads(x)["text"] for x in corpus.read_text().splitlines()]
    print(json.dumps(gpu_section(texts)))


if __name__ == "__main__":
    main()
