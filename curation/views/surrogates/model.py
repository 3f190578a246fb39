"""The engine's value types: the scopes that link values, where each span went, and its errors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scope:
    """Ids of the nested scopes a text belongs to; a rule's ``scope`` picks which id links values.

    A missing conversation/account id falls back to the next narrower one (never wider), so
    leaving it out can only make linking stricter.
    """

    document: str
    conversation: str | None = None
    account: str | None = None

    def key_for(self, level: str) -> str:
        if level == "global":
            return "global"
        chain = {"document": ("document",), "conversation": ("conversation", "document")}
        for name in chain.get(level, ("account", "conversation", "document")):
            value = getattr(self, name)
            if value:
                return f"{name}:{value}"
        raise SurrogateError("scope has no document id")


ScopeLike = str | Scope


@dataclass(frozen=True, slots=True)
class Replacement:
    """Where one span went: original offsets, offsets in the rewritten text, label and style used."""

    start: int
    end: int
    new_start: int
    new_end: int
    label: str
    style: str


@dataclass(frozen=True, slots=True)
class RewriteResult:
    text: str
    replacements: list[Replacement]


class SurrogateError(ValueError):
    """A span or value that cannot be rewritten; messages name labels and offsets, never values."""


class NoFreshSurrogate(SurrogateError):
    """Every draw collided with an original or an earlier surrogate (a batch whose originals cover most of
    the name lists); the value falls back to its typed tag, as for every other label."""
