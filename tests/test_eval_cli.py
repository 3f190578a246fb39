"""`curation eval` is a contract other tools call: its arguments and its two output files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.cli import build_parser, main

DATA = Path(__file__).resolve().parent.parent / "curation" / "data"


def _subset(path: Path, out: Path, n: int, skip: int = 0) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines()[skip : skip + n]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_eval_arguments_parse_as_documented():
    args = build_parser().parse_args(
        ["eval", "g.jsonl", "--predictions", "p.jsonl", "--metrics", "m.json", "--calibrate-on", "v.jsonl",
         "--policy", "residual", "--prompt", "clean text:", "--contrast-prompt", "leaky text:"]
    )  # fmt: skip
    assert (args.gold, args.predictions, args.metrics, args.calibrate_on, args.policy) == (
        "g.jsonl", "p.jsonl", "m.json", ["v.jsonl"], "residual"
    )  # fmt: skip
    assert (args.prompt, args.contrast_prompt) == ("clean text:", "leaky text:")
    assert args.collateral_budget == 0.03
    budget = ["eval", "g.jsonl", "--predictions", "p", "--metrics", "m", "--collateral-budget", "0.01"]
    assert build_parser().parse_args(budget).collateral_budget == 0.01


def test_eval_rejects_a_budget_outside_zero_to_one(tmp_path, capsys):
    args = ["eval", "g.jsonl", "--predictions", "p", "--metrics", "m", "--collateral-budget", "1.5"]
    assert main(args) == 2
    assert "--collateral-budget" in capsys.readouterr().err

@pytest.mark.slow

def test_eval_writes_predictions_per_id_and_pooled_and_per_label_metrics(tmp_path):
    gold = _subset(DATA / "validation.jsonl", tmp_path / "gold.jsonl", 6)
    val = _subset(DATA / "validation.jsonl", tmp_path / "val.jsonl", 16, skip=100)
    pred, metrics = tmp_path / "pred.jsonl", tmp_path / "metrics.json"
    code = main(
        ["eval", str(gold), "--predictions", str(pred), "--metrics", str(metrics), "--calibrate-on", str(val),
         "--warehouse", str(tmp_path / "cache.duckdb"), "--no-public-sets"]
    )  # fmt: skip
    assert code == 0
    gold_ids = [json.loads(line)["id"] for line in gold.read_text().splitlines()]
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert [r["id"] for r in rows] == gold_ids
    for row in rows:
        for span in row["spans"]:
            assert {"start", "end", "label", "score", "source"} <= set(span) and span["start"] < span["end"]
    result = json.loads(metrics.read_text())
    summary = result["summary"]
    assert summary["records"] == 6 and summary["policy"] in ("detectors", "surprise", "union", "residual")
    assert summary["collateral_budget"] == 0.03
    assert 0.0 <= summary["f1"] <= 1.0 and 0.0 <= summary["fpr"] <= 1.0
    assert set(result["per_policy"]) == {"detectors", "surprise", "union", "residual"}
    for policy in result["per_policy"].values():
        assert {"precision", "tpr", "fpr", "f1"} <= set(policy["gold"]["metrics"])
    assert result["per_label"]["recall_by_gold_label"]
    # the tagger trained on the calibration set (out-of-fold spans there), and the per-signal ablation
    assert result["tagger"]["enabled"] and result["tagger"]["training_texts"] == 16
    assert {"rules", "tagger", "credsweeper", "surprise", "chosen"} <= set(result["ablation"])
    assert summary["domain"] == "val" and summary["detector_combination"]
    assert "mentions_fully_masked_by_label" in result["ablation"]["chosen"]

@pytest.mark.slow

def test_train_on_keeps_the_tagger_and_calibrates_on_new_labels_alone(tmp_path):
    """`--train-on`: the tagger trains on those sets only; the `--calibrate-on` set calibrates (its threshold
    chosen on the head's predictions for texts it never saw), and a second calibration set reuses the head."""
    gold = _subset(DATA / "validation.jsonl", tmp_path / "gold.jsonl", 6)
    train = _subset(DATA / "validation.jsonl", tmp_path / "train.jsonl", 16, skip=100)
    cache = str(tmp_path / "cache.duckdb")
    results = []
    for n, skip in ((6, 200), (8, 220)):
        val = _subset(DATA / "validation.jsonl", tmp_path / f"new{n}.jsonl", n, skip=skip)
        metrics = tmp_path / f"metrics{n}.json"
        code = main(
            ["eval", str(gold), "--predictions", str(tmp_path / "pred.jsonl"), "--metrics", str(metrics),
             "--calibrate-on", f"forum={val}", "--train-on", f"support={train}", "--warehouse", cache,
             "--no-public-sets"]
        )  # fmt: skip
        assert code == 0
        results.append(json.loads(metrics.read_text()))
    first, second = results
    assert first["tagger"]["training_texts"] == 16  # the training set alone, not the calibration set
    assert first["tagger"]["trained_on"] == [f"support={train}"]
    assert first["tagger"]["tagger_key"] == second["tagger"]["tagger_key"]  # new labels, the same head
    assert "forum" in first["tagger"]["thresholds"] and first["summary"]["domain"] == "forum"
    assert first["summary"]["records"] == 6 and first["summary"]["detector_combination"]


@pytest.mark.heavy  # 70 s on 2 cores: three heads trained twice
def test_self_training_reports_the_draw_the_pseudo_labels_and_the_judge(tmp_path):
    """`--self-train-on`: the pool's unlabeled texts (labeled ones left out) train the head through its
    confident tokens, and the out-of-fold F1 on the domain's labels decides whether that head is kept."""
    gold = _subset(DATA / "validation.jsonl", tmp_path / "gold.jsonl", 6)
    val = _subset(DATA / "validation.jsonl", tmp_path / "val.jsonl", 16, skip=100)
    pool = tmp_path / "pool.jsonl"  # unlabeled texts (one of them also labeled: not drawn)
    lines = val.read_text(encoding="utf-8").splitlines()[:1]
    lines += DATA.joinpath("validation.jsonl").read_text(encoding="utf-8").splitlines()[240:252]
    pool.write_text("\n".join(json.dumps({"id": f"u{i}", "text": json.loads(x)["text"]}) for i, x in enumerate(lines)))
    metrics = tmp_path / "metrics.json"
    args = ["eval", str(gold), "--predictions", str(tmp_path / "pred.jsonl"), "--metrics", str(metrics),
            "--calibrate-on", f"forum={val}", "--self-train-on", f"forum={pool}", "--self-train-texts", "10",
            "--warehouse", str(tmp_path / "cache.duckdb"), "--no-public-sets"]  # fmt: skip
    assert main(args) == 0
    report = json.loads(metrics.read_text())["tagger"]["self_training"]
    assert report["enabled"] and report["pool_texts"] == 13 and report["drawn_texts"] == 10
    assert report["judged_texts"] == 16 and 0 < report["pseudo_texts"] <= 10
    assert report["pseudo_tokens"] > 0 and isinstance(report["kept"], bool)
    assert report["kept"] == (report["out_of_fold_f1_self_trained"] >= report["out_of_fold_f1_plain"] + 0.002)
    train = _subset(DATA / "validation.jsonl", tmp_path / "train.jsonl", 8, skip=200)
    assert main([*args, "--train-on", f"support={train}"]) == 2  # judged out of fold: not with --train-on
