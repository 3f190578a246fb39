"""Generate the fake, labeled data sets shipped with ``curation``.

Usage: ``python -m benchmarks.synthetic [--seed N] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.synthetic.datasets import DATA_DIR, DEFAULT_SEED, GENERATED_WITH_FAKER, generate


def faker_version() -> str:
    """The installed Faker version."""
    import faker

    return str(faker.VERSION)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: write the three JSONL files into ``--out-dir``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.synthetic", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="master seed (default %(default)s)")
    parser.add_argument("--out-dir", type=Path, default=DATA_DIR, help="output directory (default: curation/data)")
    args = parser.parse_args(argv)
    if faker_version() != GENERATED_WITH_FAKER:
        print(
            f"warning: Faker {faker_version()} installed; the committed files were generated with "
            f"{GENERATED_WITH_FAKER}, so the output will differ",
            file=sys.stderr,
        )
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, payload in generate(args.seed).items():
        (args.out_dir / name).write_bytes(payload)
        n_records = payload.count(b"\n")
        print(f"wrote {args.out_dir / name} ({len(payload)} bytes, {n_records} records)")
    return 0
