"""Cheaper arithmetic for the scoring pass (issue 35, item 2): int8 paths against the pipeline's dtype,
measured on this CPU in one run.

    python -m benchmarks.int8 [--docs 24] [--rounds 3]

Variants, every one as the pipeline calls the model (one chunk per call at its own width, one intra-op
thread; the output layer stays as the pipeline computes it, in `chunked_nll`):

- `base`: the pipeline's model at its dtype (bf16 where the CPU has native bf16, else fp32);
- `woq_int8`: weight-only int8 for every decoder Linear (per-output-channel scales, bf16 activations,
  `torch.ops.aten._weight_int8pack_mm`, the CPU kernel gpt-fast uses);
- `dynamic_int8`: PyTorch's dynamic quantization of every decoder Linear (int8 weights and activations,
  fp32 elsewhere; fbgemm / oneDNN kernels).

Prints tokens/s per variant (alternating slices, the order rotating), each over `base`, and how far its
NLLs and hidden states move from `base`'s on the same tokens (mean / max absolute difference; the tagger
and the calibration read those), and whether a variant repeats its own bits at 1 thread.
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _woq_linear(linear):
    """A Linear replaced by weight-only int8 (symmetric, per output channel) with bf16 activations."""
    import torch

    weight = linear.weight.detach().float()
    scales = weight.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    q = torch.round(weight / scales[:, None]).clamp(-128, 127).to(torch.int8)
    bias = linear.bias

    class WeightOnlyInt8(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("q", q)
            self.register_buffer("scales", scales.to(torch.bfloat16))

        def forward(self, x):
            shape = x.shape
            out = torch.ops.aten._weight_int8pack_mm(x.reshape(-1, shape[-1]).to(torch.bfloat16), self.q, self.scales)
            out = out.reshape(*shape[:-1], -1)
            return out + bias if bias is not None else out

    return WeightOnlyInt8()


def _replace_decoder_linears(model, make) -> None:
    import torch

    for layer in model.model.layers:
        for name, child in list(layer.named_modules()):
            if isinstance(child, torch.nn.Linear):
                parent = layer.get_submodule(name.rsplit(".", 1)[0]) if "." in name else layer
                setattr(parent, name.rsplit(".", 1)[-1], make(child))


def variants(folder: str, base_dtype: str) -> dict:
    import copy

    import torch
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, base_dtype)).eval()
    out = {"base": base}
    woq = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
    _replace_decoder_linears(woq, _woq_linear)
    out["woq_int8"] = woq
    fp32 = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    dyn = copy.deepcopy(fp32)
    for layer in dyn.model.layers:
        torch.ao.quantization.quantize_dynamic(layer, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
    out["dynamic_int8"] = dyn
    return out


def score_chunks(model, chunks: list, logits_chunk: int) -> tuple[float, list, list]:
    """One call per chunk on one thread: seconds, NLLs and last hidden states per chunk."""
    import torch

    from curation.score.scorer import chunked_nll

    torch.set_num_threads(1)
    nlls, states = [], []
    with torch.inference_mode():
        t0 = time.perf_counter()
        for ids in chunks:
            x = torch.tensor([ids])
            hidden = model.model(input_ids=x).last_hidden_state[0, :-1]
            head = model.lm_head.weight
            nll = chunked_nll(hidden.to(head.dtype), head, x[0, 1:], logits_chunk)
            nlls.append(nll.float().numpy())
            states.append(hidden.float().numpy())
        return time.perf_counter() - t0, nlls, states


def measure(texts: list[str], rounds: int) -> dict:
    import numpy as np

    from curation.score.scorer import ReferenceScorer, ScoringConfig, plan_chunks

    scorer = ReferenceScorer(ScoringConfig(device="cpu"))
    scorer.load()
    cfg, prefix = scorer.config, scorer._prefix_ids()
    chunks = []
    for text in texts:
        ids = scorer.tokenize(text)[0]
        for lo, _, hi in plan_chunks(len(ids), cfg.max_length - len(prefix), cfg.min_context):
            chunks.append(prefix + ids[lo:hi])
    models = variants(scorer._resolve(), scorer.description["dtype"])
    for model in models.values():  # warm-up: kernel choices per width
        score_chunks(model, chunks[:2], cfg.logits_chunk)
    seconds = dict.fromkeys(models, 0.0)
    outputs = {}
    names = list(models)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            s, nll, states = score_chunks(models[name], chunks, cfg.logits_chunk)
            seconds[name] += s
            if name in outputs:
                same = all(np.array_equal(a, b) for a, b in zip(outputs[name][0], nll, strict=True))
                outputs[name] = (outputs[name][0], outputs[name][1], outputs[name][2] and same)
            else:
                outputs[name] = (nll, states, True)
    tokens = sum(len(c) - 1 for c in chunks) * rounds
    base_nll = np.concatenate(outputs["base"][0])
    base_states = np.concatenate(outputs["base"][1])
    result = {"int8_tokens": tokens // rounds, "int8_base_dtype": scorer.description["dtype"]}
    for name in names:
        nll, states = np.concatenate(outputs[name][0]), np.concatenate(outputs[name][1])
        result[f"int8_{name}_tokens_per_s"] = round(tokens / seconds[name], 1)
        result[f"int8_{name}_vs_base"] = round(seconds["base"] / seconds[name], 3)
        result[f"int8_{name}_repeats_its_bits"] = outputs[name][2]
        if name != "base":
            result[f"int8_{name}_nll_mean_abs_diff"] = round(float(np.abs(nll - base_nll).mean()), 4)
            result[f"int8_{name}_nll_max_abs_diff"] = round(float(np.abs(nll - base_nll).max()), 3)
            rel = np.linalg.norm(states - base_states, axis=1) / np.linalg.norm(base_states, axis=1)
            result[f"int8_{name}_hidden_rel_diff_mean"] = round(float(rel.mean()), 4)
    return result


def main() -> None:
    from benchmarks.corpus import make_corpus
    from benchmarks.report import report

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        make_corpus(corpus, args.docs)
        texts = [json.loads(x)["text"] for x in corpus.read_text().splitlines()]
    report(measure(texts, args.rounds))


if __name__ == "__main__":
    main()
