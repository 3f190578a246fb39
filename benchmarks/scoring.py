"""Scoring benchmark: the pipeline against the bare model, in one run on the same token batches.

    python -m benchmarks.scoring [--docs 40] [--scale 10] [--scoring-only] [--scale-docs N] [--no-scale]

Prints a table, then one JSON line with scoring_ratio (pipeline / best bare model), best_bare_tokens_per_s,
bare_tokens_per_s, pipeline_tokens_per_s, peak_matmul_gflops, scoring_fraction_of_peak, tagger_overhead,
docs_per_s, presidio_docs_per_s, rss_ratio_10x, rerun_model_calls, rerun_time_ratio, model_load_s; the
generated corpus's keys (benchmarks.scale: e2e_docs_per_s, presidio_docs_per_s_same_corpus, e2e_vs_presidio_ratio,
e2e_steps, ...), the GPU's (benchmarks.gpu, where CUDA is) and the dev-half quality guard (benchmarks.quality,
with BENCH_QUALITY_WAREHOUSE).
The best bare model is searched on this host (dtype, threads, batch shape), never assumed; the matmul
peak is measured in the same run; FLOPs per token are counted as in ModelFlops.
Each end-to-end measurement runs in a fresh subprocess so peak RSS is its own. The re-run is a plain
`curation run` (which finds the batch up to date and launches nothing); the forced re-run (`--force`)
goes through every Dagster step again, each finding its inputs unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.flops import ModelFlops  # noqa: E402  (re-exported: counted here and in benchmarks.gpu)

MATMUL_N = 2048


def matmul_seconds(dtype: str, threads: int, n: int = MATMUL_N, reps: int = 3) -> float:
    """Seconds of one n x n x n matmul (2 n^3 FLOPs), best of ``reps`` after a warm-up."""
    import torch

    a, b = torch.randn(n, n, dtype=getattr(torch, dtype)), torch.randn(n, n, dtype=getattr(torch, dtype))
    torch.set_num_threads(threads)
    a @ b
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return best


def matmul_peak(thread_counts: list[int], n: int = MATMUL_N) -> dict[str, dict[int, float]]:
    """GFLOP/s of an n x n x n matmul per dtype and thread count: what this CPU's kernels deliver on a
    large, well-shaped product, right now (the scoring comparison re-measures it in every slice)."""
    return {
        dtype: {t: 2 * n**3 / matmul_seconds(dtype, t, n) / 1e9 for t in thread_counts}
        for dtype in ("bfloat16", "float32")
    }


def load_plain_model(folder: str, dtype: str):
    """The reference weights in plain transformers, nothing of the pipeline."""
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype)).eval()


def bare_rows(stream: list[int], bos: int, batch: int, width: int, n_tokens: int) -> list:
    """Forward batches of ``batch`` rows [bos] + width-1 consecutive tokens of the (cycled) stream, enough
    to score at least ``n_tokens`` tokens: no padding, every position scored, one shape throughout."""
    import torch

    per_batch = batch * (width - 1)
    needed = max(1, -(-n_tokens // per_batch))
    cycled = (stream * (1 + needed * per_batch // max(1, len(stream))))[: needed * per_batch]
    out = []
    for k in range(needed):
        body = torch.tensor(cycled[k * per_batch : (k + 1) * per_batch]).view(batch, width - 1)
        out.append(torch.cat([torch.full((batch, 1), bos), body], dim=1))
    return out


def run_bare(model, rows: list, threads: int, logits_chunk: int) -> float:
    """Plain forward + the same chunked loss over ``rows``; seconds."""
    import torch

    from curation.score.scorer import chunked_nll

    torch.set_num_threads(threads)
    with torch.inference_mode():
        t0 = time.perf_counter()
        for x in rows:
            hidden = model.model(input_ids=x).last_hidden_state[:, :-1]
            chunked_nll(hidden.reshape(-1, hidden.shape[-1]), model.lm_head.weight, x[:, 1:].reshape(-1), logits_chunk)
        return time.perf_counter() - t0


BARE_SHAPES = [(1, 512), (2, 512), (2, 256), (4, 256), (4, 128), (8, 128)]  # (rows, width)


def search_bare(models: dict, stream: list[int], bos: int, thread_counts: list[int], logits_chunk: int) -> list[dict]:
    """The bare model's best configuration: dtype x threads at 1 x 512 first, then every shape of
    BARE_SHAPES at the winner (a full grid would take minutes here). Each point: one warm-up batch of
    its shape, then ~1,000 scored tokens timed."""
    points = []

    def measure(dtype: str, threads: int, batch: int, width: int) -> dict:
        run_bare(models[dtype], bare_rows(stream, bos, batch, width, 1), threads, logits_chunk)  # warm-up
        rows = bare_rows(stream, bos, batch, width, 1000)
        seconds = run_bare(models[dtype], rows, threads, logits_chunk)
        point = {"dtype": dtype, "threads": threads, "batch": batch, "width": width}
        point["tokens_per_s"] = len(rows) * batch * (width - 1) / seconds
        points.append(point)
        return point

    first = [measure(d, t, 1, 512) for d in models for t in thread_counts]
    winner = max(first, key=lambda p: p["tokens_per_s"])
    for batch, width in BARE_SHAPES[1:]:
        measure(winner["dtype"], winner["threads"], batch, width)
    return points


def bare_vs_pipeline(texts: list[str], rounds: int = 3, group_size: int = 0) -> dict:
    """The pipeline's scoring pass against the bare model at its best, in one run on the same texts.

    (a) best bare: plain transformers forward + the same chunked loss at the dtype, thread count and
        batch shape (rows x width) that measured fastest here, on the texts' own tokens: the two fastest
        points of the search are timed in the slices below and the faster there is the anchor;
    (b) bare on the pipeline's batches: the same plain forward on the pipeline's padded, length-sorted
        chunks (one call each, at the best bare thread count, in sequence), scoring the same positions;
    (c) the pipeline: text to token scores stored in DuckDB (tokenization, chunk plan, calls side by side,
        DuckDB write).

    The CPU here is shared and its speed drifts by 10-40% over tens of seconds, so all are timed in
    alternating slices, per group of `group_size` texts (default: as many as the pipeline scores per call,
    SCORE_BATCH_DOCS, so its length-sorted batches pad as much as in a run), the order rotating every
    slice; sums over all slices give the throughputs and their ratios. FLOP/s follow ModelFlops."""
    import torch

    from curation.core.warehouse import Warehouse, token_scores_frame
    from curation.score.scorer import (
        ReferenceScorer,
        ScoringConfig,
        available_cores,
        chunked_nll,
        cpu_has_native_bf16,
        plan_chunks,
    )

    started = time.perf_counter()
    # the CPU section stays on the CPU on a GPU machine too (its anchor is the CPU's bare model and peak);
    # the GPU has its own section (benchmarks/gpu.py)
    ReferenceScorer(ScoringConfig(device="cpu")).load()  # first use: imports torch/transformers, converts GGUF
    first_load_s = time.perf_counter() - started
    scorer = ReferenceScorer(ScoringConfig(device="cpu"))
    scorer.load()  # after first use: cached safetensors weights only
    load_s = scorer.stats.load_seconds
    cfg, prefix = scorer.config, scorer._prefix_ids()
    pipeline_dtype = scorer.description["dtype"]
    cores = available_cores()
    thread_counts = sorted({cores, 1}, reverse=True)

    peak = matmul_peak(thread_counts)
    models = {dtype: load_plain_model(scorer._resolve(), dtype) for dtype in ("bfloat16", "float32")}
    flops = ModelFlops(models["float32"])
    bos = prefix[0]
    stream = [t for text in texts for t in [bos, *scorer.tokenize(text)[0]]]
    search = search_bare(models, stream, bos, thread_counts, cfg.logits_chunk)
    # the two fastest points go on to the timed slices (one short look each is noisy here); the faster there wins
    candidates = sorted(search, key=lambda p: p["tokens_per_s"], reverse=True)[:2]
    bare_threads = candidates[0]["threads"]

    def plan(group: list[str]) -> tuple[list[tuple], float]:
        """The pipeline's batches for these texts, as tensors, with the positions it scores; and the FLOPs
        of its scored tokens."""
        ids = [scorer.tokenize(t)[0] for t in group]
        per_doc = [plan_chunks(len(x), cfg.max_length - len(prefix), cfg.min_context) for x in ids]
        chunks = [(d, lo, first, hi) for d, doc in enumerate(per_doc) for lo, first, hi in doc]
        out = []
        for batch in scorer.call_plan.calls(chunks, len(prefix)):
            seqs = [prefix + ids[d][lo:hi] for d, lo, _, hi in batch]
            tensor = torch.zeros((len(seqs), max(map(len, seqs))), dtype=torch.long)
            mask = torch.zeros_like(tensor)
            rows, cols = [], []
            for b, (seq, (_, lo, first, _)) in enumerate(zip(seqs, batch, strict=True)):
                tensor[b, : len(seq)] = torch.tensor(seq)
                mask[b, : len(seq)] = 1
                rows += [b] * (len(seq) - (len(prefix) + first - lo))
                cols += list(range(len(prefix) + first - lo - 1, len(seq) - 1))
            rows_t, cols_t = torch.tensor(rows), torch.tensor(cols)
            out.append((tensor, mask, rows_t, cols_t, tensor[rows_t, cols_t + 1]))
            padding[0] += tensor.numel() - int(mask.sum())
            padding[1] += tensor.numel()
        return out, sum(flops.of_plan(doc, len(prefix)) for doc in per_doc)

    def bare_on_plan(batches: list[tuple]) -> float:
        torch.set_num_threads(bare_threads)
        model = models[pipeline_dtype]
        with torch.inference_mode():
            t0 = time.perf_counter()
            for tensor, mask, rows_t, cols_t, targets in batches:
                hidden = model.model(input_ids=tensor, attention_mask=mask).last_hidden_state
                chunked_nll(hidden[rows_t, cols_t], model.lm_head.weight, targets, cfg.logits_chunk)
            return time.perf_counter() - t0

    write_s = [0.0]

    def pipeline(warehouse: Warehouse, group: list[str], tag: str) -> float:
        t0 = time.perf_counter()
        shas = [f"{tag}{i:08x}".rjust(64, "0") for i in range(len(group))]
        scored = scorer.score_texts(group)
        t1 = time.perf_counter()
        warehouse.append("token_scores", token_scores_frame(scorer.model_key, shas, scored))
        write_s[0] += time.perf_counter() - t1
        return time.perf_counter() - t0

    from curation.score.pending import SCORE_BATCH_DOCS

    group_size = group_size or min(len(texts), SCORE_BATCH_DOCS)
    groups = [texts[i : i + group_size] for i in range(0, len(texts), group_size)]
    padding = [0, 0]  # padded positions, all positions of the pipeline's batches
    planned = [plan(g) for g in groups]
    t0 = time.perf_counter()
    for text in texts:
        scorer.tokenize(text)
    tokenize_s = time.perf_counter() - t0
    n_tokens = sum(len(b[2]) for batches, _ in planned for b in batches)
    pipeline_flops = sum(f for _, f in planned)
    for c in candidates:  # per group, about as many scored tokens as the pipeline's
        c["rows"] = [bare_rows(stream, bos, c["batch"], c["width"], sum(len(b[2]) for b in bs)) for bs, _ in planned]
        c["tokens"] = sum(len(rows) * c["batch"] * (c["width"] - 1) for rows in c["rows"])
        c["flops"] = sum(len(rows) * c["batch"] * flops.of_rows(c["width"]) for rows in c["rows"])

    per_round = []
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = Warehouse(Path(tmp) / "w.duckdb")
        for round_no in range(-1, rounds):  # round -1 warms up (kernel choices per shape, DuckDB schema)
            write_s[0] = 0.0
            times = {"plan": 0.0, "pipe": 0.0, **{f"peak{t}": 0.0 for t in thread_counts}}
            for g, (group, (batches, _)) in enumerate(zip(groups, planned, strict=True)):
                steps = {
                    f"bare{k}": lambda c=c, g=g: run_bare(
                        models[c["dtype"]], c["rows"][g], c["threads"], cfg.logits_chunk
                    )
                    for k, c in enumerate(candidates)
                }
                steps["plan"] = lambda batches=batches: bare_on_plan(batches)
                steps["pipe"] = lambda group=group, tag=f"{round_no + 1:04x}{g:04x}": pipeline(warehouse, group, tag)
                order = list(steps)
                shift = (round_no + 1 + g) % len(order)
                for name in order[shift:] + order[:shift]:
                    times[name] = times.get(name, 0.0) + steps[name]()
                for t in thread_counts:  # the peak in the same slices, as loaded as the runs it anchors
                    times[f"peak{t}"] += matmul_seconds(pipeline_dtype, t)
            if round_no >= 0:
                per_round.append({**times, "write": write_s[0]})
    total = {k: sum(r[k] for r in per_round) for k in per_round[0]}
    # the matmul peak over the slices: FLOPs of one matmul per slice over their summed seconds
    slices = rounds * len(groups)
    in_run_peak = {t: slices * 2 * MATMUL_N**3 / total[f"peak{t}"] / 1e9 for t in thread_counts}
    for k, c in enumerate(candidates):
        c["run_tokens_per_s"] = c["tokens"] * rounds / total[f"bare{k}"]
    k_best = max(range(len(candidates)), key=lambda k: candidates[k]["run_tokens_per_s"])
    best = candidates[k_best]
    best_tokens, best_flops, best_key = best["tokens"], best["flops"], f"bare{k_best}"
    pipe_tps = n_tokens * rounds / total["pipe"]
    best_tps = best["run_tokens_per_s"]
    pipe_gflops = pipeline_flops * rounds / total["pipe"] / 1e9
    best_gflops = best_flops * rounds / total[best_key] / 1e9
    pipeline_peak = max(in_run_peak.values())
    # the best bare model's dtype has its in-run peak when it is the pipeline's; else the one measured first
    best_peak = pipeline_peak if best["dtype"] == pipeline_dtype else max(peak[best["dtype"]].values())
    ratio = pipe_tps / best_tps
    why = ""
    if ratio > 1:
        why = (
            f"pipeline > best bare: it does less work per token ({pipeline_flops / n_tokens / 1e9:.3f} vs "
            f"{best_flops / best_tokens / 1e9:.3f} GFLOP: shorter contexts) or the load moved between slices"
        )
    native = cpu_has_native_bf16()
    measured_bf16_wins = max(peak["bfloat16"].values()) > max(peak["float32"].values())
    return {
        "tokens": n_tokens,
        "best_bare_tokens_per_s": best_tps,
        "bare_tokens_per_s": n_tokens * rounds / total["plan"],
        "pipeline_tokens_per_s": pipe_tps,
        "scoring_ratio": ratio,
        "scoring_ratio_rounds": [round(n_tokens * r[best_key] / (best_tokens * r["pipe"]), 3) for r in per_round],
        "scoring_ratio_why": why,
        # pipeline FLOP/s over best-bare FLOP/s: the ratio with the work per token taken into account
        "scoring_flops_ratio": pipe_gflops / best_gflops,
        "peak_matmul_gflops": pipeline_peak,
        "peak_matmul_gflops_in_run_by_threads": {str(t): round(v, 1) for t, v in in_run_peak.items()},
        "peak_matmul_gflops_by_dtype_threads": {
            d: {str(t): round(v, 1) for t, v in by.items()} for d, by in peak.items()
        },
        "scoring_gflops": pipe_gflops,
        "scoring_fraction_of_peak": pipe_gflops / pipeline_peak,
        "best_bare_gflops": best_gflops,
        "best_bare_fraction_of_peak": best_gflops / best_peak,
        "best_bare_config": f"{best['dtype']} threads={best['threads']} {best['batch']}x{best['width']}",
        "bare_in_run": [
            f"{c['dtype']} t{c['threads']} {c['batch']}x{c['width']}: {c['run_tokens_per_s']:.0f}" for c in candidates
        ],
        "bare_search": [
            f"{p['dtype']} t{p['threads']} {p['batch']}x{p['width']}: {p['tokens_per_s']:.0f}" for p in search
        ],
        "pipeline_gflop_per_token": pipeline_flops / n_tokens / 1e9,
        "pipeline_write_share": total["write"] / total["pipe"],
        "pipeline_tokenize_share": tokenize_s * rounds / total["pipe"],
        "pipeline_padding_share": padding[0] / max(1, padding[1]),
        # model calls side by side, one intra-op thread each (scores do not depend on it)
        "pipeline_concurrent_calls": scorer.concurrent_calls,
        "pipeline_call_plan": scorer.call_plan.key,
        # bf16 is chosen from CPU flags; the matmul measurement says whether that holds on this host
        "bf16_native_flag": native,
        "bf16_measured_faster": measured_bf16_wins,
        "device": scorer.description["device"],
        "dtype": pipeline_dtype,
        "model_load_s": load_s,
        "first_load_s": first_load_s,
    }


def child_run(corpus: Path, out: Path, config: Path, force: bool) -> None:
    """One `curation run` in this process; prints wall time, model calls and peak RSS as JSON."""
    import contextlib
    import io

    from curation.cli import cmd_run
    from curation.score.scorer import PROCESS_STATS

    args = argparse.Namespace(
        input=str(corpus), out=str(out), config=str(config), batch_id="bench", log_level="ERROR", force=force
    )
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = cmd_run(args)
    elapsed = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    launched = "up to date:" not in printed.getvalue()
    print(
        json.dumps(
            {
                "exit": code,
                "seconds": elapsed,
                "model_calls": PROCESS_STATS.model_calls,
                "peak_rss_mb": rss_mb,
                "dagster_run": launched,
            }
        )
    )


def run_child(corpus: Path, out: Path, config: Path, force: bool = False) -> dict:
    """`curation run` in a fresh process, against a persistent Dagster instance of its own (as a user's
    `make run` is, but kept out of the user's DAGSTER_HOME)."""
    home = out.parent / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.scoring", "--child", str(corpus), str(out), str(config)]
        + (["--force"] if force else []),
        cwd=ROOT,
        env={**os.environ, "DAGSTER_HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise RuntimeError(f"benchmark child failed: {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


SCORING_KEYS_ROUNDED = 3


def scoring_section(texts: list[str], rounds: int) -> dict:
    """The scoring pass against the best bare model and the matmul peak, plus the tagger's overhead."""
    scoring = bare_vs_pipeline(texts, rounds)
    from benchmarks.tagger import tagger_overhead

    tagger = tagger_overhead(texts, rounds)
    r = SCORING_KEYS_ROUNDED
    return {
        # pipeline tokens/s over the best bare model's (its own best dtype, threads and batch shape)
        "scoring_ratio": round(scoring["scoring_ratio"], r),
        "scoring_ratio_rounds": scoring["scoring_ratio_rounds"],
        **({"scoring_ratio_why": scoring["scoring_ratio_why"]} if scoring["scoring_ratio_why"] else {}),
        "scoring_flops_ratio": round(scoring["scoring_flops_ratio"], r),
        # hidden states + cache write + the tagger head, relative to the scoring pass alone (<= 0.05 wanted)
        "tagger_overhead": tagger["tagger_overhead"],
        "best_bare_tokens_per_s": round(scoring["best_bare_tokens_per_s"], 1),
        "best_bare_config": scoring["best_bare_config"],
        # the plain model on the pipeline's own padded batches (what the batch plan costs)
        "bare_tokens_per_s": round(scoring["bare_tokens_per_s"], 1),
        "pipeline_tokens_per_s": round(scoring["pipeline_tokens_per_s"], 1),
        "peak_matmul_gflops": round(scoring["peak_matmul_gflops"], 1),
        # the pipeline dtype's peak re-measured in every timed slice, per thread count (peak_matmul_gflops: max)
        "peak_matmul_gflops_in_run_by_threads": scoring["peak_matmul_gflops_in_run_by_threads"],
        # both dtypes, measured once before the search (which dtype the host runs best)
        "peak_matmul_gflops_by_dtype_threads": scoring["peak_matmul_gflops_by_dtype_threads"],
        "scoring_gflops": round(scoring["scoring_gflops"], 1),
        "scoring_fraction_of_peak": round(scoring["scoring_fraction_of_peak"], r),
        "best_bare_gflops": round(scoring["best_bare_gflops"], 1),
        "best_bare_fraction_of_peak": round(scoring["best_bare_fraction_of_peak"], r),
        "pipeline_gflop_per_token": round(scoring["pipeline_gflop_per_token"], 4),
        "pipeline_write_share": round(scoring["pipeline_write_share"], 4),
        "pipeline_tokenize_share": round(scoring["pipeline_tokenize_share"], 4),
        "pipeline_padding_share": round(scoring["pipeline_padding_share"], 4),
        "pipeline_concurrent_calls": scoring["pipeline_concurrent_calls"],
        "pipeline_call_plan": scoring["pipeline_call_plan"],
        # one short look per point, then the two fastest timed in the same slices as the pipeline
        "bare_search": scoring["bare_search"],
        "bare_in_run": scoring["bare_in_run"],
        "bf16_native_flag": scoring["bf16_native_flag"],
        "bf16_measured_faster": scoring["bf16_measured_faster"],
        "model_load_s": round(scoring["model_load_s"], 3),
        "first_load_in_process_s": round(scoring["first_load_s"], 3),
        "tokens": scoring["tokens"],
        "device": scoring["device"],
        "dtype": scoring["dtype"],
    }


def end_to_end_section(args: argparse.Namespace, tmp_path: Path, small: Path, small_bytes: int) -> dict:
    """`curation run` end to end in fresh processes: first run, re-runs, 10x corpus; Presidio alone."""
    from benchmarks.corpus import make_corpus

    texts = [json.loads(x)["text"] for x in small.read_text().splitlines()]
    large = tmp_path / "large.jsonl"
    make_corpus(large, args.docs * args.scale)
    validation = tmp_path / "validation.jsonl"
    lines = (ROOT / "curation/data/validation.jsonl").read_text().splitlines()[: args.validation]
    validation.write_text("\n".join(lines) + "\n")
    config = tmp_path / "bench.yaml"
    # A 24-document batch cannot prove a 5% residual budget (0 findings in 24 -> 95% upper bound 0.117),
    # so the benchmark's budget lets the run reach the release: the timing covers every stage.
    config.write_text(
        f"validation: {validation}\ncalibration:\n  min_kind_docs: 10\ngates:\n  residual_budget: 0.2\n"
        "tagger:\n  public_sets: false\n"  # the tagger trains on the benchmark's validation records only
    )
    from benchmarks.presidio_baseline import presidio_alone

    presidio_dps = presidio_alone(texts)
    first = run_child(small, tmp_path / "run1", config)
    rerun = run_child(small, tmp_path / "run1", config)
    forced = run_child(small, tmp_path / "run1", config, force=True)
    big = run_child(large, tmp_path / "run10", config)
    big_rerun = run_child(large, tmp_path / "run10", config)
    return {
        "docs_per_s": round(args.docs / first["seconds"], 3),
        "mb_per_s": round(small_bytes / 1e6 / first["seconds"], 4),
        "presidio_docs_per_s": round(presidio_dps, 2),
        "peak_rss_mb_1x": round(first["peak_rss_mb"], 1),
        "peak_rss_mb_10x": round(big["peak_rss_mb"], 1),
        "rss_ratio_10x": round(big["peak_rss_mb"] / first["peak_rss_mb"], 3),
        "rerun_model_calls": rerun["model_calls"],
        "rerun_time_ratio": round(rerun["seconds"] / first["seconds"], 3),
        "rerun_seconds": round(rerun["seconds"], 2),
        "rerun_launched_dagster_run": rerun["dagster_run"],
        # `--force`: the whole Dagster run again, every step finding its inputs unchanged
        "forced_rerun_model_calls": forced["model_calls"],
        "forced_rerun_time_ratio": round(forced["seconds"] / first["seconds"], 3),
        "forced_rerun_seconds": round(forced["seconds"], 1),
        "first_run_seconds": round(first["seconds"], 1),
        # the re-run cost is a fixed orchestration floor, so its share shrinks with the corpus
        "rerun_time_ratio_10x": round(big_rerun["seconds"] / big["seconds"], 3),
        "rerun_model_calls_10x": big_rerun["model_calls"],
        "first_run_exit": first["exit"],
    }


def main() -> None:
    from benchmarks.corpus import make_corpus
    from benchmarks.report import report

    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=24, help="documents in the 1x corpus")
    parser.add_argument("--scale", type=int, default=10, help="size of the large corpus relative to 1x")
    parser.add_argument("--validation", type=int, default=60, help="labeled validation records per run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating bare/pipeline scoring rounds")
    parser.add_argument("--scoring-only", action="store_true", help="only the scoring pass vs bare model and peak")
    parser.add_argument(
        "--scale-docs", type=int, default=None, help="generated corpus for workers / end-to-end (benchmarks.scale)"
    )
    parser.add_argument("--no-scale", action="store_true", help="skip the generated-corpus section")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_run(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]), args.force)
        return
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        small = tmp_path / "small.jsonl"
        small_bytes = make_corpus(small, args.docs)
        texts = [json.loads(x)["text"] for x in small.read_text().splitlines()]
        result.update(scoring_section(texts, args.rounds))
        from benchmarks.gpu import gpu_section

        result.update(gpu_section(texts, args.rounds))  # one "gpu" key saying why where there is no CUDA
        if not args.scoring_only:
            result.update(end_to_end_section(args, tmp_path, small, small_bytes))
    if not (args.scoring_only or args.no_scale):
        # workers 2 vs 1, identity, end to end vs scoring on the generated mixed corpus (benchmarks/scale.py);
        # a key both sections report keeps this module's meaning, the generated corpus's gets "scale_"
        from benchmarks.scale import DEFAULT_DOCS, measure

        for key, value in measure(args.scale_docs or DEFAULT_DOCS).items():
            result[key if key not in result else f"scale_{key}"] = value
    quality = os.environ.get("BENCH_QUALITY_WAREHOUSE", "")
    if quality and not args.scoring_only:
        from benchmarks.quality import quality_guard

        result.update(quality_guard(Path(quality).resolve(), ROOT.parent / "shared" / "data"))
    else:
        result["dev_half_quality"] = "not run: set BENCH_QUALITY_WAREHOUSE (a warm `curation eval` cache; cold ~1 h)"
    result.update({"docs_1x": args.docs, "scale": args.scale})
    report(result)


if __name__ == "__main__":
    main()
