"""Rules that only make sense in one language (``Rule.languages``): Spanish identifiers, ages, postal codes.

Each is a convention of the language, not of one corpus: a DNI/NIE carries a check letter (number mod 23),
Spanish gives an age as "70 años" / "18 meses", an address's postal code follows "CP" / "C.P." /
"código postal", and the identifiers of Spanish health records go by their usual names (NHC, the "número
de historia clínica"; NASS/NUSS, the social security number; CIP, the health card; "nº de colegiado", a
doctor's licence).
"""

from __future__ import annotations

from collections.abc import Iterator

from curation.core.spans import AGE, ID_NUMBER, LOCATION, Span
from curation.detect.base import _TIER_PATTERN, _TIER_VALIDATED, Rule, _c
from curation.detect.validators import is_dni

SPANISH = frozenset({"es"})

_NUMBER_WORDS = (
    "un|una|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|trece|catorce|quince|dieciséis"
    "|diecisiete|dieciocho|diecinueve|veinte|treinta|cuarenta|cincuenta|sesenta|setenta|ochenta|noventa"
)


class _SpanishAgeRule(Rule):
    """The number and its unit ("70 años"), when the number is a plausible age."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            number = m.group("n")
            if number.isdigit() and not 0 < int(number) < 125:
                continue
            yield Span(m.start("v"), m.end("v"), self.label, self.score, f"pattern:{self.name}")


LANGUAGE_RULES: tuple[Rule, ...] = (
    Rule(
        "es_dni",
        ID_NUMBER,
        _c(r"(?<![\w.-])(?P<v>[XYZxyz]?\d{1,2}\.?\d{3}\.?\d{3}[ -]?[A-Za-z])(?![\w-])"),
        0.9,
        _TIER_VALIDATED,
        is_dni,
        languages=SPANISH,
    ),
    Rule(
        "es_labeled_id",
        ID_NUMBER,
        _c(
            r"(?i)\b(?:NHC|N\.H\.C\.|NASS|NUSS|CIPA?|DNI|NIE|NIF|pasaporte|historia\s+cl[ií]nica|episodio"
            r"|n(?:[º°o]|[uú]m(?:ero)?)\.?\s*(?:de\s+)?(?:col(?:egiad[oa])?|historia(?:\s+cl[ií]nica)?"
            r"|afiliaci[oó]n|(?:la\s+)?seguridad\s+social|SS|tarjeta(?:\s+sanitaria)?|paciente|episodio)\.?)"
            r"[ \t]*[:.#]?[ \t]*(?P<v>(?:[A-Za-z]{1,4}-?)?\d[\d./-]*(?:[ ]\d[\d./-]*){0,4}(?:[ -]?[A-Z](?![\w]))?)"
            r"(?![\w])"
        ),
        0.7,
        _TIER_PATTERN,
        prose_only=True,
        languages=SPANISH,
    ),
    _SpanishAgeRule(
        "es_age",
        AGE,
        _c(rf"(?i)(?<![\w.,])(?P<v>(?P<n>\d{{1,3}}|{_NUMBER_WORDS})[ \t]{{0,2}}(?:años|año|meses|mes|días)(?![\w]))"),
        0.7,
        _TIER_PATTERN,
        prose_only=True,
        languages=SPANISH,
    ),
    Rule(
        "es_postal_code",
        LOCATION,
        _c(r"(?i)\b(?:C\.\s?P\.|CP|c[oó]digo\s+postal)[ \t]*[:.]?[ \t]*(?P<v>(?:0[1-9]|[1-4]\d|5[0-2])\d{3})(?!\d)"),
        0.8,
        _TIER_PATTERN,
        prose_only=True,
        languages=SPANISH,
    ),
)
