"""Measure detectors on labeled JSONL: untuned Presidio vs the tuned DetectorSuite (+ secret scanners).

Metrics are character level, so partial hits count partially and label names need not agree:
pooled precision/recall/F1 (a char is gold if inside any gold span, predicted if inside any
prediction), recall per gold label, precision per predicted label.

    python scripts/eval_detectors.py --out eval.json [--secrets curation/data/code_secrets.jsonl]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curation.core.spans import CREDENTIAL_LABELS, Span, merge
from curation.detect import DetectorConfig, DetectorSuite
from curation.detect.presidio import _resolve_spacy_package

# the shared dev data sits beside the repository (../shared/data), as in the development layout
DEFAULT_PII = Path(__file__).resolve().parents[2] / "shared" / "data" / "presidio_synth" / "labeled.jsonl"
DEFAULT_SECRETS = Path(__file__).resolve().parents[1] / "curation" / "data" / "code_secrets.jsonl"

Predictor = Callable[[list[str]], list[list[Span]]]


def load(path: Path, limit: int | None = None) -> list[dict]:
    records = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                records.append(json.loads(line))
            if limit and len(records) >= limit:
                break
    return records


def _chars(spans: Sequence[Span]) -> set[int]:
    return {i for s in merge(spans) for i in range(s.start, s.end)}


# Gold and predicted label names differ (gold GPE vs our LOCATION, gold ZIP_CODE inside our STREET_ADDRESS,
# ages as DATE_TIME; NRP is NRP on both sides): both map to one entity name for the label-strict table.
ENTITY_OF = {
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "ZIP_CODE": "STREET_ADDRESS",
    "DOMAIN_NAME": "URL",
    "AGE": "DATE_TIME",
}


def by_entity(records: list[dict], predictions: list[list[Span]]) -> dict[str, dict[str, float]]:
    """Label-strict char P/R/F1 per entity (labels mapped through :data:`ENTITY_OF`)."""
    hit_p: dict[str, int] = {}
    tot_p: dict[str, int] = {}
    hit_g: dict[str, int] = {}
    tot_g: dict[str, int] = {}
    for rec, preds in zip(records, predictions, strict=True):
        gold: dict[str, set[int]] = {}
        for sp in rec["spans"]:
            lab = ENTITY_OF.get(sp["label"], sp["label"])
            gold.setdefault(lab, set()).update(range(sp["start"], sp["end"]))
        pred: dict[str, set[int]] = {}
        for sp in preds:
            pred.setdefault(ENTITY_OF.get(sp.label, sp.label), set()).update(range(sp.start, sp.end))
        for lab, chars in gold.items():
            tot_g[lab] = tot_g.get(lab, 0) + len(chars)
            hit_g[lab] = hit_g.get(lab, 0) + len(chars & pred.get(lab, set()))
        for lab, chars in pred.items():
            tot_p[lab] = tot_p.get(lab, 0) + len(chars)
            hit_p[lab] = hit_p.get(lab, 0) + len(chars & gold.get(lab, set()))
    out = {}
    for lab in sorted(set(tot_g) | set(tot_p)):
        p = hit_p.get(lab, 0) / tot_p[lab] if tot_p.get(lab) else 0.0
        r = hit_g.get(lab, 0) / tot_g[lab] if tot_g.get(lab) else 0.0
        out[lab] = {
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "gold_chars": tot_g.get(lab, 0),
            "pred_chars": tot_p.get(lab, 0),
        }
    return out


def score(records: list[dict], predictions: list[list[Span]]) -> dict:
    """Pooled char P/R/F1, per-gold-label recall and per-predicted-label precision."""
    tp = n_pred = n_gold = n_chars = 0
    gold_tot: dict[str, int] = {}
    gold_hit: dict[str, int] = {}
    pred_tot: dict[str, int] = {}
    pred_hit: dict[str, int] = {}
    for rec, preds in zip(records, predictions, strict=True):
        gold_spans = [Span(s["start"], s["end"], s["label"]) for s in rec["spans"]]
        gold = _chars(gold_spans)
        pred = _chars(preds)
        tp += len(gold & pred)
        n_chars += len(rec["text"])
        n_pred += len(pred)
        n_gold += len(gold)
        for label in {s.label for s in gold_spans}:
            chars = _chars([s for s in gold_spans if s.label == label])
            gold_tot[label] = gold_tot.get(label, 0) + len(chars)
            gold_hit[label] = gold_hit.get(label, 0) + len(chars & pred)
        for label in {s.label for s in preds}:
            chars = _chars([s for s in preds if s.label == label])
            pred_tot[label] = pred_tot.get(label, 0) + len(chars)
            pred_hit[label] = pred_hit.get(label, 0) + len(chars & gold)
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    non_target = n_chars - n_gold
    return {
        "precision": p,
        "recall": r,
        "f1": f,
        # non-target characters flagged / non-target characters
        "fpr": (n_pred - tp) / non_target if non_target else 0.0,
        "gold_chars": n_gold,
        "pred_chars": n_pred,
        "recall_by_gold_label": {k: gold_hit[k] / v for k, v in sorted(gold_tot.items()) if v},
        "gold_chars_by_label": dict(sorted(gold_tot.items())),
        "precision_by_pred_label": {k: pred_hit[k] / v for k, v in sorted(pred_tot.items()) if v},
        "pred_chars_by_label": dict(sorted(pred_tot.items())),
        "by_entity": by_entity(records, predictions),
    }


def select_split(records: list[dict], side: str, seed: int) -> list[dict]:
    """``all`` or one half ("a"/"b") of a seeded, scope-respecting split (tune on one, report the other)."""
    if side == "all":
        return records
    from curation.labels.sets import LabeledRecord, split_records

    a, b = split_records([LabeledRecord.from_dict(r) for r in records], 0.5, seed=seed)
    keep = {r.id for r in (a if side == "a" else b)}
    return [r for r in records if str(r["id"]) in keep]


def timed(predict: Predictor, texts: list[str]) -> tuple[list[list[Span]], float]:
    t0 = time.perf_counter()
    preds = predict(texts)
    return preds, time.perf_counter() - t0


# --- systems ---------------------------------------------------------------------------------------------


def presidio_defaults(model: str) -> Predictor:
    """Presidio as shipped: all predefined recognizers, default NER mapping, no score threshold.

    Only the model differs from a bare ``AnalyzerEngine()``: the installed small spaCy model instead of
    en_core_web_lg (which would be downloaded).
    """
    import spacy
    from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine
    from presidio_analyzer.nlp_engine import SpacyNlpEngine

    name = _resolve_spacy_package(model)

    class Local(SpacyNlpEngine):
        def load(self) -> None:
            self.nlp = {"en": spacy.load(name)}

    engine = Local(models=[{"lang_code": "en", "model_name": name}])
    engine.load()
    batch = BatchAnalyzerEngine(AnalyzerEngine(nlp_engine=engine))

    def predict(texts: list[str]) -> list[list[Span]]:
        results = batch.analyze_iterator(texts, language="en", batch_size=32)
        return [
            [Span(r.start, r.end, r.entity_type, r.score, "presidio") for r in rs if r.end > r.start] for rs in results
        ]

    return predict


def suite_predictor(suite: DetectorSuite, kind: str | None = None) -> Predictor:
    def predict(texts: list[str]) -> list[list[Span]]:
        return suite.detect(texts, kinds=None if kind is None else [kind] * len(texts))

    return predict


def credsweeper_predictor(ml: bool = True) -> Predictor:
    """CredSweeper over each text as one in-memory file; values mapped back to document offsets."""
    from curation.detect import CredSweeperDetector

    det = CredSweeperDetector(ml_validation=ml)
    return lambda texts: [det.find(t) for t in texts]


def detect_secrets_predictor() -> Predictor:
    """detect-secrets default plugins via scan_line; it reports secrets, we locate them on the line."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def find(text: str) -> list[Span]:
        out: list[Span] = []
        offset = 0
        for line in text.splitlines(keepends=True):
            for secret in scan_line(line.rstrip("\n")):
                value = secret.secret_value
                if not value:
                    continue
                pos = line.find(value)
                if pos >= 0:
                    out.append(Span(offset + pos, offset + pos + len(value), "SECRET", 1.0, f"ds:{secret.type}"))
            offset += len(line)
        return out

    def predict(texts: list[str]) -> list[list[Span]]:
        with default_settings():
            return [find(t) for t in texts]

    return predict


def union(*predictors: Predictor) -> Predictor:
    def predict(texts: list[str]) -> list[list[Span]]:
        outs = [p(texts) for p in predictors]
        return [[s for o in outs for s in o[i]] for i in range(len(texts))]

    return predict


# --- report ----------------------------------------------------------------------------------------------


def table(name: str, results: dict[str, dict], timings: dict[str, float], n: int) -> str:
    systems = list(results)
    lines = [f"== {name} ({n} records)", f"{'metric':34s}" + "".join(f"{s:>24s}" for s in systems)]
    for key in ("precision", "recall", "f1", "fpr"):
        lines.append(f"{'pooled ' + key:34s}" + "".join(f"{results[s][key]:24.3f}" for s in systems))
    lines.append(f"{'sec / 1000 records':34s}" + "".join(f"{1000 * timings[s] / n:24.2f}" for s in systems))
    gold_labels = sorted({k for s in systems for k in results[s]["recall_by_gold_label"]})
    lines.append("-- recall by gold label (gold chars)")
    for lab in gold_labels:
        chars = results[systems[0]]["gold_chars_by_label"].get(lab, 0)
        row = f"  {lab + f' ({chars})':32s}"
        row += "".join(f"{results[s]['recall_by_gold_label'].get(lab, 0.0):24.3f}" for s in systems)
        lines.append(row)
    lines.append("-- label-strict per entity: precision / recall / F1 (gold chars)")
    entities = sorted({k for s in systems for k, v in results[s].get("by_entity", {}).items() if v["gold_chars"]})
    for lab in entities:
        chars = max(results[s]["by_entity"].get(lab, {}).get("gold_chars", 0) for s in systems)
        row = f"  {lab + f' ({chars})':32s}"
        for s in systems:
            e = results[s]["by_entity"].get(lab, {"precision": 0.0, "recall": 0.0, "f1": 0.0})
            row += f"{e['precision']:8.2f}{e['recall']:8.2f}{e['f1']:8.2f}"
        lines.append(row)
    lines.append("-- precision by predicted label (predicted chars)")
    for s in systems:
        for lab, p in results[s]["precision_by_pred_label"].items():
            lines.append(f"  {s:20s} {lab:22s} {p:7.3f}  ({results[s]['pred_chars_by_label'][lab]} chars)")
    return "\n".join(lines)


def show_errors(records: list[dict], preds: list[list[Span]], limit: int) -> None:
    """Print missed gold spans and unmatched predictions (synthetic data only: this prints values)."""
    shown = 0
    for rec, ps in zip(records, preds, strict=True):
        text = rec["text"]
        pc = _chars(ps)
        gc = _chars([Span(s["start"], s["end"]) for s in rec["spans"]])
        for s in rec["spans"]:
            cov = sum(i in pc for i in range(s["start"], s["end"])) / max(1, s["end"] - s["start"])
            if cov < 0.5:
                print(
                    f"FN {s['label']:16s} {text[s['start'] : s['end']]!r}  "
                    f"<<{text[max(0, s['start'] - 40) : s['end'] + 20]!r}"
                )
                shown += 1
        for p in ps:
            cov = sum(i in gc for i in range(p.start, p.end)) / max(1, p.length)
            if cov < 0.5:
                print(
                    f"FP {p.label:16s} {p.source:28s} {text[p.start : p.end]!r}  "
                    f"<<{text[max(0, p.start - 40) : p.end + 20]!r}"
                )
                shown += 1
        if shown >= limit:
            break


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_PII)
    ap.add_argument("--secrets", type=Path, default=DEFAULT_SECRETS)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument(
        "--split",
        choices=("all", "a", "b"),
        default="all",
        help="evaluate on one side of curation.labels.sets.split_records(records, 0.5, seed=--split-seed)",
    )
    ap.add_argument("--split-seed", type=int, default=1)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--skip-external", action="store_true", help="do not run CredSweeper / detect-secrets")
    ap.add_argument("--show-errors", type=int, default=0, help="print N error examples (prints values!)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)

    report: dict = {}
    records = select_split(load(args.data, args.limit), args.split, args.split_seed)
    texts = [r["text"] for r in records]
    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    if not args.skip_baseline:
        t0 = time.perf_counter()
        baseline = presidio_defaults("en_core_web_sm")
        load_s = time.perf_counter() - t0
        preds, secs = timed(baseline, texts)
        results["presidio_default"], timings["presidio_default"] = score(records, preds), secs
        report["presidio_default_load_seconds"] = load_s
    suite = DetectorSuite(DetectorConfig())
    t0 = time.perf_counter()
    suite.detect(["warm up: Jane Doe lives at 1 Main St."])
    report["suite_load_seconds"] = time.perf_counter() - t0
    preds, secs = timed(suite_predictor(suite), texts)
    results["tuned_suite"], timings["tuned_suite"] = score(records, preds), secs
    print(table(args.data.name, results, timings, len(records)))
    if args.show_errors:
        show_errors(records, preds, args.show_errors)
    report["pii"] = {
        "data": str(args.data),
        "split": args.split,
        "split_seed": args.split_seed,
        "records": len(records),
        "results": results,
        "seconds_per_1000": {k: 1000 * v / len(records) for k, v in timings.items()},
    }
    report["versions"] = suite.versions

    if args.secrets.exists():
        report["secrets"] = eval_secrets(args, suite)
    else:
        print(f"\n(no {args.secrets}: secrets evaluation skipped)")

    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True))
        print(f"\nwrote {args.out}")
    return 0


def _only_credentials(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.label in CREDENTIAL_LABELS]


def eval_secrets(args: argparse.Namespace, suite: DetectorSuite) -> dict:
    """Credential view (gold and predictions restricted to credential labels) for the secret scanners,
    plus the full suite on every label of the file."""
    records = load(args.secrets, args.limit)
    texts = [r["text"] for r in records]
    kinds = [r.get("kind", "code") for r in records]
    cred_records = [{**r, "spans": [s for s in r["spans"] if s["label"] in CREDENTIAL_LABELS]} for r in records]
    cred_only = DetectorSuite(DetectorConfig(use_presidio=False))
    systems: dict[str, Predictor] = {
        "builtin_patterns": lambda ts: [_only_credentials(s) for s in cred_only.detect(ts, kinds)],
    }
    if not args.skip_external:
        for name, factory in (
            ("credsweeper", lambda: credsweeper_predictor(True)),
            ("credsweeper_noml", lambda: credsweeper_predictor(False)),
            ("detect_secrets", detect_secrets_predictor),
        ):
            try:
                systems[name] = factory()
            except ImportError as exc:
                print(f"({name} unavailable: {type(exc).__name__})")
        if "credsweeper" in systems:
            systems["builtin+credsweeper"] = union(systems["builtin_patterns"], systems["credsweeper"])
        if "detect_secrets" in systems:
            systems["builtin+detect_secrets"] = union(systems["builtin_patterns"], systems["detect_secrets"])
    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    for name, predict in systems.items():
        preds, secs = timed(predict, texts)
        results[name], timings[name] = score(cred_records, preds), secs
        if args.show_errors and name == "builtin_patterns":
            show_errors(cred_records, preds, args.show_errors)
    print()
    print(table(f"{args.secrets.name}, credential labels only", results, timings, len(records)))

    full: dict[str, dict] = {}
    full_t: dict[str, float] = {}
    for name, predict in (
        ("suite_with_kinds", lambda ts: suite.detect(ts, kinds)),
        ("suite_as_text", lambda ts: suite.detect(ts)),
    ):
        preds, secs = timed(predict, texts)
        full[name], full_t[name] = score(records, preds), secs
    print()
    print(table(f"{args.secrets.name}, all labels, full suite", full, full_t, len(records)))
    return {
        "data": str(args.secrets),
        "records": len(records),
        "credential_view": results,
        "full_view": full,
        "seconds_per_1000": {k: 1000 * v / len(records) for k, v in {**timings, **full_t}.items()},
    }


if __name__ == "__main__":
    raise SystemExit(main())
