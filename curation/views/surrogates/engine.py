"""The engine: applies the convention label by label with keyed, deterministic, fictional replacements that
never equal an original of the batch, and rewrites whole texts.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from faker import Faker

from curation.core import spans as S
from curation.views.convention import Convention, Rule
from curation.views.surrogates.casing import _match_case
from curation.views.surrogates.dates import shift_dates
from curation.views.surrogates.formats import (
    _lay_digits,
    _shape,
    iban_surrogate,
    id_number_surrogate,
    id_surrogate,
    ip_surrogate,
    phone_surrogate,
    ssn_surrogate,
)
from curation.views.surrogates.model import (
    NoFreshSurrogate,
    Replacement,
    RewriteResult,
    Scope,
    ScopeLike,
    SurrogateError,
)
from curation.views.surrogates.names import render_name
from curation.views.surrogates.nrp import _NRP_RELAX_AFTER, nrp_reading, nrp_surrogate
from curation.views.surrogates.operators import OPERATORS
from curation.views.surrogates.pools import _city, _company, name_pool
from curation.views.surrogates.resolver import Identity, IdentityResolver
from curation.views.vault import VaultRecord, _frame, hmac_value, normalize_value, public_id

# The package's name, as before the split, so log configuration and records keep naming it.
log = logging.getLogger("curation.views.surrogates")

MAX_DRAWS = 200
STRICT_NAME_DRAWS = 32
EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")
DATE_OFFSET_DRAWS = 64
# Labels whose surrogates may not share a whole word (>= 3 letters) with any registered original.
WORD_CHECKED_LABELS = frozenset({S.PERSON, S.LOCATION, S.ORGANIZATION, S.NRP, S.USERNAME})
_WORD_RE = re.compile(r"[^\W\d_]+")


def _words(text: str) -> set[str]:
    """Casefolded alphabetic tokens of at least 3 letters ('whole words' for collision checks)."""
    return {w.casefold() for w in _WORD_RE.findall(text) if len(w) >= 3}


def _folded(text: str) -> str:
    """Plain comparison form: casefolded, whitespace collapsed."""
    return " ".join(text.casefold().split())


_Tags = dict[str, dict[str, int]]


@dataclass(repr=False)
class _ScopeState:
    """Everything the engine remembers about one scope key (holds normalized originals: no repr)."""

    resolver: IdentityResolver = field(default_factory=IdentityResolver)
    used: dict[str, dict[str, str]] = field(default_factory=dict)
    tags: _Tags = field(default_factory=dict)
    audit_tags: _Tags = field(default_factory=dict)
    date_offset: int | None = None

    def __repr__(self) -> str:
        return f"_ScopeState(identities={len(self.resolver.identities)})"


class SurrogateEngine:
    """Applies the redaction convention to spans with keyed, deterministic, fictional replacements.

    Two passes per scope: :meth:`prepare` with every (label, value) of the scope (so name variants
    and emails resolve to one identity), then :meth:`surrogate` / :meth:`apply` to rewrite.
    """

    def __init__(
        self,
        key: bytes,
        convention: Convention,
        key_id: str,
        name_locales: tuple[str, ...] = (),
        day_first_dates: bool = False,
    ) -> None:
        """``name_locales``: Faker locales of the batch language's name pool (() = the multi-locale default);
        ``day_first_dates``: the language writes numeric dates day first (curation.core.languages)."""
        if len(key) < 16:
            raise SurrogateError("HMAC key must be at least 16 bytes")
        self._key = key
        self.name_locales = tuple(name_locales)
        self._pool = name_pool(self.name_locales)
        self.day_first_dates = day_first_dates
        self.convention = convention
        self.key_id = key_id
        self._faker = Faker("en_US")
        self._scopes: dict[str, _ScopeState] = {}
        self._cache: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._records: dict[tuple[str, str, str], str] = {}
        # Every (scope, type, original HMAC, text) this engine wrote, spellings included: one batch's uses.
        self._uses: set[tuple[str, str, str, str, str]] = set()  # (scope, label, HMAC, text, style)
        self._original_values: set[str] = set()
        self._originals: set[str] = set()
        self._original_normalized: dict[str, set[str]] = {}
        self._original_digits: set[str] = set()
        self._original_tokens: set[str] = set()
        self._original_words: set[str] = set()

    def __repr__(self) -> str:
        return f"SurrogateEngine(key_id={self.key_id!r}, scopes={len(self._scopes)}, values={len(self._cache)})"

    # -- scopes, keys, registries ---------------------------------------------------------

    def _rule(self, label: str) -> Rule:
        return self.convention.rule_for(label)

    def scope_key(self, scope_id: ScopeLike, label: str) -> str:
        """The scope string a label's values are linked within (per the rule's scope level)."""
        level = self._rule(label).scope
        if isinstance(scope_id, Scope):
            return scope_id.key_for(level)
        if not isinstance(scope_id, str) or not scope_id:
            raise SurrogateError("scope_id must be a non-empty string or a Scope")
        return "global" if level == "global" else scope_id

    def _state(self, scope_key: str) -> _ScopeState:
        return self._scopes.setdefault(scope_key, _ScopeState())

    def _digest(self, *parts: str) -> bytes:
        return hmac.new(self._key, _frame("surrogate", *parts), hashlib.sha256).digest()

    def register_originals(self, values: Iterable[str]) -> None:
        """Remember originals of the batch so no surrogate (or surrogate name part) equals one.

        Register every original of the batch before rewriting. Afterwards, for every style but
        typed/indexed tags, masks, deletion and generalized placeholders:

        * no surrogate equals a registered original, compared casefolded with whitespace
          collapsed and under :func:`normalize_value` for the surrogate's label (so the vault
          HMAC of a surrogate is never the HMAC of an original); values are registered without
          labels, so every original is compared under the surrogate's label (stricter);
        * no PERSON / LOCATION / ORGANIZATION / NRP / USERNAME surrogate shares a whole word
          (alphabetic token of >= 3 letters, casefolded) with any registered original (again of
          any label); names are redrawn per identity, so name variants and email local parts
          still agree;
        * collisions are redrawn deterministically (an HMAC counter), so the same key, scope,
          value and registered originals give the same surrogate; a typed tag is the fallback
          when no fresh draw is found.

        Dates are the exception: a scope's date offset is redrawn (before the first date of
        the scope is rewritten, from the dates given to :meth:`prepare`) until no shifted date of
        the scope equals a registered original; once a scope's dates have been shifted the offset
        is fixed, and a later shifted date that equals another original date is kept: keeping
        intervals within the scope wins over avoiding that collision. A shifted date never equals
        its own original.
        """
        for value in values:
            text = _folded(value)
            if not text or value in self._original_values:
                continue
            self._original_values.add(value)
            self._originals.add(text)
            for label, normalized in self._original_normalized.items():
                normalized.add(normalize_value(label, value))
            digits = re.sub(r"\D", "", text)
            if len(digits) >= 6:
                self._original_digits.add(digits)
            self._original_tokens.update(t for t in re.split(r"[\W_]+", text) if len(t) >= 2)
            self._original_words.update(_words(text))

    def _normalized_originals(self, label: str) -> set[str]:
        if label not in self._original_normalized:
            self._original_normalized[label] = {normalize_value(label, v) for v in self._original_values}
        return self._original_normalized[label]

    def _equals_original(self, label: str, candidate: str) -> bool:
        """Candidate equals a registered original, plainly or under ``normalize_value(label)``."""
        return _folded(candidate) in self._originals or (
            normalize_value(label, candidate) in self._normalized_originals(label)
        )

    def collides(self, label: str, candidate: str) -> bool:
        """Equal to an original (also by its digits, for >= 6 digits) or, for name-like labels,
        sharing a whole word with one."""
        digits = re.sub(r"\D", "", candidate)
        if self._equals_original(label, candidate) or (len(digits) >= 6 and digits in self._original_digits):
            return True
        return label in WORD_CHECKED_LABELS and bool(_words(candidate) & self._original_words)

    def date_offset_days(self, scope_id: ScopeLike) -> int:
        """The scope's constant date shift in [-180, 180] without 0 (HMAC of the scope).

        The first HMAC draw unless it had to be redrawn because a shifted date of the scope
        would have equalled a registered original (see :meth:`register_originals`).
        """
        scope_key = self.scope_key(scope_id, S.DATE_TIME)
        state = self._scopes.get(scope_key)
        if state is not None and state.date_offset is not None:
            return state.date_offset
        return self._offset_draw(scope_key, 0)

    def _offset_draw(self, scope_key: str, counter: int) -> int:
        parts = (scope_key, "DATE_SHIFT") + ((str(counter),) if counter else ())
        index = int.from_bytes(self._digest(*parts), "big") % 360
        return index - 180 if index < 180 else index - 179

    def scope_date_offset(self, scope_key: str, values: Sequence[str] = ()) -> int:
        """The scope's offset, fixed on first use: the first draw under which no date in
        ``values`` shifts onto a registered original (else the draw with the fewest such)."""
        state = self._state(scope_key)
        if state.date_offset is None:
            best: tuple[int, int] | None = None
            for counter in range(DATE_OFFSET_DRAWS if values else 1):
                offset = self._offset_draw(scope_key, counter)
                clashes = sum(
                    1
                    for value in values
                    if (shifted := shift_dates(value, offset, self.day_first_dates)) is not None
                    and self._equals_original(S.DATE_TIME, shifted)
                )
                if best is None or clashes < best[0]:
                    best = (clashes, offset)
                if not clashes:
                    break
            assert best is not None
            state.date_offset = best[1]
        return state.date_offset

    def _shifts_dates(self, label: str) -> bool:
        style = self._rule(label).style
        return style == "date_shift" or (label == S.DATE_TIME and style == "surrogate")

    def _example_domain(self, scope_key: str, domain: str) -> str:
        host = domain.casefold().removeprefix("www.")
        return EXAMPLE_DOMAINS[self._digest(scope_key, "DOMAIN", host)[0] % len(EXAMPLE_DOMAINS)]

    # -- two-pass API ----------------------------------------------------------------------

    def prepare(self, scope_id: ScopeLike, items: Iterable[tuple[str, str]]) -> None:
        """Feed all (label, value) pairs of a scope before rewriting, so name variants link up."""
        self.prepare_many([(scope_id, items)])

    def prepare_documents(self, documents: Iterable[tuple[str, Iterable[S.Span], ScopeLike]]) -> None:
        """:meth:`prepare` for every (text, spans, scope) of a batch at once, before any is rewritten: a
        conversation's date offset is then drawn against all its dates, not only its first document's,
        and name variants link up across its documents."""
        self.prepare_many(
            (scope_id, [(span.label, span.text_of(text)) for span in self._merged(text, spans)])
            for text, spans, scope_id in documents
        )

    def prepare_many(self, scoped_items: Iterable[tuple[ScopeLike, Iterable[tuple[str, str]]]]) -> None:
        """Feed (label, value) pairs of many scopes; values are grouped by scope key before anything
        (identities, date offsets) is fixed."""
        keyed = [
            (self.scope_key(scope_id, label), label, value)
            for scope_id, items in scoped_items
            for label, value in items
        ]
        self.register_originals(value for _, _, value in keyed)
        persons: dict[str, list[str]] = {}
        emails: dict[str, list[str]] = {}
        dates: dict[str, list[str]] = {}
        for key, label, value in keyed:
            if self._shifts_dates(label):
                dates.setdefault(key, []).append(value)
            if label == S.PERSON:
                persons.setdefault(key, []).append(value)
            elif label == S.EMAIL_ADDRESS and "@" in value:
                emails.setdefault(key, []).append(value.strip())
        for key in sorted(set(persons) | set(emails)):
            self._state(key).resolver.feed(persons.get(key, ()), emails.get(key, ()))
        for key in sorted(dates):
            self.scope_date_offset(key, sorted(set(dates[key])))
        log.debug("prepared %d values in %d scope keys", len(keyed), len(set(persons) | set(emails)))

    def surrogate(self, scope_id: ScopeLike, label: str, value: str) -> str:
        """The replacement text for one original under the convention (deterministic per scope)."""
        return self._replacement(scope_id, label, value)[0]

    def _replacement(self, scope_id: ScopeLike, label: str, value: str) -> tuple[str, str]:
        """(replacement text, style actually applied) for one original value."""
        scope_key = self.scope_key(scope_id, label)
        cache_key = (scope_key, label, value)
        if cache_key not in self._cache:
            self.register_originals([value])
            rule = self._rule(label)
            text, style = self._render(scope_key, rule, label, value)
            self._cache[cache_key] = (text, style)
            value_hmac = hmac_value(self._key, value, label)
            self._records.setdefault((scope_key, label, value_hmac), text)
            self._uses.add((scope_key, label, value_hmac, text, style))
        return self._cache[cache_key]

    def _render(self, scope_key: str, rule: Rule, label: str, value: str) -> tuple[str, str]:
        """The rule's style operator (:mod:`curation.views.surrogates.operators`) applied to one value."""
        return OPERATORS[rule.style](self, scope_key, rule, label, value)

    # -- surrogate style, per label ----------------------------------------------------------

    def surrogate_value(self, scope_key: str, label: str, value: str) -> str | None:
        norm = normalize_value(label, value)
        if label == S.PERSON:
            return self._person(scope_key, value)
        if label == S.EMAIL_ADDRESS:
            return self._email(scope_key, value, norm)
        if label == S.USERNAME:
            return self._username(scope_key, value, norm)
        if label == S.URL:
            return self._fresh(scope_key, label, norm, lambda rng, n: self._url(scope_key, value, rng, n))
        if label == S.NRP:
            return self._nrp(scope_key, value, norm)
        draw = self._drawers().get(label, lambda v, rng: id_surrogate(v, rng))
        return self._fresh(scope_key, label, norm, lambda rng, _: draw(value, rng))

    def _drawers(self) -> dict[str, Callable[[str, random.Random], str | None]]:
        """Per-label generators; TITLE uses the Faker instance seeded by _fresh."""
        fake = self._faker
        return {
            S.PHONE_NUMBER: lambda v, rng: phone_surrogate(v, rng),
            S.US_SSN: lambda v, rng: ssn_surrogate(v, rng),
            S.ID_NUMBER: lambda v, rng: id_number_surrogate(v, rng),
            S.IBAN_CODE: lambda v, rng: iban_surrogate(v, rng),
            S.IP_ADDRESS: lambda v, rng: ip_surrogate(v, rng),
            S.CREDIT_CARD: lambda v, rng: _lay_digits(v, "".join(str(rng.randrange(10)) for _ in v)),
            S.LOCATION: lambda v, rng: _match_case(v, _city(rng, self._pool)),
            S.ORGANIZATION: lambda v, rng: _match_case(v, _company(rng, self._pool)),
            S.TITLE: lambda v, rng: _match_case(v, fake.job()),
        }

    def _fresh(
        self, scope_key: str, label: str, norm: str, draw: Callable[[random.Random, int], str | None]
    ) -> str | None:
        """Draw until the candidate is no original and not taken by another value of the scope.

        None (-> typed tag) when the generator gives up or a tiny surrogate space is exhausted.
        """
        used = self._state(scope_key).used.setdefault(label, {})
        for counter in range(MAX_DRAWS):
            digest = self._digest(scope_key, label, norm, str(counter))
            self._faker.seed_instance(int.from_bytes(digest[:8], "big"))
            candidate = draw(random.Random(int.from_bytes(digest, "big")), counter)
            if candidate is None:
                return None
            if self.collides(label, candidate) or used.get(candidate.casefold(), norm) != norm:
                continue
            used[candidate.casefold()] = norm
            return candidate
        log.warning("no fresh %s surrogate after %d draws; using a typed tag", label, MAX_DRAWS)
        return None

    def _nrp(self, scope_key: str, value: str, norm: str) -> str | None:
        """Another group of the same kind (:func:`nrp_surrogate`), none colliding with an original.

        Forms of one listed group ("Italian", "Italians", "ITALIAN") draw with one seed, so within a
        scope they become forms of one other group ("Norwegian", "Norwegians", "NORWEGIAN").
        """
        group = nrp_reading(value)[2]

        def allowed(candidate: str) -> bool:
            return not self.collides(S.NRP, candidate)

        def draw(rng: random.Random, counter: int) -> str | None:
            return nrp_surrogate(value, rng, allowed, keep_sound=counter < _NRP_RELAX_AFTER)

        return self._fresh(scope_key, S.NRP, f"group:{group}" if group else norm, draw)

    def _url(self, scope_key: str, value: str, rng: random.Random, counter: int) -> str | None:
        """Host -> a reserved example domain (one per original host; a Faker subdomain on collision).

        Path and query keep their shape (character classes, separators, file extension).
        """
        match = re.match(
            r"^(?P<scheme>[A-Za-z][\w+.-]*://)?(?:[^@/\s]*@)?(?P<www>www\d?\.)?(?P<host>[^/:?#\s]+)"
            r"(?P<port>:\d+)?(?P<rest>.*)$",
            value.strip(),
        )
        if not match:
            return None
        domain = self._example_domain(scope_key, match.group("host"))
        if counter:
            domain = f"{self._faker.domain_word()}.{domain}"
        rest = match.group("rest")
        ext = re.search(r"(\.[A-Za-z]{2,4})(?=$|[?#])", rest)
        shaped = _shape(rest, rng)
        if ext:
            shaped = shaped[: ext.start()] + ext.group(1) + shaped[ext.end() :]
        return f"{match.group('scheme') or ''}{match.group('www') or ''}{domain}{match.group('port') or ''}{shaped}"

    # -- people, emails, usernames -----------------------------------------------------------

    def _person(self, scope_key: str, value: str) -> str:
        identity, mention = self._state(scope_key).resolver.person(value)
        first, last = self._identity_names(scope_key, identity)
        if mention is None:
            return f"{first} {last}"
        middles = [self._middle_name(scope_key, identity, token) for token in mention.middle]
        for original, new in ((mention.first, first), (mention.last, last)):
            if original is not None and len(original.rstrip(".")) > 1:
                record_key = (scope_key, S.PERSON, hmac_value(self._key, original, S.PERSON))
                self._records.setdefault(record_key, new)
        return render_name(mention, first, last, middles)

    def _rng(self, *parts: str) -> random.Random:
        return random.Random(int.from_bytes(self._digest(*parts), "big"))

    def _given_name(self, rng: random.Random, gender: str | None) -> str:
        pool = self._pool
        return rng.choice(pool.male if gender == "male" else pool.female if gender == "female" else pool.given)

    def _identity_names(self, scope_key: str, identity: Identity) -> tuple[str, str]:
        """Surrogate (first, last) of an identity: gendered, fresh, and unique within the scope."""
        if identity.names is not None:
            return identity.names
        used = self._state(scope_key).used
        firsts, lasts, fulls = (used.setdefault(k, {}) for k in ("PERSON:first", "PERSON:last", "PERSON:full"))
        me = identity.key
        for counter in range(MAX_DRAWS):
            rng = self._rng(scope_key, "PERSON:identity", identity.key, str(counter))
            first, last = self._given_name(rng, identity.gender), rng.choice(self._pool.last)
            f, l_ = first.casefold(), last.casefold()
            if f == l_ or {f, l_} & self._original_tokens or _words(f"{f} {l_}") & self._original_words:
                continue
            if fulls.get(f"{f} {l_}", me) != me:
                continue
            if counter < STRICT_NAME_DRAWS and (firsts.get(f, me) != me or lasts.get(l_, me) != me):
                continue
            firsts.setdefault(f, me)
            lasts.setdefault(l_, me)
            fulls[f"{f} {l_}"] = me
            identity.names = (first, last)
            return identity.names
        raise NoFreshSurrogate(f"no fresh PERSON surrogate after {MAX_DRAWS} draws")

    def _middle_name(self, scope_key: str, identity: Identity, token: str) -> str:
        for counter in range(MAX_DRAWS):
            rng = self._rng(scope_key, "PERSON:middle", identity.key, token.casefold(), str(counter))
            name = self._given_name(rng, identity.gender)
            if name.casefold() not in self._original_tokens and not _words(name) & self._original_words:
                return name
        raise NoFreshSurrogate(f"no fresh PERSON surrogate after {MAX_DRAWS} draws")

    def _linked_local(self, scope_key: str, local: str, create: bool) -> Callable[[random.Random, int], str]:
        """A drawer for a local part: the owner's surrogate name pattern, else a Faker user name."""
        linked = self._state(scope_key).resolver.local_part(local, create=create)
        if linked is None:
            return lambda rng, n: _match_case(local, self._faker.user_name())
        identity, pattern = linked
        first, last = self._identity_names(scope_key, identity)
        return lambda rng, n: pattern.render(first, last, rng) + (str(n) if n else "")

    def _email(self, scope_key: str, value: str, norm: str) -> str | None:
        local, at, domain = value.strip().rpartition("@")
        if not at or not local or not domain:
            return self._fresh(scope_key, S.EMAIL_ADDRESS, norm, lambda rng, n: id_surrogate(value, rng))
        new_domain = self._example_domain(scope_key, domain)
        draw_local = self._linked_local(scope_key, local, create=True)
        return self._fresh(scope_key, S.EMAIL_ADDRESS, norm, lambda rng, n: f"{draw_local(rng, n)}@{new_domain}")

    def _username(self, scope_key: str, value: str, norm: str) -> str | None:
        at = "@" if value.startswith("@") else ""
        local = value[len(at) :]
        if not local:
            return None
        draw_local = self._linked_local(scope_key, local, create=False)
        return self._fresh(scope_key, S.USERNAME, norm, lambda rng, n: at + draw_local(rng, n))

    # -- tags ----------------------------------------------------------------------------------

    def _tag_key(self, resolver: IdentityResolver, label: str, value: str) -> str:
        """What makes two values 'the same' for an indexed tag: one identity for people."""
        if label == S.PERSON:
            return resolver.person(value)[0].key
        return normalize_value(label, value)

    def _tag_number(self, resolver: IdentityResolver, tags: _Tags, label: str, value: str) -> int:
        """Index of a value among its label's values so far (first seen = 1)."""
        table = tags.setdefault(label, {})
        return table.setdefault(self._tag_key(resolver, label, value), len(table) + 1)

    def indexed_tag(self, scope_key: str, label: str, value: str) -> str:
        state = self._state(scope_key)
        return f"[{label}_{self._tag_number(state.resolver, state.tags, label, value)}]"

    # -- rewriting whole texts -----------------------------------------------------------------

    @staticmethod
    def _merged(text: str, spans: Iterable[S.Span]) -> list[S.Span]:
        spans = list(spans)
        for span in spans:
            if span.end > len(text):
                raise SurrogateError(
                    f"span [{span.start}, {span.end}) {span.label} ends past the text ({len(text)} chars)"
                )
        return S.merge(spans)

    @staticmethod
    def _rewrite(text: str, spans: list[S.Span], render: Callable[[S.Span], tuple[str, str]]) -> RewriteResult:
        """Splice replacements in; offsets of the new text are tracked as we go (same as right-to-left)."""
        out, replacements, cursor, position = [], [], 0, 0
        for span in spans:
            out.append(text[cursor : span.start])
            position += span.start - cursor
            new, style = render(span)
            out.append(new)
            replacements.append(Replacement(span.start, span.end, position, position + len(new), span.label, style))
            position += len(new)
            cursor = span.end
        out.append(text[cursor:])
        return RewriteResult("".join(out), replacements)

    def apply(self, text: str, spans: Iterable[S.Span], scope_id: ScopeLike) -> RewriteResult:
        """Rewrite ``text`` per the convention (overlaps merged first, longest label wins)."""
        merged = self._merged(text, spans)
        self.prepare(scope_id, [(span.label, span.text_of(text)) for span in merged])
        result = self._rewrite(text, merged, lambda s: self._replacement(scope_id, s.label, s.text_of(text)))
        log.debug("rewrote %d spans", len(result.replacements))
        return result

    def audit_copy(self, text: str, spans: Iterable[S.Span], scope_id: ScopeLike | None = None) -> RewriteResult:
        """Indexed tags ([PERSON_1], [EMAIL_ADDRESS_2]) for reviewers: same value -> same index.

        Without ``scope_id`` indices are local to this document; with it they hold across calls.
        """
        merged = self._merged(text, spans)
        local = (IdentityResolver(), {}) if scope_id is None else None
        if local is not None:
            local[0].feed(*([s.text_of(text) for s in merged if s.label == lb] for lb in (S.PERSON, S.EMAIL_ADDRESS)))
        else:
            self.prepare(scope_id, [(span.label, span.text_of(text)) for span in merged])

        def render(span: S.Span) -> tuple[str, str]:
            if local is None:
                state = self._state(self.scope_key(scope_id, span.label))
                resolver, tags = state.resolver, state.audit_tags
            else:
                resolver, tags = local
            number = self._tag_number(resolver, tags, span.label, span.text_of(text))
            return f"[{span.label}_{number}]", "indexed_tag"

        return self._rewrite(text, merged, render)

    def public_id(self, batch_id: str, id_kind: str, original_id: str, prefix: str) -> str:
        """The release's id for a record or scope id (:func:`curation.views.vault.public_id` with this key)."""
        return public_id(self._key, batch_id, id_kind, original_id, prefix)

    def batch_records(self) -> Iterator[VaultRecord]:
        """Every replacement text this engine produced, once per spelling of an original ("Dana",
        "DANA", "Dana's" are separate rows under one HMAC): what a consistency check compares."""
        for scope_key, label, value_hmac, text, style in sorted(self._uses):
            yield VaultRecord(scope_key, label, value_hmac, text, self.key_id, style)

    def records(self) -> Iterator[VaultRecord]:
        """Vault rows for every replacement made: scope, type, keyed HMAC of the original, surrogate."""
        for (scope_key, label, value_hmac), surrogate in self._records.items():
            yield VaultRecord(scope_key, label, value_hmac, surrogate, self.key_id)
