"""Optional CredSweeper scanner (regex rules + bundled ONNX validator, fully offline)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from curation.core.spans import API_KEY, PASSWORD, PRIVATE_KEY, SECRET, Span
from curation.detect.base import CODE_KINDS


def _credsweeper_label(rule_name: str) -> str:
    name = rule_name.lower()
    if "private key" in name or "pem" in name:
        return PRIVATE_KEY
    if "password" in name or "passwd" in name or "credentials" in name:
        return PASSWORD
    if "jwt" in name or "secret" in name or "auth" in name or "bearer" in name:
        return SECRET
    return API_KEY


class CredSweeperDetector:
    """Optional CredSweeper scanner (regex rules + bundled ONNX validator, fully offline).

    Each text is scanned as one in-memory file; reported values are mapped back to document offsets.
    CredSweeper's own logger can print raw file bytes, so it is silenced here.
    """

    def __init__(self, ml_validation: bool = True, ml_threshold: str | float = "medium") -> None:
        import warnings

        logging.getLogger("credsweeper").setLevel(logging.CRITICAL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from credsweeper import CredSweeper, StringContentProvider

        self._provider_cls = StringContentProvider
        self._cs = CredSweeper(ml_threshold=ml_threshold if ml_validation else 0)

    def __repr__(self) -> str:
        return "CredSweeperDetector()"

    def find(self, text: str) -> list[Span]:
        return self.find_many([text])[0]

    def find_many(self, texts: Sequence[str]) -> list[list[Span]]:
        """Every text as its own in-memory file, scanned in one pass with one ML validation call: the
        validator's per-call cost dominates small texts. Each text gets its own path (`<i>/document.txt`),
        so candidates never group or de-duplicate across texts, and the path's words (a feature of the
        ML model) are those of one `document.txt`. Blank texts are not scanned (no spans)."""
        import warnings

        out: list[list[Span]] = [[] for _ in texts]
        if not any(text.strip() for text in texts):
            return out
        split = []
        for text in texts:
            lines = text.split("\n")
            starts = [0]
            for line in lines[:-1]:
                starts.append(starts[-1] + len(line) + 1)
            split.append((lines, starts))
        manager = self._cs.credential_manager
        manager.clear_credentials()
        found = []
        for i, (lines, _) in enumerate(split):
            if not texts[i].strip():
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                provider = self._provider_cls(lines, file_path=f"{i}/document.txt")
            found.extend(self._cs.file_scan(provider))
        manager.set_credentials(found)
        self._cs.post_processing(None)
        for cand in manager.get_credentials():
            label = _credsweeper_label(cand.rule_name)
            for ld in cand.line_data_list:
                i = int(ld.path.split("/", 1)[0])
                lines, starts = split[i]
                span = self._locate(texts[i], lines, starts, ld)
                if span is not None:
                    # rounded: the ONNX validator's last digits depend on which texts share its batch
                    score = round(float(cand.ml_probability or 0.9), 4)
                    out[i].append(Span(span[0], span[1], label, score, "credsweeper"))
        manager.clear_credentials()
        return out

    @staticmethod
    def _locate(text: str, lines: list[str], starts: list[int], ld: Any) -> tuple[int, int] | None:
        value = ld.value or ""
        idx = ld.line_num - 1
        if not value or not 0 <= idx < len(lines):
            return None
        base = starts[idx]
        if 0 <= ld.value_start and text[base + ld.value_start : base + ld.value_start + len(value)] == value:
            return base + ld.value_start, base + ld.value_start + len(value)
        pos = lines[idx].find(value)
        return (base + pos, base + pos + len(value)) if pos >= 0 else None


# -- CredSweeper ----------------------------------------------------------------------------
_CREDSWEEPER = None


def credsweeper_spans(texts: Sequence[str], kinds: Sequence[str]) -> list[list[Span]]:
    """CredSweeper (regex rules + its bundled ML validator, offline) on code, config and log texts, all
    of them in one scan and one validation call."""
    global _CREDSWEEPER
    code = [text if kind in CODE_KINDS else "" for text, kind in zip(texts, kinds, strict=True)]
    if not any(text.strip() for text in code):
        return [[] for _ in texts]
    if _CREDSWEEPER is None:
        _CREDSWEEPER = CredSweeperDetector()
    return _CREDSWEEPER.find_many(code)  # spans sourced CREDSWEEPER; blank (non-code) texts are skipped


def credsweeper_version() -> str:
    from importlib.metadata import version

    try:
        return version("credsweeper")
    except Exception:  # not installed: reported as such
        return "not installed"
