"""One operator per convention style, behind a registry keyed by the style's name (as Presidio's anonymizer
has one operator class per operator name): the engine looks a rule's style up here instead of walking an
if-chain, and a new style is one function plus one registry entry (``tests/test_surrogates.py`` checks the
registry covers every style the convention accepts).

An operator gets the engine (the :class:`OperatorEngine` protocol: its keyed draws and per-scope state),
the scope key, the label's rule, the label and the original value, and returns (replacement text, style
actually applied): a style that cannot produce a safe replacement falls back to the typed tag and says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from curation.core import spans as S
from curation.views.convention import STYLES, Rule
from curation.views.surrogates.addresses import generalize_address
from curation.views.surrogates.dates import shift_dates
from curation.views.surrogates.formats import age_band, mask_keep_last
from curation.views.surrogates.model import NoFreshSurrogate
from curation.views.vault import normalize_value


class OperatorEngine(Protocol):
    """What an operator may ask of the engine (:class:`curation.views.surrogates.engine.SurrogateEngine`):
    its keyed, scope-consistent draws and the check against the batch's originals."""

    def indexed_tag(self, scope_key: str, label: str, value: str) -> str: ...

    day_first_dates: bool  # the batch language writes numeric dates day first

    def scope_date_offset(self, scope_key: str, values: Sequence[str] = ()) -> int: ...

    def surrogate_value(self, scope_key: str, label: str, value: str) -> str | None: ...

    def collides(self, label: str, candidate: str) -> bool: ...


Operator = Callable[[OperatorEngine, str, Rule, str, str], tuple[str, str]]


def typed_tag(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    return f"[{label}]", "typed_tag"


def delete(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    return "", "delete"


def indexed_tag(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    """``[PERSON_2]``: one number per identity within the scope."""
    return engine.indexed_tag(scope_key, label, value), "indexed_tag"


def keep_last(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    """Every character masked but the last ``keep_last`` (cards, accounts)."""
    return mask_keep_last(value, rule.keep_last or 0), "mask_keep_last"


def generalize(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    """A coarser value: an address or place to its region, a date to its year, an age to its five-year
    band; else the typed tag."""
    if label == S.AGE:
        band = age_band(value)
        return (band if band is not None and band != value else f"[{label}]"), "generalize"
    if label in (S.STREET_ADDRESS, S.LOCATION):
        return generalize_address(value), "generalize"
    if label == S.DATE_TIME:  # the year alone
        year = re.search(r"(?<!\d)(?:19|20)\d{2}(?!\d)", value)
        return (year.group(0) if year else f"[{label}]"), "generalize"
    return f"[{label}]", "generalize"


def date_shift(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    """Every date of the scope moved by one keyed offset (intervals kept); unshiftable -> typed tag."""
    shifted = shift_dates(value, engine.scope_date_offset(scope_key, [value]), engine.day_first_dates)
    if shifted is None or _folded(shifted) == _folded(value):
        return f"[{label}]", "typed_tag"
    if normalize_value(label, shifted) == normalize_value(label, value):
        return f"[{label}]", "typed_tag"
    return shifted, "date_shift"  # may equal another original date: intervals win


def surrogate(engine: OperatorEngine, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
    """A fresh fictional value of the label's format (a date: shifted); typed tag when none is safe."""
    if label == S.DATE_TIME:
        return date_shift(engine, scope_key, rule, label, value)
    try:
        text = engine.surrogate_value(scope_key, label, value)
    except NoFreshSurrogate:  # measured: 2,000 generated documents drew their people from the same name lists
        return f"[{label}]", "typed_tag"
    # A person's title and possessive are the original's own ("Mrs. Jones" -> "Mrs. Moses"): only the
    # drawn name can collide.
    drawn = normalize_value(label, text) if text is not None and label == S.PERSON else text
    if drawn is None or engine.collides(label, drawn):  # e.g. a lone initial that drew its own letter
        return f"[{label}]", "typed_tag"
    return text, "surrogate"


OPERATORS: dict[str, Operator] = {
    "surrogate": surrogate,
    "typed_tag": typed_tag,
    "indexed_tag": indexed_tag,
    "mask_keep_last": keep_last,
    "delete": delete,
    "generalize": generalize,
    "date_shift": date_shift,
}
assert set(OPERATORS) == set(STYLES), "every convention style needs an operator"


def _folded(text: str) -> str:
    """Plain comparison form: casefolded, whitespace collapsed."""
    return " ".join(text.casefold().split())
