"""The scoring pass on a CUDA device: runs where torch sees one, skipped with its reason elsewhere.

On the device the call plan fixes every call's shape (widths rounded to 64, a fixed row count), so the
same texts must give the same bits however they are split; against the CPU the kernels differ, so NLLs
are compared within a tolerance (bf16 on both: per-token differences of a few hundredths of a nat are
expected, docs/benchmarks.md "GPU")."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.gpu import cuda_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not cuda_available(), reason="no CUDA device here: `make bench` measures the GPU where one is"),
]

TEXTS = [
    "Dear Ms. Alvarez, your appointment at 14 Rue Lepic is confirmed for Tuesday.",
    "def connect():\n    return client(host='db.internal', password=os.environ['DB_PASSWORD'])\n",
    "lol see u at the gym tmrw, ask Jordan for the code " * 12,
    "Short.",
]


def test_gpu_scores_are_the_same_bits_whatever_the_split_and_near_the_cpu():
    from curation.score.scorer import ReferenceScorer, ScoringConfig

    gpu = ReferenceScorer(ScoringConfig(device="cuda"))
    whole = gpu.score_texts(TEXTS, with_hidden=True)
    split = gpu.score_texts(TEXTS[:1], with_hidden=True) + gpu.score_texts(TEXTS[1:], with_hidden=True)
    for a, b in zip(whole, split, strict=True):
        assert np.array_equal(a.nll, b.nll) and np.array_equal(a.hidden, b.hidden)
    cpu = ReferenceScorer(ScoringConfig(device="cpu")).score_texts(TEXTS)
    for g, c in zip(whole, cpu, strict=True):
        assert np.array_equal(g.char_start, c.char_start)
        assert float(np.abs(g.nll - c.nll).mean()) < 0.1
        assert np.isfinite(g.nll).all()
