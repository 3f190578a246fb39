"""Reference scoring with the real embedded model: coverage, offsets, prompted and contrastive modes."""

from __future__ import annotations

import numpy as np
import pytest

from curation.score.scorer import ReferenceScorer, ScoringConfig

TEXT = "Hello Dana, café naïve 日本語 — your token is hX9#kq2Lz!Vw.\n" * 3




def test_every_token_scored_once_with_monotone_offsets(scorer):
    (scores,) = scorer.score_texts([TEXT])
    assert scores.n_tokens > 48  # long enough to need several sliding chunks
    assert np.isfinite(scores.nll).all() and (scores.nll >= 0).all()
    assert (np.diff(scores.char_start) >= 0).all() and (scores.char_end >= scores.char_start).all()
    assert scores.char_end[-1] == len(TEXT)
    covered = "".join(TEXT[a:b] for a, b in zip(scores.char_start, scores.char_end, strict=True))
    assert covered == TEXT  # byte-level BPE pieces project back onto the exact characters

@pytest.mark.slow

def test_sliding_context_matches_long_context_closely():
    """float32: the first chunk sees the same context at both widths (in bf16 on AMX CPUs the call width
    alone moves NLLs by up to ~0.05 nats, which is rounding, not context)."""
    narrow = ReferenceScorer(ScoringConfig(max_length=48, min_context=16, dtype="float32"))
    wide = ReferenceScorer(ScoringConfig(max_length=512, min_context=128, dtype="float32"))
    (narrow_scores,) = narrow.score_texts([TEXT])
    (wide_scores,) = wide.score_texts([TEXT])
    assert np.allclose(narrow_scores.nll[:40], wide_scores.nll[:40], atol=1e-3)  # same context in chunk 1


def test_prompted_and_contrastive_scores_differ_and_have_their_own_cache_key(scorer):
    plain = ReferenceScorer(ScoringConfig())
    prompted = ReferenceScorer(ScoringConfig(prompt="The following is a chat with no personal data:"))
    contrast = ReferenceScorer(
        ScoringConfig(
            prompt="The following is a chat with no personal data:",
            contrast_prompt="The following is a chat full of names and secrets:",
        )
    )
    keys = {plain.model_key, prompted.model_key, contrast.model_key}
    assert len(keys) == 3
    (a,) = plain.score_texts(["My password is hX9#kq2Lz!Vw."])
    (b,) = prompted.score_texts(["My password is hX9#kq2Lz!Vw."])
    (c,) = contrast.score_texts(["My password is hX9#kq2Lz!Vw."])
    assert a.n_tokens == b.n_tokens == c.n_tokens
    assert not np.allclose(a.nll, b.nll)
    assert (c.nll < 0).any() or (c.nll > 0).any()
    assert not np.allclose(c.nll, b.nll)


def test_loss_mask_projects_onto_a_downstream_tokenizer(scorer):
    from curation.core.spans import Span
    from curation.policy.masking import loss_mask_for_tokenizer

    text = "key = 'hX9#kq2Lz!Vw' # rotate monthly"
    start = text.index("hX9")
    ids, mask = loss_mask_for_tokenizer(text, [Span(start, start + 12, "PASSWORD")], scorer._tokenizer)
    assert len(ids) == len(mask) and any(mask) and not all(mask)
    enc = scorer._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    for (a, b), masked in zip(enc["offset_mapping"], mask, strict=True):
        assert masked == (b > a and a < start + 12 and b > start)  # any overlap masks the token


def test_batch_tokens_auto_is_the_cpu_default_and_explicit_values_win():
    from curation.score.scorer import CPU_BATCH_TOKENS, ReferenceScorer, ScoringConfig, auto_batch_tokens

    assert auto_batch_tokens("cpu") == CPU_BATCH_TOKENS
    assert ReferenceScorer(ScoringConfig(device="cpu")).batch_tokens == CPU_BATCH_TOKENS
    assert ReferenceScorer(ScoringConfig(device="cpu", batch_tokens=333)).batch_tokens == 333


def test_model_key_on_a_cpu_only_host_does_not_import_torch():
    """A fully cached re-run needs the model key, not the model: no torch import (seconds) for it."""
    import subprocess
    import sys

    assert ReferenceScorer(ScoringConfig()).model_key  # first use may convert the GGUF file (needs torch)
    code = (
        "import sys\n"
        "from curation.score.scorer import ReferenceScorer, ScoringConfig, no_accelerator_possible\n"
        "key = ReferenceScorer(ScoringConfig()).model_key\n"
        "print(no_accelerator_possible(), 'torch' in sys.modules, bool(key))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    if out[0] == "True":  # Linux without an NVIDIA/ROCm device node, like CI
        assert out[1:] == ["False", "True"]
    else:
        assert out[2] == "True"


@pytest.fixture(scope="module")
def small_batches() -> ReferenceScorer:
    return ReferenceScorer(ScoringConfig(max_length=48, min_context=16))


def test_progress_reports_tokens_within_one_long_text(small_batches):
    """One long record is scored in many model calls: progress (tokens done / total) is reported after
    each of them, rising to exactly the number of tokens scored."""
    calls: list[tuple[int, int]] = []
    (scores,) = small_batches.score_texts([TEXT * 3], progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 4
    assert {total for _, total in calls} == {scores.n_tokens}
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == scores.n_tokens and done[0] < scores.n_tokens


def test_scoring_stage_logs_token_progress(small_batches, tmp_path, monkeypatch):
    """The stage's log lines (what the Dagster run log shows) count tokens across the batch's texts."""
    import curation.score.pending as pending
    from curation.core.warehouse import Warehouse

    monkeypatch.setattr(pending, "PROGRESS_EVERY_S", 0.0)  # every batch, not every 10 s
    lines: list[str] = []
    texts = [("a" * 64, TEXT * 3), ("b" * 64, TEXT)]
    before = small_batches.stats.tokens_scored
    assert pending.score_missing(Warehouse(tmp_path / "w.duckdb"), small_batches, texts, lines.append) == 2
    token_lines = [line for line in lines if line.startswith("scoring: ")]
    assert len(token_lines) >= 4
    total = small_batches.stats.tokens_scored - before
    assert token_lines[-1].startswith(f"scoring: {total:,}/{total:,} tokens (100%)")
    assert "texts 1-2 of 2" in token_lines[0] and "tokens/s" in token_lines[0]


def plain_forward_nll(scorer: ReferenceScorer, text: str) -> np.ndarray:
    """The reference: each chunk of the plan alone through a plain forward (full logits, no padding, no
    batching), NLL of the tokens the chunk emits."""
    import torch

    from curation.score.scorer import plan_chunks

    ids, _, _ = scorer.tokenize(text)
    prefix = scorer._prefix_ids()
    out = np.zeros(len(ids), dtype=np.float32)
    width = scorer.config.max_length - len(prefix)
    for lo, first, hi in plan_chunks(len(ids), width, scorer.config.min_context):
        seq = torch.tensor([prefix + ids[lo:hi]])
        with torch.inference_mode():
            logp = torch.log_softmax(scorer._model(input_ids=seq).logits[0].float(), dim=-1)
        start = len(prefix) + first - lo
        positions = torch.arange(start, seq.shape[1])
        out[first:hi] = (-logp[positions - 1, seq[0, positions]]).numpy()
    return out


MIXED = [TEXT * 3, "ok", "Call me at +1 415 555 0100 tomorrow.", TEXT, "x = 1\n" * 20]


@pytest.mark.slow
# measured: fp32 max 2e-5 nats; bf16 max 0.095 (AVX512-BF16 EPYC), 0.21 (AMX Xeon, padded calls); mean <= 0.0062
@pytest.mark.parametrize("dtype,max_diff,mean_diff", [("float32", 1e-4, 2e-5), ("bfloat16", 0.3, 0.01)])
@pytest.mark.parametrize("plan", ["cpu", "accelerator"])
def test_scores_equal_a_plain_forward(dtype, max_diff, mean_diff, plan, monkeypatch):
    """Sliding chunks, the chunked output layer and the call plan (each chunk alone on CPU; padded,
    width-bucketed calls with filler rows on accelerators, run here on the CPU) give the NLLs of one plain
    forward per chunk (fp32: to rounding; bf16: the output layer's chunking and padding change the kernels'
    blocking, so a looser bound per token, a tight one on average)."""
    from curation.score.scorer import CallPlan

    if plan == "accelerator":
        monkeypatch.setattr(ReferenceScorer, "call_plan", property(lambda self: CallPlan(16, 3)))
    scorer = ReferenceScorer(ScoringConfig(max_length=48, min_context=16, dtype=dtype))
    scored = scorer.score_texts(MIXED)
    assert scorer.stats.model_calls > 2
    diffs = []
    for text, scores in zip(MIXED, scored, strict=True):
        reference = plain_forward_nll(scorer, text)
        assert scores.n_tokens == len(reference)
        diffs.append(np.abs(scores.nll - reference))
    assert np.concatenate(diffs).max() <= max_diff
    assert np.concatenate(diffs).mean() <= mean_diff


SPLIT_TEXTS = [TEXT * 2, "Dana's IBAN is DE89 3704 0044 0532 0130 00.", "ok", TEXT, "x = 1\n" * 30, TEXT * 4]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_scores_are_the_same_bits_whatever_the_threads_and_the_split(dtype):
    """The same texts scored with 1, 2 and 3 concurrent calls, and split over 1, 2 or 3 workers (each worker
    scoring only its share, as a shard does): NLLs and hidden states equal to the last bit. On AMX CPUs bf16
    results measured 0.25 nats apart between 1 and 2 intra-op threads, and between batch compositions,
    before every call got a fixed shape and one thread."""
    def score(texts, threads):
        scorer = ReferenceScorer(ScoringConfig(max_length=64, min_context=16, dtype=dtype, threads=threads))
        return scorer.score_texts(texts, with_hidden=True)

    reference = score(SPLIT_TEXTS, 1)
    runs = {"2 threads": score(SPLIT_TEXTS, 2), "3 threads": score(SPLIT_TEXTS, 3)}
    for workers in (2, 3):
        merged: list = [None] * len(SPLIT_TEXTS)
        for w in range(workers):
            share = list(range(w, len(SPLIT_TEXTS), workers))
            for i, scores in zip(share, score([SPLIT_TEXTS[i] for i in share], 2 if w == 0 else 1), strict=True):
                merged[i] = scores
        runs[f"{workers} workers"] = merged
    for name, scored in runs.items():
        for a, b in zip(reference, scored, strict=True):
            assert np.array_equal(a.nll, b.nll), name
            assert np.array_equal(a.hidden, b.hidden), name
            assert (a.char_start == b.char_start).all() and (a.char_end == b.char_end).all()


def test_call_plan_covers_every_chunk_once_in_calls_of_fixed_shape():
    """Each chunk in exactly one call; a call holds chunks of one width bucket only, at most ``rows`` of
    them, so its shape (width bucket x rows) depends on nothing but its own chunks' lengths."""
    import random

    from curation.score.scorer import CallPlan, call_plan_for

    assert call_plan_for("cpu", 1024) == CallPlan(1, 1)
    assert call_plan_for("cuda", 8192, 512) == CallPlan(64, 16)
    rng = random.Random(3)
    for plan in (CallPlan(1, 1), CallPlan(64, 4), CallPlan(16, 3)):
        lengths = [rng.randint(3, 510) for _ in range(64)]
        chunks = [(d, 0, 0, n) for d, n in enumerate(lengths)]
        calls = plan.calls(chunks, 2)
        assert sorted(c for call in calls for c in call) == sorted(chunks)
        for call in calls:
            assert 1 <= len(call) <= plan.rows
            assert len({plan.width(2 + c[3]) for c in call}) == 1
            seqs = [[0] * (2 + c[3]) for c in call]
            assert plan.shape(seqs) == (plan.width(2 + call[0][3]), plan.rows)
    assert CallPlan(1, 1).calls([], 2) == []


def test_bench_flop_count_is_linear_weights_plus_attention_at_each_context(scorer):
    """The benchmark's FLOPs per token (its fraction of the matmul peak rests on them), from the model."""
    from benchmarks.scoring import ModelFlops

    cfg = scorer._model.config
    d, kv = cfg.hidden_size, cfg.num_key_value_heads * cfg.head_dim
    per_layer = 2 * d * d + 2 * d * kv + 3 * d * cfg.intermediate_size  # q, o; k, v; gate, up, down
    flops = ModelFlops(scorer._model)
    assert flops.linear_params == cfg.num_hidden_layers * per_layer + cfg.vocab_size * d  # + the output layer
    assert flops.attention_per_key == 4 * cfg.num_hidden_layers * cfg.num_attention_heads * cfg.head_dim
    assert 0.26e9 < flops.of_keys(128) < 0.29e9  # SmolLM2-135M: ~0.27 GFLOP per token
    assert flops.of_rows(4) == flops.of_keys(1) + flops.of_keys(2) + flops.of_keys(3)
    # a chunk fed from token 2 that scores tokens 5..6 after a 1-token prompt: keys 1 + (i - lo) each
    assert flops.of_plan([(2, 5, 7)], 1) == flops.of_keys(4) + flops.of_keys(5)
