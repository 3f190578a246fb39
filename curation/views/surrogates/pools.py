"""The fictional name lists surrogates are drawn from (Faker's person lists), and towns and companies built
from them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache

# Faker locales whose person lists give the surrogate name pool. en_US alone (1,000 surnames, ~700 given
# names) ran dry at 2,000 generated documents: a batch's originals covered so much of it that 27% of the
# people and 45% of the organizations fell back to typed tags (measured). Latin-script, ASCII-shaped names only.
NAME_POOL_LOCALES = (
    "en_US", "en_GB", "en_IE", "en_NZ", "de_DE", "de_AT", "fr_FR", "fr_CA", "es_ES", "es_MX", "it_IT",
    "nl_NL", "sv_SE", "da_DK", "no_NO", "fi_FI", "pt_PT", "pt_BR", "cs_CZ",
)  # fmt: skip
_POOL_NAME_RE = re.compile(r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?")
# a language's own pool (curation.core.languages.Language.name_locales) keeps its accented names: José, Núñez
_ACCENTED_NAME_RE = re.compile(r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:[-'][A-ZÀ-ÖØ-Þ]?[a-zß-öø-ÿ]+)?")


@dataclass(frozen=True, repr=False)
class NamePool:
    """Sorted, de-duplicated name lists to draw surrogates from (uniformly, with an HMAC-seeded RNG)."""

    male: tuple[str, ...]
    female: tuple[str, ...]
    given: tuple[str, ...]  # both, for a person of unknown gender
    last: tuple[str, ...]

    def __repr__(self) -> str:
        return f"NamePool(given={len(self.given)}, last={len(self.last)})"


@cache
def name_pool(locales: tuple[str, ...] = ()) -> NamePool:
    """The pool of ``locales`` (a language's own, accented names kept), or of NAME_POOL_LOCALES for ()."""
    import importlib

    male: set[str] = set()
    female: set[str] = set()
    last: set[str] = set()
    shape = _ACCENTED_NAME_RE if locales else _POOL_NAME_RE
    for locale in locales or NAME_POOL_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for target, attr in ((male, "first_names_male"), (female, "first_names_female"), (last, "last_names")):
            target.update(n for n in getattr(provider, attr, ()) if shape.fullmatch(n))
    both = male & female  # a name listed as both says nothing about gender
    return NamePool(
        tuple(sorted(male - both)), tuple(sorted(female - both)), tuple(sorted(male | female)), tuple(sorted(last))
    )


def _city(rng: random.Random, pool: NamePool | None = None) -> str:
    """A fictional town in the en_US Faker formats ("Port Gnoddeton", "Hedinburgh"), from the name pool."""
    from faker.providers.address.en_US import Provider

    pool = pool or name_pool()
    prefix, suffix = rng.choice(Provider.city_prefixes), rng.choice(Provider.city_suffixes)
    shape = rng.randrange(4)
    if shape == 0:
        return f"{prefix} {rng.choice(pool.given)}{suffix}"
    if shape == 1:
        return f"{prefix} {rng.choice(pool.given)}"
    return f"{rng.choice(pool.given if shape == 2 else pool.last)}{suffix}"


def _company(rng: random.Random, pool: NamePool | None = None) -> str:
    """A company name in the en_US Faker formats ("Maspero LLC", "Bader-Inglis"), from the name pool."""
    from faker.providers.company.en_US import Provider

    last = (pool or name_pool()).last
    shape = rng.randrange(3)
    if shape == 0:
        return f"{rng.choice(last)} {rng.choice(Provider.company_suffixes)}"
    if shape == 1:
        return f"{rng.choice(last)}-{rng.choice(last)}"
    return f"{rng.choice(last)}, {rng.choice(last)} and {rng.choice(last)}"


@cache
def _first_name_genders() -> dict[str, str | None]:
    """Casefolded first name -> 'male' / 'female' / None (in both lists), from Faker en_US."""
    from faker.providers.person.en_US import Provider

    male = {n.casefold() for n in Provider.first_names_male}
    female = {n.casefold() for n in Provider.first_names_female}
    out: dict[str, str | None] = {n: "male" for n in male - female}
    out.update({n: "female" for n in female - male})
    out.update({n: None for n in male & female})
    return out
