"""The benchmarks' output: a table, then the whole result as one JSON line (the contract other tools read).

Shared by `benchmarks.scoring` and `benchmarks.scale`, so neither imports the other to print.
"""

from __future__ import annotations

import json


def report(result: dict) -> None:
    """The table, then the whole result as one JSON line (the contract other tools read)."""
    width = max(map(len, result))
    print(f"{'metric':<{width}}  value")
    for key, value in result.items():
        print(f"{key:<{width}}  {json.dumps(value) if isinstance(value, dict | list) else value}")
    print(json.dumps(result))
