"""Text builders: a document that records its labeled spans as it is written, and the templates it renders."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Slot = tuple[str, str | None]  # (value, label); label None = unlabeled text
Slots = dict[str, Slot]

PROSE_SLOT = re.compile(r"\{(\w+)\}")
CODE_SLOT = re.compile(r"\{\{(\w+)\}\}")
OPTIONAL_LINE = "?|"


class Doc:
    """Append-only text builder that records labeled spans at the offsets they are written to."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._len = 0
        self.spans: list[dict[str, Any]] = []

    def add(self, text: str) -> None:
        """Append unlabeled text."""
        self._parts.append(text)
        self._len += len(text)

    def ent(self, value: str, label: str | None) -> None:
        """Append ``value``; record a span over it when ``label`` is given."""
        start = self._len
        self.add(value)
        if label:
            self.spans.append({"start": start, "end": self._len, "label": label})

    def render(self, template: str, slots: Slots, pattern: re.Pattern[str] = PROSE_SLOT) -> None:
        """Append ``template`` with each placeholder replaced by its (value, label) slot."""
        pos = 0
        for match in pattern.finditer(template):
            self.add(template[pos : match.start()])
            value, label = slots[match.group(1)]
            self.ent(value, label)
            pos = match.end()
        self.add(template[pos:])

    @property
    def text(self) -> str:
        """The text built so far."""
        return "".join(self._parts)


def placeholders(template: str, pattern: re.Pattern[str] = PROSE_SLOT) -> list[str]:
    """Placeholder names used by ``template``."""
    return pattern.findall(template)


def expand_optional(rng: random.Random, template: str, keep: float = 0.65) -> str:
    """Drop each line marked with ``?|`` with probability ``1 - keep`` (marker removed otherwise)."""
    out = []
    for line in template.split("\n"):
        if line.startswith(OPTIONAL_LINE):
            if rng.random() < keep:
                out.append(line[len(OPTIONAL_LINE) :])
        else:
            out.append(line)
    return "\n".join(out)


class Picker:
    """Chooses templates whose placeholders are available, without repeating one inside a record."""

    def __init__(self, rng: random.Random, slots: Slots) -> None:
        self.rng = rng
        self.slots = slots
        self.used: list[str] = []

    def __call__(self, pool: Sequence[str], prefer_private: float = 0.0) -> str:
        options = [t for t in pool if t not in self.used and all(p in self.slots for p in placeholders(t))]
        if not options:
            options = [t for t in pool if all(p in self.slots for p in placeholders(t))]
        if prefer_private and self.rng.random() < prefer_private:
            private = [t for t in options if placeholders(t)]
            options = private or options
        choice = self.rng.choice(options)
        self.used.append(choice)
        return choice


@dataclass(frozen=True)
class CodeTemplate:
    """A source/config file template with ``{{slot}}`` placeholders (``?|`` marks optional lines)."""

    path: str
    language: str
    body: str
    extended: bool = False


def tpl(path: str, language: str, body: str, extended: bool = False) -> CodeTemplate:
    """Build a template, dropping the leading newline of a triple-quoted body."""
    return CodeTemplate(path, language, body.lstrip("\n"), extended)
