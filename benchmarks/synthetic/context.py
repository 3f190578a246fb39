"""The seeded state of one data set (its RNG and Faker instances) and the draws that keep values fresh."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TypeVar

from faker import Faker

V = TypeVar("V")

LOCALE_WEIGHTS = [("en_US", 62), ("en_GB", 13), ("de_DE", 10), ("fr_FR", 9), ("es_ES", 6)]


@dataclass
class Ctx:
    """Seeded state of one data set: its RNG, Faker instances, date ranges and forbidden text."""

    name: str
    seed: int
    years: tuple[int, int]
    birth_years: tuple[int, int]
    forbidden: str = ""
    rng: random.Random = field(init=False)
    fakers: dict[str, Faker] = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}/{self.name}")
        self.fakers = {}
        for locale, _ in LOCALE_WEIGHTS:
            fake = Faker(locale)
            fake.seed_instance(self.rng.getrandbits(32))
            self.fakers[locale] = fake

    def fresh(self, values: Sequence[str]) -> bool:
        """True when none of ``values`` occurs in the forbidden text (another data set)."""
        return not any(v and v in self.forbidden for v in values)

    def locale(self) -> str:
        """A locale drawn with the data set's weights."""
        return self.rng.choices([loc for loc, _ in LOCALE_WEIGHTS], [w for _, w in LOCALE_WEIGHTS])[0]

    def day(self, birth: bool = False) -> date:
        """A date in the data set's year range (or birth-year range)."""
        lo, hi = self.birth_years if birth else self.years
        start = date(lo, 1, 1)
        return start + timedelta(days=self.rng.randrange((date(hi, 12, 31) - start).days + 1))


def retry(draw: Callable[[], V], ok: Callable[[V], bool], what: str, attempts: int = 400) -> V:
    """Call ``draw`` until ``ok`` accepts the result (deterministic given the RNG state)."""
    for _ in range(attempts):
        value = draw()
        if ok(value):
            return value
    raise RuntimeError(f"could not draw an acceptable {what} in {attempts} attempts")


def fresh_value(ctx: Ctx, draw: Callable[[], str], what: str) -> str:
    """Draw a value that does not occur in the forbidden text."""
    return retry(draw, lambda v: ctx.fresh([v]), what)
