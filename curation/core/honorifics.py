"""Honorifics: the words before a name that are part of how a person is named and say (or hint at) their
gender. One list for what masking takes in with a name, what a surrogate keeps of the original's form and
what the vault strips before it hashes a name ("Dra. Ruiz" and "Ruiz" are one person)."""

from __future__ import annotations

import re
from collections.abc import Iterable

TITLE_GENDER: dict[str, str | None] = {
    "mr": "male",
    "sir": "male",
    "mrs": "female",
    "ms": "female",
    "miss": "female",
    "madam": "female",
    "mx": None,
    "dr": None,
    "prof": None,
    # Spanish ("Don" is left out: in English it is a given name, and a surrogate must not keep it)
    "sr": "male",
    "señor": "male",
    "sra": "female",
    "srta": "female",
    "señora": "female",
    "señorita": "female",
    "doña": "female",
    "dra": "female",
}


def titles_pattern(titles: Iterable[str] = TITLE_GENDER) -> str:
    """A regex alternation of ``titles``, longest first (so "señora" is not read as "señor" + "a")."""
    return "|".join(re.escape(t) for t in sorted(titles, key=len, reverse=True))
