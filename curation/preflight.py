"""Checks before a run is launched, so a user mistake is answered in one or two lines (what, where, what to
do) instead of a stack trace from inside the orchestrator, minutes later.

Only what can be known cheaply and for certain: the input exists, has a known format and holds at least one
record; the labeled validation file parses; an HMAC key can be had. Everything else (bad records, gates) is
the run's job: bad records are quarantined, not errors.
"""

from __future__ import annotations

from pathlib import Path

from curation.core.config import ConfigError, CurationConfig
from curation.delivery.writer import ReleaseError
from curation.ingest.formats import SKIP_DIRS, decompression_errors, open_binary, record_format
from curation.ingest.readers import IngestError, check_input_path
from curation.labels.sets import LabeledFormatError, load_labeled
from curation.views.vault import HmacKeyError, configured_key


class InputError(ValueError):
    """The run's input cannot give a single document; the message names the path and the fix."""


# Errors a user can act on: the CLI prints their message and a hint, never a traceback (--debug shows it).
HINTS: dict[type[Exception], str] = {
    ConfigError: "fix that setting in the config file (or the command-line option) and run again",
    IngestError: "point --input (or `input:` in the config) at the delivery's file or folder",
    InputError: "point --input (or `input:` in the config) at a delivery with records in it",
    LabeledFormatError: "fix that record of the labeled file, or point `validation:` at another file",
    HmacKeyError: "set the key (environment variable or key file) and run again",
    ReleaseError: "check the release folder named above",
    FileNotFoundError: "check the path and run again",
}
USER_ERRORS = tuple(HINTS)


def hint_for(exc: BaseException) -> str:
    for cls, hint in HINTS.items():
        if isinstance(exc, cls):
            return hint
    return ""


def check_run_inputs(config: CurationConfig) -> None:
    """Raise a user error when the configured run cannot start properly (see the module docstring)."""
    path = config.input_path
    check_input_path(path)
    if not _has_content(path):
        raise InputError(f"input {path} is empty: no records to curate (an empty export, or the wrong file?)")
    load_labeled(config.validation_path, config.label_table())  # raises LabeledFormatError naming file:line
    configured_key(config)  # raises HmacKeyError saying where a key was looked for


def count_records_upto(path: Path, limit: int) -> int | None:
    """How many records the input holds, counted up to ``limit + 1`` (enough to say "more than limit");
    None when that cannot be known cheaply (JSON arrays, corrupt compressed files). Line counts over-count CSV
    rows with embedded newlines: an estimate that errs towards "large"."""
    if path.is_dir():
        n = 0
        for file in path.rglob("*"):
            if file.name != "_READY" and not SKIP_DIRS & set(file.relative_to(path).parts) and file.is_file():
                if record_format(file) is not None:
                    return None  # a folder of record files: their records, not the files, are the documents
                n += 1
                if n > limit:
                    break
        return n
    fmt, compression = record_format(path) or (None, None)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except Exception:
            return None
    if fmt not in ("jsonl", "csv"):
        return None
    n = -1 if fmt == "csv" else 0  # a CSV's header is not a record
    try:  # a compressed file is decompressed only as far as limit + 1 records
        with open_binary(path, compression) as fh:
            for line in fh:
                if line.strip():
                    n += 1
                    if n > limit:
                        break
    except decompression_errors():
        return None
    return max(n, 0)


def _has_content(path: Path) -> bool:
    """Whether the input holds at least one candidate record (bad records count: they are quarantined)."""
    if path.is_dir():
        for file in path.rglob("*"):
            if file.name != "_READY" and not SKIP_DIRS & set(file.relative_to(path).parts) and not file.is_dir():
                return True
        return False
    fmt, compression = record_format(path)  # check_input_path let only record files through
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows > 0
        except Exception:  # unreadable: the run quarantines it, with its reason
            return True
    non_blank = 0
    try:
        with open_binary(path, compression) as fh:
            for line in fh:
                if line.strip() and line.strip() != b"\xef\xbb\xbf":
                    non_blank += 1
                    if non_blank >= (2 if fmt == "csv" else 1):  # a CSV needs a header and a row
                        return True
    except decompression_errors():  # corrupt or truncated: the run quarantines it, with its reason
        return True
    return False
