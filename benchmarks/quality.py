"""The bench's dev-half quality guard: F1 on each shared dev set's held-out half with the scoring pass the
bench ran, against the reference F1 the docs report (`benchmarks/quality_reference.json`).

    python -m benchmarks.quality --warehouse W [--data ../shared/data]

Runs `scripts/dev_eval.sh` (seeded halves, `curation eval` calibrated on one half, measured on the other)
into a temporary folder. W caches scores, hidden states and taggers: with a warm cache a set takes
seconds to a minute; cold, the model scores every dev document (about an hour on 2 cores), which is why
`make bench` runs this only when given a warehouse (`BENCH_QUALITY_WAREHOUSE=W make bench`).
A change to the pass (another dtype, fewer layers) changes the model key, so the cache cannot hide it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(__file__).with_name("quality_reference.json")
TOLERANCE = 0.005  # issue 35: no dev-half F1 lower than its reference by more than this


def quality_guard(warehouse: Path, data: Path) -> dict:
    reference = json.loads(REFERENCE.read_text())
    with tempfile.TemporaryDirectory(prefix="curation-quality-") as tmp:
        subprocess.run(["scripts/dev_eval.sh", tmp, str(warehouse), str(data)], cwd=ROOT, check=False)
        f1 = {}
        for name in reference["f1"]:
            metrics = Path(tmp) / f"{name}.metrics.json"
            f1[name] = json.loads(metrics.read_text())["summary"]["f1"] if metrics.exists() else None
    delta = {k: round(v - reference["f1"][k], 4) if v is not None else None for k, v in f1.items()}
    return {
        "dev_half_f1": f1,
        "dev_half_f1_reference": reference["f1"],
        "dev_half_f1_reference_commit": reference["commit"],
        "dev_half_f1_delta": delta,
        "dev_half_quality_ok": all(d is not None and d >= -TOLERANCE for d in delta.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    print(json.dumps(quality_guard(args.warehouse.resolve(), args.data.resolve())))


if __name__ == "__main__":
    main()
