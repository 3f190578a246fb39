"""A deterministic, mixed benchmark corpus at the scale users run: support chats, notes, code/config files
and long documents, full of fake PII and secrets so the detectors have real work.

    python -m benchmarks.corpus --docs 2000 --out corpus.jsonl

Records come from the generators behind the bundled sample (`benchmarks.synthetic`: Faker + seeded
`random`, every value fake), drawn in rounds of fresh seeded contexts so no text repeats (no cache hits).
About `long_share` of the documents are long: several generated records of one round joined into one
report or transcript (thousands of characters, so the scorer's chunking and the detectors' long-input paths
run). The same arguments give byte-identical files.

`make_corpus` is the small fixed corpus of `benchmarks.scoring` and `benchmarks.tagger` instead: copies of
the bundled sample, each made unique.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_SEED = 20261201
ROUND_RECORDS = 120  # records per generator round (one seeded context each)
LONG_PARTS = (6, 14)  # generated records joined into one long document


def _round_records(seed: int, round_no: int) -> list[dict]:
    """One round of the sample's generator families (chats, notes, repos) under its own seeded context."""
    from benchmarks.synthetic.context import Ctx
    from benchmarks.synthetic.datasets import gen_mixed

    ctx = Ctx(f"bench-{round_no}", seed, years=(2022, 2025), birth_years=(1940, 2004))
    return gen_mixed(
        ctx,
        total=ROUND_RECORDS,
        n_notes=24,
        n_repos=4,
        files_per_repo=(4, 6),
        scope_prefix=f"b{round_no}-",
        clean_share=0.25,
    )


def _joined(parts: list[dict]) -> dict:
    """Several records as one long document (kind text), spans shifted to their new offsets."""
    texts, spans, offset = [], [], 0
    for part in parts:
        texts.append(part["text"])
        spans += [{**s, "start": s["start"] + offset, "end": s["end"] + offset} for s in part["spans"]]
        offset += len(part["text"]) + 2
    return {
        "kind": "text",
        "scope_id": parts[0]["scope_id"],
        "text": "\n\n".join(texts),
        "spans": spans,
        "metadata": {"long": True, "parts": len(parts)},
    }


def generate_corpus(
    n_docs: int, seed: int = DEFAULT_SEED, long_share: float = 0.05, labels: bool = False
) -> list[dict]:
    """`n_docs` records (id, kind, scope_id, text, metadata; spans only with `labels`), deterministic in
    (n_docs, seed, long_share). Without labels the run finds the private values itself, as on a real delivery."""
    rng = random.Random(f"{seed}/corpus")
    out: list[dict] = []
    round_no = 0
    while len(out) < n_docs:
        records = _round_records(seed, round_no)
        round_no += 1
        i = 0
        while i < len(records) and len(out) < n_docs:
            if rng.random() < long_share:
                size = rng.randint(*LONG_PARTS)
                record = _joined(records[i : i + size])
                i += size
            else:
                record = dict(records[i])
                i += 1
            record["id"] = f"bench-{len(out) + 1:06d}"
            if not labels:
                record.pop("spans", None)
            out.append(record)
    return out


def write_corpus(path: Path, n_docs: int, seed: int = DEFAULT_SEED, long_share: float = 0.05) -> dict:
    """Write the corpus as JSONL; returns its shape (documents per kind, characters, long documents)."""
    records = generate_corpus(n_docs, seed, long_share)
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for r in records]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    kinds: dict[str, int] = {}
    for r in records:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    return {
        "documents": len(records),
        "kinds": kinds,
        "long_documents": sum(1 for r in records if r.get("metadata", {}).get("long")),
        "characters": sum(len(r["text"]) for r in records),
        "bytes": Path(path).stat().st_size,
    }


def make_corpus(path: Path, n_docs: int) -> int:
    """A corpus of n_docs records cycled from the bundled sample, each made unique (no cache hits): the small,
    fixed corpus of `benchmarks.scoring` and `benchmarks.tagger`; returns its size in bytes."""
    sample = [json.loads(x) for x in (ROOT / "curation/data/sample_corpus.jsonl").read_text().splitlines() if x]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n_docs):
            record = dict(sample[i % len(sample)])
            record["id"] = f"bench-{i:06d}"
            record["text"] = f"[copy {i // len(sample)}] " + record["text"]
            record.pop("spans", None)
            f.write(json.dumps(record) + "\n")
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--long-share", type=float, default=0.05)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(json.dumps(write_corpus(args.out, args.docs, args.seed, args.long_share)))


if __name__ == "__main__":
    main()
