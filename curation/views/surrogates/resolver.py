"""Grouping the person mentions and email / username local parts of one scope into identities, so name
variants and a person's email get agreeing surrogates.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from curation.core import spans as S
from curation.views.surrogates.names import NameMention, _same_roles, parse_name
from curation.views.surrogates.pools import _first_name_genders
from curation.views.vault import normalize_value


class Identity:
    """One person within a scope: the known first/last name keys and a gender cue."""

    __slots__ = ("first", "gender", "key", "last", "names", "number")

    def __init__(self, number: int, first: str | None, last: str | None, gender: str | None) -> None:
        self.number = number
        self.first = first
        self.last = last
        self.gender = gender or _first_name_genders().get(first or "")
        self.key = f"f:{first or ''}|l:{last or ''}"
        self.names: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"Identity(#{self.number})"

    @property
    def full(self) -> bool:
        return self.first is not None and self.last is not None


@dataclass(frozen=True)
class LocalPattern:
    """How an email local part / username is built from a name: kind, separator, trailing digits."""

    kind: str
    sep: str = ""
    digits: int = 0
    upper: bool = False

    def render(self, first: str, last: str, rng: random.Random) -> str:
        f, l_ = re.sub(r"[^a-z]", "", first.casefold()), re.sub(r"[^a-z]", "", last.casefold())
        core = {
            "first_last": f"{f}{self.sep}{l_}",
            "last_first": f"{l_}{self.sep}{f}",
            "initial_last": f"{f[:1]}{self.sep}{l_}",
            "first": f,
            "last": l_,
            "flast": f"{f[:1]}{l_}",
            "firstlast": f"{f}{l_}",
            "firstl": f"{f}{l_[:1]}",
        }[self.kind]
        core += "".join(str(rng.randrange(10)) for _ in range(self.digits))
        return core.upper() if self.upper else core


class IdentityResolver:
    """Groups all PERSON mentions and email/username local parts of one scope into identities.

    Feed everything first (:meth:`feed`), then resolve: full names define identities, then
    ``first.last`` emails, then titled surnames ("Ms. Whitfield"), then the other partial mentions
    ("Dana", "Whitfield") attach to the single identity they fit; ambiguous partials become
    identities of their own. Spellings of one value ("Whitfield", "Ms. Whitfield", "WHITFIELD's":
    one :func:`normalize_value`, one vault HMAC) always share the identity and the name role of the
    first one resolved, so the surrogates of one HMAC agree.
    """

    def __init__(self) -> None:
        self.identities: list[Identity] = []
        self._exact: dict[tuple[str | None, str | None], Identity] = {}
        self._raw: dict[str, Identity] = {}
        self._persons: dict[str, tuple[Identity, NameMention | None]] = {}
        self._by_normalized: dict[str, tuple[Identity, NameMention | None]] = {}
        self._locals: dict[str, tuple[Identity, LocalPattern] | None] = {}

    def __repr__(self) -> str:
        return f"IdentityResolver(identities={len(self.identities)})"

    def feed(self, persons: Iterable[str] = (), emails: Iterable[str] = ()) -> None:
        persons, emails = sorted(set(persons)), sorted(set(emails))
        parsed = [(value, parse_name(value)) for value in persons]
        for value, mention in parsed:
            if mention is not None and mention.first and mention.last and not mention.initial:
                self.person(value)
        for email in emails:
            self.local_part(email.rsplit("@", 1)[0], create=True)
        for value, mention in parsed:  # a title marks a lone token as a surname: the surer reading first
            if mention is not None and mention.first is None:
                self.person(value)
        for value, _ in parsed:
            self.person(value)

    def person(self, value: str) -> tuple[Identity, NameMention | None]:
        """The identity of a PERSON mention (created if no existing one fits)."""
        if value not in self._persons:
            normalized = normalize_value(S.PERSON, value)
            canonical = self._by_normalized.get(normalized)
            if canonical is None:
                resolved = self._resolve_person(value)
                self._by_normalized[normalized] = resolved
            else:
                resolved = canonical[0], _same_roles(parse_name(value), canonical[1])
            self._persons[value] = resolved
        return self._persons[value]

    def _resolve_person(self, value: str) -> tuple[Identity, NameMention | None]:
        mention = parse_name(value)
        if mention is None:  # not name-shaped: one identity per normalized value, never matched
            raw_key = "raw:" + normalize_value(S.PERSON, value)
            if raw_key not in self._raw:
                self._raw[raw_key] = self._new(None, None, None, raw_key)
            return self._raw[raw_key], None
        first, last = mention.first_key, mention.last_key
        if first and last and not mention.initial:
            return self._get_or_new(first, last, mention.gender), mention
        if first and last:  # "D. Whitfield"
            found = self._unique(lambda i: i.last == last and (i.first or "").startswith(first))
            return found or self._get_or_new(None, last, mention.gender), mention
        if first:  # single bare token: a first name, else a surname
            found = self._unique(lambda i: i.first == first)
            if found is None and first not in _first_name_genders():
                found = self._unique(lambda i: i.last == first)
                if found is not None:
                    return self._note(found, mention.gender), replace(mention, first=None, last=mention.first)
            return self._note(found, mention.gender) or self._get_or_new(first, None, mention.gender), mention
        found = self._unique(lambda i: i.last == last)
        return self._note(found, mention.gender) or self._get_or_new(None, last, mention.gender), mention

    def local_part(self, local: str, create: bool = False) -> tuple[Identity, LocalPattern] | None:
        """The identity behind an email local part or username, with the pattern to rebuild it."""
        key = f"{int(create)}:{local.casefold()}"
        if key not in self._locals:
            self._locals[key] = self._resolve_local(local, create)
        return self._locals[key]

    def _resolve_local(self, local: str, create: bool) -> tuple[Identity, LocalPattern] | None:
        core = local.split("+", 1)[0]
        match = re.fullmatch(r"([A-Za-z]+)(?:([._-])([A-Za-z]+))?(\d*)", core)
        if not match:
            return None
        a, sep, b, digits = match.group(1).casefold(), match.group(2) or "", match.group(3), match.group(4)
        upper = core.isupper()
        if b is not None:
            b = b.casefold()
            if len(a) == 1:
                found = self._unique(lambda i: i.last == b and (i.first or "").startswith(a))
                found = found or (self._get_or_new(None, b, None) if create else None)
                return (found, LocalPattern("initial_last", sep, len(digits), upper)) if found else None
            if (a, b) not in self._exact and (b, a) in self._exact:
                return self._exact[(b, a)], LocalPattern("last_first", sep, len(digits), upper)
            found = self._exact.get((a, b)) or (self._get_or_new(a, b, None) if create else None)
            return (found, LocalPattern("first_last", sep, len(digits), upper)) if found else None
        tests: list[tuple[str, Callable[[Identity], bool]]] = [
            ("first", lambda i: i.first == a),
            ("last", lambda i: i.last == a),
            ("flast", lambda i: i.full and (i.first or "")[:1] + (i.last or "") == a),
            ("firstlast", lambda i: i.full and (i.first or "") + (i.last or "") == a),
            ("firstl", lambda i: i.full and (i.first or "") + (i.last or "")[:1] == a),
        ]
        for kind, test in tests:
            found = self._unique(test)
            if found is not None:
                return found, LocalPattern(kind, "", len(digits), upper)
        return None

    def _unique(self, test: Callable[[Identity], bool]) -> Identity | None:
        """The one identity passing ``test`` (full identities first); None if none or ambiguous."""
        for pool in ([i for i in self.identities if i.full], self.identities):
            hits = [i for i in pool if test(i)]
            if len(hits) == 1:
                return hits[0]
            if hits:
                return None
        return None

    def _note(self, identity: Identity | None, gender: str | None) -> Identity | None:
        if identity is not None and identity.gender is None and identity.names is None:
            identity.gender = gender
        return identity

    def _get_or_new(self, first: str | None, last: str | None, gender: str | None) -> Identity:
        found = self._exact.get((first, last))
        return self._note(found, gender) or self._new(first, last, gender)

    def _new(self, first: str | None, last: str | None, gender: str | None, key: str = "") -> Identity:
        identity = Identity(len(self.identities) + 1, first, last, gender)
        self.identities.append(identity)
        if key:
            identity.key = key
        else:
            self._exact[(first, last)] = identity
        return identity
