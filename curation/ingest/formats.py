"""The input kinds, in one place: which files are record files (and how compressed), which are text files of
a folder, and how to open them. Ingest, the preflight checks of `curation run`, the inbox sensor and the
README's table all read this module, so they cannot disagree about what a user may pass.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path
from typing import BinaryIO

# Record files: one document per record.
RECORD_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
# Line-oriented record files may be compressed as users keep corpora (`part-0.jsonl.gz`, `rows.csv.zst`);
# Parquet compresses inside the file, so `.parquet.gz` is not a format.
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bz2", ".xz": "xz"}
UNCOMPRESSED_ONLY = frozenset({"parquet"})
# Folder files with these suffixes are prose ("text"); every other text file counts as "code",
# which is the safer default because config files and scripts are where credentials live.
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst"})
# Version-control internals and bytecode are tool state, not content: never walked.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})

EXPECTED_INPUT = (
    "a .jsonl (or .ndjson), .json (an array of records), .parquet or .csv file (all but .parquet may be "
    f"compressed: {', '.join(sorted(COMPRESSIONS))}), or a folder"
)


def record_format(path: Path | str) -> tuple[str, str | None] | None:
    """``(format, compression)`` of a record file from its suffixes (``x.jsonl.gz`` -> ``("jsonl", "gzip")``),
    or None when it is not one (a text or code file)."""
    suffixes = [s.lower() for s in Path(path).suffixes[-2:]]
    if not suffixes:
        return None
    compression = COMPRESSIONS.get(suffixes[-1]) if len(suffixes) == 2 else None
    fmt = RECORD_SUFFIXES.get(suffixes[-2] if compression else suffixes[-1])
    if fmt is None or (fmt in UNCOMPRESSED_ONLY and compression):
        return None
    return fmt, compression


def record_suffix(path: Path | str) -> str | None:
    """The suffix that makes ``path`` a record file, as written (``.jsonl.gz`` counts as one), or None."""
    found = record_format(path)
    if found is None:
        return None
    return "".join(Path(path).suffixes[-2:]) if found[1] else Path(path).suffix


def open_binary(path: Path, compression: str | None = None) -> BinaryIO:
    """A binary file object over the decompressed bytes, streamed (never the whole file in memory)."""
    if compression is None:
        return path.open("rb")
    if compression == "gzip":
        return gzip.open(path, "rb")
    if compression == "bz2":
        return bz2.open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    import zstandard

    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(path.open("rb"), closefd=True))


def decompression_errors() -> tuple[type[BaseException], ...]:
    """What a corrupt or truncated compressed stream raises while it is read."""
    import zstandard

    return (OSError, EOFError, lzma.LZMAError, zstandard.ZstdError)


def input_kinds_table() -> str:
    """The README's table of input kinds, generated from the constants above (a test keeps them equal)."""
    compressed = ", ".join(f"`{s}`" for s in COMPRESSIONS)
    rows = [
        "| input | read as |",
        "|---|---|",
        "| `.jsonl`, `.ndjson` | one JSON record per line |",
        "| `.json` | an array of records |",
        "| `.csv` | a header row, then one record per row |",
        "| `.parquet` | one record per row (compressed inside the file) |",
        f"| any of the above but Parquet, plus {compressed} | decompressed while read (`batch.jsonl.gz`) |",
        "| a folder | every record file in it (Parquet parts of a dataset too), and every other file as one "
        f"document: {', '.join(f'`{s}`' for s in sorted(TEXT_SUFFIXES))} as prose, anything else as code |",
    ]
    return "\n".join(rows)
