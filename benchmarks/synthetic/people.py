"""Fake people (customers, patients, employees, committers) and every variant of their identifiers."""

from __future__ import annotations

from dataclasses import dataclass

from faker import Faker

from benchmarks.synthetic.context import Ctx, fresh_value, retry
from benchmarks.synthetic.text import Slots
from benchmarks.synthetic.values import ascii_slug, us_phone
from curation.core.spans import (
    EMAIL_ADDRESS,
    LOCATION,
    PERSON,
    PHONE_NUMBER,
    STREET_ADDRESS,
)

TITLES = {
    "en_US": (("Ms.", "Mrs.", "Dr."), ("Mr.", "Dr.")),
    "en_GB": (("Ms", "Mrs", "Miss"), ("Mr",)),
    "de_DE": (("Frau",), ("Herr",)),
    "fr_FR": (("Mme",), ("M.",)),
    "es_ES": (("Sra.",), ("Sr.",)),
}


@dataclass
class Person:
    """A fake person with every variant of their identifiers the templates may mention."""

    locale: str
    first: str
    last: str
    title: str
    email: str
    phone: str
    username: str
    address: str
    city: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    def labeled_values(self) -> list[str]:
        return [self.first, self.last, self.full, self.email, self.phone, self.username, self.address, self.city]


def address_for(fake: Faker, locale: str) -> tuple[str, str]:
    """(one-line street address, city) for ``locale``."""
    street = " ".join(fake.street_address().replace("\n", ", ").split())
    city = fake.city()
    if locale == "en_US":
        return f"{street}, {city}, {fake.state_abbr()} {fake.zipcode()}", city
    if locale == "en_GB":
        return f"{street}, {city} {fake.postcode()}", city
    return f"{street}, {fake.postcode()} {city}", city


def _draw_person(ctx: Ctx, locale: str | None) -> Person:
    rng = ctx.rng
    loc = locale or ctx.locale()
    fake = ctx.fakers[loc]
    female = rng.random() < 0.5
    first = fake.first_name_female() if female else fake.first_name_male()
    last = fake.last_name()
    title = rng.choice(TITLES[loc][0 if female else 1])
    f_slug, l_slug = ascii_slug(first), ascii_slug(last)
    local = rng.choice(
        [
            f"{f_slug}.{l_slug}",
            f"{f_slug[0]}{l_slug}",
            f"{f_slug}_{l_slug}",
            f"{f_slug}{rng.randint(1, 99)}",
            f"{f_slug}.{l_slug[0]}",
            f"{l_slug}.{f_slug}",
            f"{f_slug}{l_slug}{rng.randint(70, 99)}",
        ]
    )
    domain = fake.free_email_domain() if rng.random() < 0.7 else fake.domain_name()
    username = rng.choice(
        [
            f"{f_slug[0]}{l_slug}",
            f"{f_slug}{l_slug[:1]}{rng.randint(1, 999)}",
            fake.user_name(),
            f"{f_slug}_{l_slug}",
            f"{l_slug}{f_slug[:2]}",
        ]
    )
    phone = us_phone(rng) if loc == "en_US" else fake.phone_number()
    address, city = address_for(fake, loc)
    return Person(loc, first, last, title, f"{local}@{domain}", phone, username, address, city)


def person_slots(person: Person) -> Slots:
    """The slots every record type fills from its main person (value, label)."""
    return {
        "name": (person.full, PERSON),
        "first": (person.first, PERSON),
        "last": (person.last, PERSON),
        "title": (person.title, None),
        "email": (person.email, EMAIL_ADDRESS),
        "phone": (person.phone, PHONE_NUMBER),
        "address": (person.address, STREET_ADDRESS),
        "city": (person.city, LOCATION),
    }


def make_person(ctx: Ctx, locale: str | None = None) -> Person:
    """A person whose names/contacts are all absent from the forbidden text and long enough to be safe."""
    return retry(
        lambda: _draw_person(ctx, locale),
        lambda p: len(p.first) >= 3 and len(p.last) >= 3 and ctx.fresh(p.labeled_values()),
        "person",
    )


def first_name(ctx: Ctx) -> str:
    """A first name (mostly en_US) absent from the forbidden text."""
    fake = ctx.fakers["en_US" if ctx.rng.random() < 0.75 else ctx.locale()]
    return fresh_value(ctx, lambda: fake.first_name(), "first name")


def full_name(ctx: Ctx) -> str:
    """A full name from a random locale, absent from the forbidden text."""
    fake = ctx.fakers[ctx.locale()]
    return fresh_value(ctx, lambda: f"{fake.first_name()} {fake.last_name()}", "full name")
