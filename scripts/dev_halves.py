"""Write the seeded halves of the development sets, for `curation eval --calibrate-on` on one half.

    .venv/bin/python scripts/dev_halves.py [--data ../shared/data] [--out .devcache/halves] [--seed 0]

For each set it writes NAME.cal.jsonl (the first half of ``split_records(records, 0.5, seed)``, the
same half the bundled public copies were drawn from) and NAME.test.jsonl (the other half). CredData
contexts are grouped by repository (the id's second part) so no repository is on both sides; the
labels are written already mapped onto the convention's labels.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curation.core.config import bundled
from curation.labels.label_map import load_label_map
from curation.labels.sets import load_labeled, split_records

SETS = ("presidio_synth", "tab_echr_dev", "creddata_dev", "social_dev", "meddocan_es_dev")
# sets whose labels are a corpus' own vocabulary: the label map shipped for it (curation/data/label_maps)
LABEL_MAPS = {"meddocan_es_dev": "meddocan.yaml"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--out", default=".devcache/halves")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in SETS:
        label_map = load_label_map(bundled(f"label_maps/{LABEL_MAPS[name]}")) if name in LABEL_MAPS else None
        records = load_labeled(Path(args.data) / name / "labeled.jsonl", label_map)
        for record in records:
            if record.id.startswith("cred-data/"):
                record.scope_id = record.id.split("/")[1]  # one repository stays on one side
        halves = split_records(records, 0.5, args.seed)
        for part, half in zip(("cal", "test"), halves, strict=True):
            path = out / f"{name}.{part}.jsonl"
            path.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in half), encoding="utf-8")
            print(f"{path}: {len(half)} records, {sum(len(r.spans) for r in half)} spans")


if __name__ == "__main__":
    main()
