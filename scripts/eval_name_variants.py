"""Measure identity-level masking on labeled JSONL: detector spans alone vs detector spans + name variants.

Character level, pooled over records (a char is gold if inside any gold span): coverage (TPR) of all
gold characters and of gold PERSON characters, collateral (FPR: non-gold characters masked), and how
many variant spans the step added. The step has no fitted parameter, so every record is evaluation data.
Records are grouped by `scope_id` (else each record is its own scope).

    python scripts/eval_name_variants.py /work/shared/data/tab_echr_dev/labeled.jsonl curation/data/validation.jsonl
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

from curation.core.config import CurationConfig
from curation.core.spans import PERSON, Span, char_mask
from curation.detect.suite import detector_suite
from curation.policy.identities import mask_name_variants


def _rates(records: list[dict], predicted: dict[str, list[Span]]) -> dict:
    hit = gold_n = person_hit = person_n = fp = clean_n = 0
    for r in records:
        n = len(r["text"])
        gold = np.array(char_mask([Span(s["start"], s["end"]) for s in r["spans"]], n), dtype=bool)
        person = np.array(
            char_mask([Span(s["start"], s["end"]) for s in r["spans"] if s["label"] == PERSON], n), dtype=bool
        )
        mask = np.array(char_mask(predicted[r["id"]], n), dtype=bool)
        hit, gold_n = hit + int((mask & gold).sum()), gold_n + int(gold.sum())
        person_hit, person_n = person_hit + int((mask & person).sum()), person_n + int(person.sum())
        fp, clean_n = fp + int((mask & ~gold).sum()), clean_n + int((~gold).sum())
    return {
        "coverage": round(hit / gold_n, 4) if gold_n else None,
        "person_coverage": round(person_hit / person_n, 4) if person_n else None,
        "collateral": round(fp / clean_n, 5) if clean_n else None,
        "collateral_chars": fp,
    }


def evaluate(path: Path) -> dict:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    suite = detector_suite(CurationConfig().detectors)
    started = time.perf_counter()
    found = suite.detect([r["text"] for r in records], [r.get("kind", "text") for r in records])
    detected = {r["id"]: spans for r, spans in zip(records, found, strict=True)}
    texts = {r["id"]: r["text"] for r in records}
    scopes = {r["id"]: r.get("scope_id") or r["id"] for r in records}
    with_variants, report = mask_name_variants(texts, detected, scopes)
    return {
        "file": str(path),
        "records": len(records),
        "detectors": _rates(records, detected),
        "detectors+name_variants": _rates(records, with_variants),
        "step": report.to_dict(),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    for path in parser.parse_args().files:
        print(json.dumps(evaluate(path)), flush=True)


if __name__ == "__main__":
    main()
