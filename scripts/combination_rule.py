"""Before/after of the one-standard-error rule: the detector combination the best calibration F1 alone picks
against the one the rule picks, each measured on the held-out half.

    .venv/bin/python scripts/combination_rule.py OUT/NAME.metrics.json ...   # files `curation eval --metrics` wrote

Each metrics file holds the calibration split's table (``per_domain.DOMAIN.calibration_combinations``, flags
``best_f1`` and ``chosen``) and every combination's held-out metrics (``ablation``), so the rule's effect is
read off one evaluation, with nothing re-run. Prints a markdown table.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def row(path: Path) -> str:
    metrics = json.loads(path.read_text(encoding="utf-8"))
    domain = metrics["summary"]["domain"]
    table = metrics["per_domain"][domain]["calibration_combinations"]
    best = next(r["combination"] for r in table if r["best_f1"])
    chosen = next(r["combination"] for r in table if r["chosen"])

    def held(name: str) -> str:
        m = metrics["ablation"][name]
        return f"{m['f1']:.3f} ({m['precision']:.3f} / {m['recall']:.3f}), {m['fpr']:.4f}"

    return (
        f"| {path.name.removesuffix('.metrics.json')} ({domain}) | {metrics['summary']['records']} "
        f"| `{best}` | {held(best)} | `{chosen}` | {held(chosen)} |"
    )


def main() -> None:
    held = "held-out F1 (P / R), FPR"
    print(f"| held-out set | records | best calibration F1 picks | {held} | one-SE rule picks | {held} |")
    print("|---|---|---|---|---|---|")
    for name in sys.argv[1:]:
        print(row(Path(name)))


if __name__ == "__main__":
    main()
