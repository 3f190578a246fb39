"""Dates: a constant per-scope day shift, re-emitted in the original written format."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence

from curation.views.surrogates.casing import _match_case

DAYS_PER_MONTH = 365.25 / 12
_MONTHS = [m.casefold() for m in calendar.month_name[1:]]
_WEEKDAYS = [d.casefold() for d in calendar.day_name]
# Spanish month names (the dates of a Spanish batch: "3 de marzo de 2016"), written back in Spanish
_SPANISH_MONTHS = "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre".split()
_MON = (
    r"\b(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    + "|".join(_SPANISH_MONTHS)
    + r"|setiembre)(?![^\W\d_])\.?"
)
_WD = (
    r"(?:\b(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?"
    r"|fri|sat|sun)\.?,?\s+)?"
)
_ORD = r"(?P<ord>st|nd|rd|th)?"
_DATE_PATTERNS = [
    ("ymd", _WD + r"(?<!\d)(?P<y>\d{4})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?!\d)"),
    ("num", _WD + r"(?<!\d)(?P<a>\d{1,2})(?P<s>[-/.])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?!\d)"),
    ("mdy", _WD + _MON + r"\s+(?P<d>\d{1,2})" + _ORD + r"(?!\d)(?:,?\s+(?P<y>\d{4})(?!\d))?"),
    (
        "dmy",
        _WD
        + r"(?:the\s+)?(?P<d>\d{1,2})"
        + _ORD
        + r"(?:\s+of|\s+de)?\s+"
        + _MON
        + r"(?:(?:,?|\s+de)\s+(?P<y>\d{4})(?!\d))?",
    ),
    ("my", _MON + r"(?:,?|\s+de)\s+(?P<y>\d{4})(?!\d)"),
    ("y", r"(?<!\d)(?P<y>(?:19|20)\d{2})(?!\d)"),
]
_DATE_RES = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _DATE_PATTERNS]


def _month_index(text: str) -> int:
    word = text.casefold().rstrip(".")
    if word in _SPANISH_MONTHS or word == "setiembre":
        return 9 if word == "setiembre" else _SPANISH_MONTHS.index(word) + 1
    return next(i for i, m in enumerate(_MONTHS) if m.startswith(word[:3])) + 1


def _month_name(template: str, month: int) -> str:
    """The shifted month in the template's language and style."""
    if template.casefold().rstrip(".") in (*_SPANISH_MONTHS, "setiembre"):
        return _match_case(template, _SPANISH_MONTHS[month - 1])
    return _styled(template, calendar.month_name[month], _MONTHS)


def _styled(template: str, full: str, names: Sequence[str]) -> str:
    """A month/weekday name written like the template: full or 3-letter abbreviation, same case."""
    is_full = template.rstrip(".").casefold() in names
    return _match_case(template, full if is_full else full[:3])


def _read_date(kind: str, m: re.Match[str], day_first_default: bool = False) -> tuple[dt.date, bool] | None:
    """The date a match denotes (placeholder year 2000 / day 15 / July 2 where absent) and day-first
    (``day_first_default``: the language writes 03/04 as 3 April)."""
    g = m.groupdict()
    year = int(g["y"]) if g.get("y") else 2000
    if g.get("y") and len(g["y"]) == 2:
        year += 2000 if year < 70 else 1900
    day_first = False
    try:
        if kind == "ymd":
            return dt.date(year, int(g["m"]), int(g["d"])), False
        if kind == "num":
            a, b = int(g["a"]), int(g["b"])
            day_first = g["s"] == "." or a > 12 or (day_first_default and b <= 12)
            return (dt.date(year, b, a) if day_first else dt.date(year, a, b)), day_first
        if kind in ("mdy", "dmy"):
            return dt.date(year, _month_index(g["mon"]), int(g["d"])), False
        if kind == "my":
            return dt.date(year, _month_index(g["mon"]), 15), False
        return dt.date(year, 7, 2), False
    except ValueError:
        return None


def _write_date(kind: str, m: re.Match[str], new: dt.date, day_first: bool) -> str:
    """The matched text with each date field swapped for the shifted date's, in the same style."""
    g = m.groupdict()
    fields: dict[str, str] = {}
    numbers = [g[n] for n in ("m", "d", "a", "b") if g.get(n)]
    padded = any(n.startswith("0") for n in numbers) or (kind == "ymd" and all(len(n) == 2 for n in numbers))

    def num(value: int) -> str:
        return f"{value:02d}" if padded else str(value)

    if g.get("y"):
        fields["y"] = f"{new.year % 100:02d}" if len(g["y"]) == 2 else f"{new.year:04d}"
    if kind == "num":
        fields["a"], fields["b"] = (num(new.day), num(new.month)) if day_first else (num(new.month), num(new.day))
    if g.get("m"):
        fields["m"] = num(new.month)
    if g.get("d"):
        fields["d"] = num(new.day)
    if g.get("mon"):
        fields["mon"] = _month_name(g["mon"], new.month)
    if g.get("ord"):
        suffix = "th" if 10 <= new.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(new.day % 10, "th")
        fields["ord"] = _match_case(g["ord"], suffix)
    if g.get("wd"):
        fields["wd"] = _styled(g["wd"], calendar.day_name[new.weekday()], _WEEKDAYS)
    text, base = m.group(0), m.start()
    for name in sorted(fields, key=lambda n: m.start(n), reverse=True):
        a, b = m.start(name) - base, m.end(name) - base
        text = text[:a] + fields[name] + text[b:]
    return text


def _sign(days: int) -> int:
    return (days > 0) - (days < 0)


def _shift_date(kind: str, date: dt.date, days: int) -> dt.date:
    """One date moved by the scope offset, at the precision it is written with.

    A bare year moves by sign(days) * max(1, round(|days| / 365)) years and a month-year by
    sign(days) * max(1, round(|days| / 30.44)) months, so a non-zero offset always changes them
    (a day shift applied mid-year / mid-month usually would not) and all values of one precision
    in a scope still move by the same amount (their intervals are kept). Raises ValueError or
    OverflowError when the result leaves the calendar.
    """
    if kind == "y":
        return date.replace(year=date.year + _sign(days) * max(1, round(abs(days) / 365)))
    if kind == "my":
        total = date.year * 12 + date.month - 1 + _sign(days) * max(1, round(abs(days) / DAYS_PER_MONTH))
        return dt.date(total // 12, total % 12 + 1, 15)
    return date + dt.timedelta(days=days)


def shift_dates(value: str, days: int, day_first: bool = False) -> str | None:
    """Shift every date written in ``value`` by ``days``; None when no (valid) date is found.

    Day-precision dates move by ``days``; bare years and month-years by whole years / months
    (see :func:`_shift_date`). With ``days != 0`` no date is ever rendered unchanged: in the
    rare case a day-precision date without a year would read the same (a shift by a whole year),
    it moves on by single days in the shift's direction until it reads differently. ``day_first``: numeric
    dates of the batch's language are day/month (Spanish), unless the numbers say otherwise.
    """
    matches = []
    for priority, (kind, regex) in enumerate(_DATE_RES):
        matches += [(m.start(), priority, kind, m) for m in regex.finditer(value)]
    chosen, end = [], -1
    for start, _, kind, match in sorted(matches, key=lambda t: (t[0], t[1])):
        if start >= end:
            chosen.append((kind, match))
            end = match.end()
    if not chosen:
        return None
    out, cursor = [], 0
    for kind, match in chosen:
        read = _read_date(kind, match, day_first)
        if read is None:
            return None
        try:
            new = _shift_date(kind, read[0], days)
            written = _write_date(kind, match, new, read[1])
            for _ in range(366 if days else 0):
                if written.casefold() != match.group(0).casefold():
                    break
                new += dt.timedelta(days=_sign(days))
                written = _write_date(kind, match, new, read[1])
        except (OverflowError, ValueError):
            return None
        out += [value[cursor : match.start()], written]
        cursor = match.end()
    return "".join(out) + value[cursor:]
