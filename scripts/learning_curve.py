"""The labeling loop, measured: held-out F1 and FPR against how many labeled documents a user adds.

    .venv/bin/python scripts/learning_curve.py --out .devcache/curve [--warehouse .devcache/eval.duckdb]
        [--data ../shared/data] [--sets presidio_synth,tab_echr_dev,creddata_dev] [--counts 10,20,40]
        [--seeds 0,1,2] [--retrain [--augment N] [--self-train N]]

For each development set it takes the seeded halves (scripts/dev_halves.py): the *pool* half plays a
corpus nobody labeled, the *test* half stays held out. Every point runs the commands a user runs:

- 0 labels: ``curation eval TEST`` calibrated on the bundled validation set (what a new domain gets);
- k labels, ``uncertainty``: ``curation label export POOL --n max(counts)`` (the picks come in priority
  order, round-robin over strata, so the first k are what ``--n k`` picks), the first k tasks annotated
  with the pool's gold spans as a Label Studio export, ``curation label import``, then
  ``curation eval TEST --calibrate-on DOMAIN=LABELED``;
- k labels, ``random``: the same with ``--strategy random --seed S --n k`` for each seed;
- all labels: ``curation eval TEST --calibrate-on DOMAIN=POOL``.

The tagger always trains on the bundled public sets as well (a user's default), and those were drawn from
the pool half of presidio_synth and tab_echr_dev: on those two sets the curve measures what labels add to
calibration and to a tagger that has seen the domain; creddata_dev (code) has no bundled training data, so
its curve is the cold start. ``--retrain`` trains the tagger on each point's labels as well (no
``--train-on``): what a domain in a language the bundled sets lack needs (meddocan_es_dev, Spanish).
Writes OUT/curve.json, OUT/curve.md (the table) and OUT/curve.png.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DOMAINS = {
    "presidio_synth": "synthetic_pii",
    "tab_echr_dev": "court",
    "creddata_dev": "code",
    "meddocan_es_dev": "clinical_es",
    "social_dev": "social",  # a simulated user's new domain: no bundled training data of its kind
}
AUGMENT = 0  # --augment: mention-swap variants per labeled text when the tagger retrains on a point's labels
SELF_TRAIN = 0  # --self-train N: with --retrain, the tagger self-trains on N texts of the pool half too
ROOT = Path(__file__).resolve().parents[1]
CURATION = str(ROOT / ".venv" / "bin" / "curation")
BUNDLED_VALIDATION = ROOT / "curation" / "data" / "validation.jsonl"  # what `curation eval` calibrates on by default


def run(args: list[str], log: Path) -> None:
    """One CLI call; its output goes to ``log``, a failure stops the measurement with the log's tail."""
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.call(args, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    if code:
        tail = "\n".join(log.read_text(encoding="utf-8").splitlines()[-15:])
        sys.exit(f"{' '.join(args)} failed ({code}); {log}:\n{tail}")
    print(f"  {time.perf_counter() - started:6.1f}s {' '.join(Path(a).name if '/' in a else a for a in args[1:4])}")


def annotate(tasks_path: Path, pool: dict[str, dict], k: int, export_path: Path) -> None:
    """The first ``k`` tasks with the pool's gold spans as their annotation: a Label Studio JSON export, as
    an annotator who corrects every prediction to the truth would leave it."""
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))[:k]
    for i, task in enumerate(tasks):
        record = pool[task["data"]["doc_id"]]
        text = record["text"]
        result = [
            {
                "from_name": "label",
                "to_name": "text",
                "type": "labels",
                "value": {
                    "start": s["start"],
                    "end": s["end"],
                    "text": text[s["start"] : s["end"]],
                    "labels": [s["label"]],
                },
            }
            for s in record["spans"]
        ]
        task["id"] = i + 1
        task["annotations"] = [{"id": i + 1, "was_cancelled": False, "result": result}]
    export_path.write_text(json.dumps(tasks), encoding="utf-8")


def summary(metrics_path: Path) -> dict:
    s = json.loads(metrics_path.read_text(encoding="utf-8"))["summary"]
    return {
        "f1": s["f1"],
        "precision": s["precision"],
        "recall": s.get("tpr", s.get("recall")),
        "fpr": s["fpr"],
        "combination": s.get("detector_combination") or "",
        "policy": s.get("policy"),
    }


def evaluate(
    test: Path, calibrate_on: str | None, out: Path, warehouse: str, retrain: bool = False, pool: Path | None = None
) -> dict:
    """``curation eval`` of the held-out half, files named ``out`` + suffix. The tagger stays the one a new
    domain starts with (trained on the bundled validation and public sets: ``--train-on``) unless
    ``retrain``, so a point measures what the labels add through calibration (threshold, combination,
    policy), in seconds, not a tagger retrained for each count (~15 min of training on 2 cores)."""
    named = {kind: out.with_name(f"{out.name}.{kind}") for kind in ("pred.jsonl", "metrics.json", "eval.log")}
    args = [CURATION, "eval", str(test), "--predictions", str(named["pred.jsonl"])]
    args += ["--metrics", str(named["metrics.json"]), "--warehouse", warehouse]
    if calibrate_on:
        args += ["--calibrate-on", calibrate_on]
        if not retrain:
            args += ["--train-on", f"support={BUNDLED_VALIDATION}"]
        else:
            if AUGMENT:
                args += ["--augment", str(AUGMENT)]
            if SELF_TRAIN and pool is not None:  # the unlabeled rest of the pool (labeled texts are left out)
                args += ["--self-train-on", f"{calibrate_on.split('=', 1)[0]}={pool}"]
                args += ["--self-train-texts", str(SELF_TRAIN)]
    run(args, named["eval.log"])
    return summary(named["metrics.json"])


def labeled_point(
    name: str,
    tasks: Path,
    pool: dict,
    k: int,
    work: Path,
    test: Path,
    warehouse: str,
    retrain: bool = False,
    pool_path: Path | None = None,
) -> dict:
    """Annotate the first k tasks, import them as a user would, evaluate calibrated on them."""
    domain = DOMAINS[name]
    export = work / f"{tasks.stem}.k{k}.export.json"
    labeled = work / f"{tasks.stem}.k{k}.labeled.jsonl"
    annotate(tasks, pool, k, export)
    run(
        [CURATION, "label", "import", str(export), "--out", str(labeled), "--domain", domain],
        export.with_suffix(".log"),
    )
    point = evaluate(test, f"{domain}={labeled}", work / f"{tasks.stem}.k{k}", warehouse, retrain, pool_path)
    point["labeled_docs"] = sum(1 for _ in labeled.open(encoding="utf-8"))
    return point


def curve_for(
    name: str,
    halves: Path,
    out: Path,
    counts: list[int],
    seeds: list[int],
    warehouse: str,
    retrained: Path | None,
    retrain: bool = False,
) -> list[dict]:
    domain = DOMAINS[name]
    pool_path, test = halves / f"{name}.cal.jsonl", halves / f"{name}.test.jsonl"
    pool = {r["id"]: r for r in map(json.loads, pool_path.open(encoding="utf-8"))}
    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    print(f"{name}: pool {len(pool)} records, domain {domain}")
    rows = [{"set": name, "strategy": "none", "count": 0, **evaluate(test, None, work / "k0", warehouse)}]
    tasks = work / "uncertainty.json"
    run(
        [
            CURATION,
            "label",
            "export",
            str(pool_path),
            "--n",
            str(max(counts)),
            "--out",
            str(tasks),
            "--warehouse",
            warehouse,
        ],
        tasks.with_suffix(".log"),
    )
    for k in counts:
        rows.append(
            {
                "set": name,
                "strategy": "uncertainty",
                "count": k,
                **labeled_point(name, tasks, pool, k, work, test, warehouse, retrain, pool_path),
            }
        )
    for seed in seeds:
        for k in counts:
            tasks = work / f"random-s{seed}-n{k}.json"
            run(
                [
                    CURATION,
                    "label",
                    "export",
                    str(pool_path),
                    "--n",
                    str(k),
                    "--out",
                    str(tasks),
                    "--strategy",
                    "random",
                    "--seed",
                    str(seed),
                    "--warehouse",
                    warehouse,
                ],
                tasks.with_suffix(".log"),
            )
            point = labeled_point(name, tasks, pool, k, work, test, warehouse, retrain, pool_path)
            rows.append({"set": name, "strategy": "random", "seed": seed, "count": k, **point})
    if not retrain:  # retrained, the all-labels point is scripts/dev_eval.sh's (below)
        rows.append(
            {
                "set": name,
                "strategy": "all",
                "count": len(pool),
                **evaluate(test, f"{domain}={pool_path}", work / "kall", warehouse),
            }
        )
    if retrained is not None and (retrained / f"{name}.metrics.json").exists():  # scripts/dev_eval.sh's result
        rows.append(
            {
                "set": name,
                "strategy": "all_retrained",
                "count": len(pool),
                **summary(retrained / f"{name}.metrics.json"),
            }
        )
    return rows


def _scores(r: dict) -> str:
    return f"{r['f1']:.3f} ({r['precision']:.3f} / {r['recall']:.3f}) | {r['fpr']:.4f}"


def table(rows: list[dict], counts: list[int]) -> str:
    """Markdown: per set and count, uncertainty's F1 (P / R) and FPR beside random's (mean, min-max over seeds)."""
    lines = [
        "| set | labeled docs | uncertainty F1 (P / R) | FPR | random F1 mean (min-max) | random FPR mean |",
        "|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [r for r in rows if r["set"] == name]
        for r in (r for r in mine if r["strategy"] == "none"):
            lines.append(f"| {name} | 0 (bundled calibration) | {_scores(r)} | | |")
        for k in counts:
            u = next(r for r in mine if r["strategy"] == "uncertainty" and r["count"] == k)
            rand = [r for r in mine if r["strategy"] == "random" and r["count"] == k]
            f1s = [r["f1"] for r in rand]
            random_cells = (
                f"{statistics.mean(f1s):.3f} ({min(f1s):.3f}-{max(f1s):.3f}) "
                f"| {statistics.mean(r['fpr'] for r in rand):.4f}"
                if rand
                else "|"
            )
            lines.append(f"| {name} | {k} ({u['labeled_docs']} imported) | {_scores(u)} | {random_cells} |")
        for r in (r for r in mine if r["strategy"] == "all"):
            lines.append(f"| {name} | all {r['count']} | {_scores(r)} | | |")
        for r in (r for r in mine if r["strategy"] == "all_retrained"):
            lines.append(f"| {name} | all {r['count']}, tagger retrained on them | {_scores(r)} | | |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], counts: list[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["set"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        mine = [r for r in rows if r["set"] == name]
        zero = next(r["f1"] for r in mine if r["strategy"] == "none")
        full = next((r for r in mine if r["strategy"] in ("all", "all_retrained")), None)  # --retrain: none
        xs = [0, *counts]
        unc = [
            zero,
            *(next(r["f1"] for r in mine if r["strategy"] == "uncertainty" and r["count"] == k) for k in counts),
        ]
        rand = [[r["f1"] for r in mine if r["strategy"] == "random" and r["count"] == k] for k in counts]
        ax.plot(xs, unc, "o-", label="uncertainty")
        if all(rand):
            ax.plot(xs, [zero, *(statistics.mean(f) for f in rand)], "s--", label="random (mean of seeds)")
            ax.fill_between(counts, [min(f) for f in rand], [max(f) for f in rand], alpha=0.2)
        if full is not None:
            ax.axhline(full["f1"], color="grey", lw=0.8, ls=":", label=f"all {full['count']} labeled")
        ax.set_title(name)
        ax.set_xlabel("labeled documents added")
        ax.set_ylabel("held-out F1")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".devcache/curve")
    parser.add_argument("--warehouse", default=".devcache/eval.duckdb")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--sets", default=",".join(DOMAINS))
    parser.add_argument("--counts", default="10,20,40")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument(
        "--retrain", action="store_true", help="train the tagger on each point's labels too (a new language)"
    )
    parser.add_argument(
        "--retrained",
        default=".devcache/all",
        help="scripts/dev_eval.sh's OUT_DIR: its all-labels points, tagger retrained",
    )
    parser.add_argument("--augment", type=int, default=0, help="with --retrain: curation eval --augment N")
    parser.add_argument(
        "--self-train",
        type=int,
        default=0,
        metavar="N",
        help="with --retrain: curation eval --self-train-on DOMAIN=POOL --self-train-texts N",
    )
    args = parser.parse_args()
    global AUGMENT, SELF_TRAIN
    AUGMENT, SELF_TRAIN = args.augment, args.self_train
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts = [int(c) for c in args.counts.split(",")]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    halves = out / "halves"
    run(
        [sys.executable, str(ROOT / "scripts" / "dev_halves.py"), "--data", args.data, "--out", str(halves)],
        out / "halves.log",
    )
    results = out / "curve.json"
    rows = json.loads(results.read_text()) if results.exists() else []
    for name in args.sets.split(","):
        if any(r["set"] == name for r in rows):
            print(f"{name}: already in {results}")
            continue
        rows += curve_for(name, halves, out, counts, seeds, args.warehouse, Path(args.retrained), args.retrain)
        results.write_text(json.dumps(rows, indent=1))  # a set at a time: an interrupted run keeps what it measured
    (out / "curve.md").write_text(table(rows, counts))
    plot(rows, counts, out / "curve.png")
    print(table(rows, counts))


if __name__ == "__main__":
    main()
