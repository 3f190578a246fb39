"""Per-family detector ablation: F1 of what `curation eval` masks, with every family and with each removed.

    python scripts/ablate_detectors.py --halves /work/devcache/halves \
        --warehouse /work/devcache/ablation/eval.duckdb --out /work/devcache/ablation/ablation.json \
        [--sets presidio_synth:synthetic_pii,tab_echr_dev:court,creddata_dev:code] [--families email,phones]
    python scripts/ablate_detectors.py --merge A.json B.json --out ALL.json   # join runs split by --sets

For each set, `curation.evaluation.gold.run_eval` (the code behind `curation eval SET.test.jsonl --calibrate-on
DOMAIN=SET.cal.jsonl --warehouse W`) runs with every family, then once per removed family with
`DetectorConfig(excluded_families={family})`. The number is the summary F1: character F1 of the chosen
policy's spans after propagation on the held-out `.test` half, calibrated on the `.cal` half.

Nothing is re-scored or re-trained: give `--warehouse` a copy of the warehouse (and its `hidden/` and
`taggers/` folders) of a finished `curation eval` run on the same halves. Presidio's spans are computed
once per set of running recognizers and reused (the rule families do not change them). A family whose
removal changes no detector span on either half gets the all-families metrics without a run: the
evaluation is a deterministic function of the detector spans, the cached scores and the cached tagger.

Also (no model involved): character F1 of the detector spans alone on the bundled labeled sets
(curation/data/validation.jsonl, sample_corpus.jsonl, code_secrets.jsonl), the user cases of the default
`support` domain and of code that the dev sets do not hold.

Families: `curation.detect.suite.RULE_FAMILIES` and the recognizers in `PRESIDIO_RECOGNIZERS`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from curation.core.config import bundled
from curation.core.spans import Span, char_mask
from curation.detect import PRESIDIO_RECOGNIZERS, DetectorConfig, DetectorSuite
from curation.detect.suite import RULE_FAMILIES
from curation.evaluation.gold import run_eval
from curation.labels.sets import load_labeled
from curation.policy.calibration import char_metrics

DEFAULT_SETS = "presidio_synth:synthetic_pii,tab_echr_dev:court,creddata_dev:code"
BUNDLED_SETS = ("validation.jsonl", "sample_corpus.jsonl", "code_secrets.jsonl")
# (running recognizers, texts, kinds) -> Presidio spans: shared by every suite of this process
_PRESIDIO_CACHE: dict[tuple[frozenset[str], tuple[str, ...], tuple[str, ...]], list[list[Span]]] = {}


class ReusingPresidioSuite(DetectorSuite):
    """The library's suite, with Presidio's spans memoized across suites that run the same recognizers."""

    def _presidio_spans(self, texts: list[str], kinds: list[str]) -> list[list[Span]]:
        key = (PRESIDIO_RECOGNIZERS - self.config.excluded_families, tuple(texts), tuple(kinds))
        if key not in _PRESIDIO_CACHE:
            _PRESIDIO_CACHE[key] = super()._presidio_spans(texts, kinds)
        return [list(spans) for spans in _PRESIDIO_CACHE[key]]


def suite_without(family: str | None) -> DetectorSuite:
    return ReusingPresidioSuite(DetectorConfig(excluded_families=frozenset({family} if family else ())))


def detect_halves(suite: DetectorSuite, halves: list[list]) -> list[list[Span]]:
    return [spans for records in halves for spans in suite.detect([r.text for r in records], [r.kind for r in records])]


def changed_spans(base: list[list[Span]], other: list[list[Span]]) -> int:
    """Spans present in one output and not the other, over all texts."""
    return sum(len(set(a) ^ set(b)) for a, b in zip(base, other, strict=True))


def detector_f1(records: list, spans: list[list[Span]]) -> float:
    """Pooled character F1 of detector spans alone against the gold spans."""
    pred = np.concatenate([np.array(char_mask(s, len(r.text)), bool) for r, s in zip(records, spans, strict=True)])
    gold = np.concatenate([np.array(char_mask(r.spans, len(r.text)), bool) for r in records])
    return round(char_metrics(pred, gold).f1, 4)


def bundled_rows(families: list[str]) -> dict:
    """Per bundled set: detector-only F1 with every family and without each one."""
    out = {}
    for name in BUNDLED_SETS:
        records = load_labeled(bundled(name))
        base = detect_halves(suite_without(None), [records])
        rows = {"all": detector_f1(records, base)}
        for family in families:
            spans = detect_halves(suite_without(family), [records])
            rows[family] = rows["all"] if spans == base else detector_f1(records, spans)
        out[name] = rows
        print(f"bundled {name}: detector-only F1 {rows['all']:.4f}", file=sys.stderr)
    return out


def evaluate(name: str, domain: str, halves: Path, warehouse: Path, runs: Path, family: str | None) -> dict:
    label = family or "all"
    metrics = run_eval(
        halves / f"{name}.test.jsonl",
        runs / name / f"{label}.pred.jsonl",
        runs / name / f"{label}.metrics.json",
        calibrate_on=f"{domain}={halves / f'{name}.cal.jsonl'}",
        warehouse_path=warehouse,
        detector_suite=suite_without(family),
        progress=lambda message: None,
    )
    s = metrics["summary"]
    return {
        "f1": s["f1"],
        "precision": s["precision"],
        "recall": s["tpr"],
        "policy": s["policy"],
        "detector_combination": s["detector_combination"],
        "seconds": s["seconds"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--halves", type=Path, help="folder of SET.cal.jsonl / SET.test.jsonl")
    parser.add_argument("--warehouse", type=Path, help="a copy of a finished eval's DuckDB file")
    parser.add_argument("--out", type=Path, required=True, help="JSON with every number of the table")
    parser.add_argument("--sets", default=DEFAULT_SETS, help="SET:DOMAIN,... (default: the three dev sets)")
    parser.add_argument("--families", help="comma-separated subset of families (default: all)")
    parser.add_argument("--no-bundled", action="store_true", help="skip the detector-only bundled-set columns")
    parser.add_argument("--merge", type=Path, nargs="+", help="result JSONs of earlier runs: join them, print")
    args = parser.parse_args()
    if args.merge:
        merged: dict = {"sets": {}, "families": [], "bundled": {}}
        for path in args.merge:
            part = json.loads(path.read_text(encoding="utf-8"))
            merged["sets"].update(part["sets"])
            merged["bundled"].update(part["bundled"])
            merged["families"] = merged["families"] or part["families"]
        args.out.write_text(json.dumps(merged, indent=2), encoding="utf-8")
        print(table(merged))
        return 0
    if args.halves is None or args.warehouse is None:
        parser.error("--halves and --warehouse are required (unless --merge)")

    sets = [tuple(item.split(":", 1)) for item in args.sets.split(",")]
    families = [*RULE_FAMILIES, *sorted(PRESIDIO_RECOGNIZERS)]
    if args.families:
        families = [f for f in families if f in set(args.families.split(","))]
    runs = args.out.parent / "runs"
    result: dict = {"sets": {}, "families": families, "bundled": {} if args.no_bundled else bundled_rows(families)}
    for name, domain in sets:
        started = time.perf_counter()
        # the same text lists run_eval detects on, so its Presidio calls hit the cache
        halves = [load_labeled(args.halves / f"{name}.{half}.jsonl") for half in ("cal", "test")]
        base_spans = detect_halves(suite_without(None), halves)
        all_row = evaluate(name, domain, args.halves, args.warehouse, runs, None)
        print(f"{name}: all families F1 {all_row['f1']:.4f} ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
        rows = {}
        for family in families:
            t = time.perf_counter()
            changed = changed_spans(base_spans, detect_halves(suite_without(family), halves))
            row = dict(all_row) if changed == 0 else evaluate(name, domain, args.halves, args.warehouse, runs, family)
            row.update(changed_spans=changed, delta=round(row["f1"] - all_row["f1"], 4), evaluated=changed > 0)
            rows[family] = row
            print(
                f"  -{family}: F1 {row['f1']:.4f} ({row['delta']:+.4f}), {changed} spans changed, "
                f"{time.perf_counter() - t:.0f}s",
                file=sys.stderr,
            )
        result["sets"][name] = {"domain": domain, "all": all_row, "without": rows}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")  # partial results survive a crash

    print(table(result))
    return 0


def table(result: dict) -> str:
    """Markdown: one row per family, per set the F1 without it and the change against all families."""
    sets, extra = list(result["sets"]), list(result["bundled"])
    head = "| family | " + " | ".join(f"{s} F1 | Δ" for s in sets) + "".join(f" | {b} Δ" for b in extra) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(sets) + "---:|" * len(extra)]
    cells = [f"{result['sets'][s]['all']['f1']:.4f} | " for s in sets]
    cells += [f"{result['bundled'][b]['all']:.4f}" for b in extra]
    lines.append("| (all families) | " + " | ".join(cells) + " |")
    for family in result["families"]:
        cells = []
        for s in sets:
            row = result["sets"][s]["without"][family]
            mark = "" if row["evaluated"] else " ="
            cells.append(f"{row['f1']:.4f}{mark} | {row['delta']:+.4f}")
        cells += [f"{result['bundled'][b][family] - result['bundled'][b]['all']:+.4f}" for b in extra]
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    lines.append("\n`=`: removing the family changes no detector span on either half (metrics of all families).")
    if extra:
        lines.append("Bundled columns: change of the detector spans' own character F1 (no tagger, no calibration).")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
