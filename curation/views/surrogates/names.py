"""Person mentions: parsed into title / given / middle / surname / suffix, and rebuilt with drawn names
(title, order, initials, case and possessive kept).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from curation.core.honorifics import TITLE_GENDER, titles_pattern
from curation.views.surrogates.casing import _match_case

_TITLE_RE = re.compile(r"^((?:(?:" + titles_pattern() + r")\.?\s+)+)", re.IGNORECASE)
_SUFFIX_RE = re.compile(r"(,?\s+(?:jr|sr|ii|iii|iv|phd|md)\.?)$", re.IGNORECASE)
_POSSESSIVE_RE = re.compile(r"['\u2019]s?$")
_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "la", "le", "bin", "al", "st."}
)
_NAME_TOKEN_RE = re.compile(r"[^\W\d_][\w'\u2019.-]*")


@dataclass(frozen=True)
class NameMention:
    """A parsed person mention; original tokens are kept for casing only and never shown in reprs."""

    title: str = ""
    first: str | None = None
    middle: tuple[str, ...] = ()
    last: str | None = None
    suffix: str = ""
    comma: bool = False
    possessive: str = ""
    gender: str | None = None

    def __repr__(self) -> str:
        return "NameMention(<redacted>)"

    @property
    def first_key(self) -> str | None:
        return _name_key(self.first)

    @property
    def last_key(self) -> str | None:
        return _name_key(self.last)

    @property
    def initial(self) -> bool:
        return self.first is not None and len(self.first.rstrip(".")) == 1


def _name_key(token: str | None) -> str | None:
    return None if token is None else token.rstrip(".").casefold()


def parse_name(value: str) -> NameMention | None:
    """Split a person mention into title / first / middle / last / suffix, or None if it is no name."""
    text, possessive = value.strip(), ""
    match = _POSSESSIVE_RE.search(text)
    if match and match.start() > 0:
        text, possessive = text[: match.start()], match.group()
    match = _TITLE_RE.match(text)
    title = match.group(1) if match else ""
    text = text[len(title) :]
    match = _SUFFIX_RE.search(text)
    suffix = match.group(1) if match else ""
    text = text[: len(text) - len(suffix)].strip()
    comma = "," in text
    if comma:
        last_part, first_part = text.split(",", 1)
        tokens = first_part.split() + last_part.split()
        if len(last_part.split()) != 1 or not first_part.split():
            return None
    else:
        tokens = text.split()
    if not tokens or not all(_NAME_TOKEN_RE.fullmatch(t) for t in tokens):
        return None
    gender = None
    for word in re.findall(r"[^\W\d_]+", title.casefold()):
        gender = gender or TITLE_GENDER.get(word)
    base = NameMention(title=title, suffix=suffix, comma=comma, possessive=possessive, gender=gender)
    if len(tokens) == 1:
        return replace(base, last=tokens[0]) if title else replace(base, first=tokens[0])
    first, *middle, last = tokens
    while middle and middle[-1].casefold() in _PARTICLES:
        last = f"{middle.pop()} {last}"
    return replace(base, first=first, middle=tuple(middle), last=last)


def _same_roles(mention: NameMention | None, canonical: NameMention | None) -> NameMention | None:
    """``mention`` with the name roles of ``canonical``, another spelling of the same normalized value:
    a lone "Whitfield" read as the surname that "Ms. Whitfield" made it (or as the given name)."""
    if mention is None:
        return canonical
    if canonical is None:
        return mention
    if mention.first is not None and mention.last is None and canonical.first is None:
        return replace(mention, first=None, last=mention.first)
    if mention.last is not None and mention.first is None and canonical.last is None:
        return replace(mention, first=mention.last, last=None)
    return mention


def _name_token(original: str, drawn: str) -> str:
    """``drawn`` shaped like ``original``: an initial (with its dot) stays an initial; case kept."""
    if len(original.rstrip(".")) == 1:
        drawn = drawn[0] + ("." if original.endswith(".") else "")
    return _match_case(original, drawn)


def render_name(mention: NameMention, first: str, last: str, middles: Sequence[str]) -> str:
    """Rebuild a mention with surrogate names, keeping title, order, initials, case and suffixes."""
    out_first = _name_token(mention.first, first) if mention.first is not None else None
    out_middle = [_name_token(orig, drawn) for orig, drawn in zip(mention.middle, middles, strict=True)]
    out_last = _match_case(mention.last, last) if mention.last is not None else None
    if mention.comma:
        core = f"{out_last}, {' '.join(x for x in (out_first, *out_middle) if x)}"
    else:
        core = " ".join(x for x in (out_first, *out_middle, out_last) if x)
    return f"{mention.title}{core}{mention.suffix}{mention.possessive}"
