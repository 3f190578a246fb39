"""A simulated user's domain for issue 42: CV-like documents (contact blocks with e-mails, phones and URLs
next to employers, schools, job titles, dates and skills), generated here with a seeded RNG, labeled by
construction, and split into a calibration pool of ``--labels`` documents and a held-out rest.

Targets (labeled): the candidate's and the referees' names (PERSON), e-mail addresses, phone numbers,
personal URLs (profile and portfolio links) and street addresses. Not targets (present, unlabeled, so a
mask on them is collateral): employers and their public websites, universities, job titles, cities, dates
and skills, which the broad rule recognizers (organization cues, dates, titles, locations, URLs) fire on.
Formats vary the way real CVs do (name headers in capitals or as "Surname, Given", corporate and
university mail hosts, a dozen phone and profile-URL spellings), so 40 labeled documents do not show
every format the held-out ones use. Names, hosts and employers
are invented from syllables and word lists here; nothing is taken from the dev sets.

    .venv/bin/python scripts/cv_domain.py --out OUT_DIR [--docs 200] [--labels 40] [--seed 7]

writes OUT_DIR/cv.cal.jsonl and OUT_DIR/cv.test.jsonl (``{"id", "text", "spans", "domain": "cv"}``); then
``curation eval OUT_DIR/cv.test.jsonl --calibrate-on cv=OUT_DIR/cv.cal.jsonl --metrics M.json``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

GIVEN = (
    "Orla Tomas Ines Malik Priya Joren Edda Kasimir Lucia Tobiah Maren Idris Selma Anouk Bastian Noor Ravi Ilse "
    "Hannes Zofia Leandro Mireille Oskar Tamsin Yusuf Greta Emeric Saoirse Dario Annika Florin Ayla Konrad"
).split()
SYLLABLES = "ber dan fel gor hal ket lin mor nast pell quen rad sor tam vel wick yar zen bro cal dre fin".split()
HOSTS = "gmail.com outlook.com hotmail.com yahoo.co.uk proton.me brightmail.net fastpost.org mailbox.io".split()
EMPLOYER_HEADS = "Northwind Bluefield Carrow Halden Meridian Quayside Stonebridge Tessaly Vantor Wexley".split()
EMPLOYER_TAILS = ("Analytics Ltd", "Systems GmbH", "Group plc", "Logistics Inc.", "Health Trust", "Labs", "& Partners")
SCHOOLS = ("University of Leeds", "TU Delft", "University of Toronto", "Trinity College Dublin", "ETH Zurich")
CITIES = ("London, UK", "Berlin, Germany", "Toronto, Canada", "Dublin, Ireland", "Lyon, France", "Austin, TX")
TITLES = ("Senior Data Engineer", "Software Developer", "Product Manager", "Nurse Practitioner", "Data Analyst")
SKILLS = ("Python", "SQL", "Kubernetes", "Spark", "dbt", "Airflow", "Tableau", "Go", "Rust", "Excel", "Figma")
TLDS = "com net org io co.uk de fr ca ie nl ch me com.au".split()
STREETS = ("Mill Lane", "Harbour Road", "Kestrel Avenue", "Elm Street", "Station Parade")


class Doc:
    """Text built piece by piece; a labeled piece records its span."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[dict] = []
        self.length = 0

    def add(self, text: str, label: str | None = None) -> None:
        if label:
            self.spans.append({"start": self.length, "end": self.length + len(text), "label": label})
        self.parts.append(text)
        self.length += len(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _surname(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3)))).capitalize()


def _given(rng: random.Random) -> str:
    return rng.choice(GIVEN) if rng.random() < 0.6 else _surname(rng)


def _domain(rng: random.Random) -> str:
    """A made-up host: a syllable word (sometimes two, hyphenated) and a top-level domain."""
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2))))
    if rng.random() < 0.3:
        word += "-" + rng.choice(SYLLABLES) + rng.choice(SYLLABLES)
    return f"{word}.{rng.choice(TLDS)}"


def _email(rng: random.Random, given: str, surname: str) -> str:
    g, s = given.lower(), surname.lower()
    local = rng.choice(
        (
            f"{g}.{s}",
            f"{g}{s}",
            f"{g[0]}.{s}",
            f"{g}_{s}{rng.randint(1, 99)}",
            f"{s}.{g}",
            f"{g}+jobs",
            f"{g[0]}{s}{rng.randint(70, 99)}",
            f"{g}-{s}",
            f"{s}{g[0]}",
        )
    )
    host = rng.choice(HOSTS) if rng.random() < 0.5 else _domain(rng)
    if rng.random() < 0.15:
        host = f"{rng.choice(('cs', 'mail', 'staff', 'eng'))}.{host}"
    return f"{local}@{host}"


def _phone(rng: random.Random) -> str:
    """A phone number in one of a dozen spellings, redrawn until ``phonenumbers`` calls it valid (real
    CVs carry dialable numbers; a random area code often is not one)."""
    import phonenumbers

    while True:
        number = _phone_spelling(rng)
        region = "GB" if number.startswith("07") else "US"
        dialable = number.replace("0049", "+49", 1).split(" ext.")[0]
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(dialable, region)):
                return number
        except phonenumbers.NumberParseException:
            continue


def _phone_spelling(rng: random.Random) -> str:
    d = lambda n: "".join(str(rng.randint(0, 9)) for _ in range(n))  # noqa: E731
    area = rng.randint(201, 989)
    return rng.choice(
        (
            f"+44 7{d(3)} {d(6)}",
            f"07{d(3)} {d(3)} {d(3)}",
            f"+1 ({area}) {d(3)}-{d(4)}",
            f"({area}) {d(3)}-{d(4)}",
            f"+49 30 {d(7)}",
            f"{area}.{d(3)}.{d(4)}",
            f"+1-{area}-{d(3)}-{d(4)}",
            f"{area} {d(3)} {d(4)}",
            f"+353 (0)1 {d(3)} {d(4)}",
            f"+33 6 {d(2)} {d(2)} {d(2)} {d(2)}",
            f"0049 {d(2)} {d(7)}",
            f"+31 6 {d(8)}",
            f"({area}) {d(3)}-{d(4)} ext. {d(3)}",
        )
    )


def _url(rng: random.Random, given: str, surname: str) -> str:
    g, s = given.lower(), surname.lower()
    return rng.choice(
        (
            f"https://www.linkedin.com/in/{g}-{s}-{rng.randint(10, 999)}",
            f"linkedin.com/in/{g}{s}",
            f"https://github.com/{g[0]}{s}",
            f"github.com/{g}-{s}",
            f"https://{g}{s}.dev",
            f"http://www.{s}-portfolio.com/{g}",
            f"https://gitlab.com/{g}.{s}",
            f"behance.net/{g}{s}",
            f"https://medium.com/@{g}{s[0]}",
            f"www.{g}{s}.{rng.choice(TLDS)}",
            f"https://{s}.{rng.choice(TLDS)}/about",
            f"x.com/{g}_{s}",
        )
    )


def _company_site(rng: random.Random, employer: str) -> str:
    """An employer's public website: present in the text, not a target (collateral if masked)."""
    head = employer.split()[0].lower()
    return rng.choice((f"www.{head}.com", f"https://{head}-group.{rng.choice(TLDS)}", f"{head}.io/careers"))


def _employer(rng: random.Random) -> str:
    return f"{rng.choice(EMPLOYER_HEADS)} {rng.choice(EMPLOYER_TAILS)}"


def _cv(rng: random.Random) -> Doc:
    given, surname = _given(rng), _surname(rng)
    doc = Doc()
    if rng.random() < 0.5:
        doc.add(rng.choice(("Curriculum Vitae: ", "CV - ", "Résumé of ")))
    header = rng.random()
    if header < 0.2:
        doc.add(f"{given} {surname}".upper(), "PERSON")
    elif header < 0.35:
        doc.add(f"{surname}, {given}", "PERSON")
    elif header < 0.5:
        doc.add(f"{given} {rng.choice('ABCDEJKLMRST')}. {surname}", "PERSON")
    else:
        doc.add(f"{given} {surname}", "PERSON")
    doc.add(f"\n{rng.choice(TITLES)} | {rng.choice(CITIES)}\n")
    contacts = [("Email: ", _email(rng, given, surname), "EMAIL_ADDRESS"), ("Phone: ", _phone(rng), "PHONE_NUMBER")]
    if rng.random() < 0.8:
        contacts.append((rng.choice(("Web: ", "LinkedIn: ", "Portfolio: ", "")), _url(rng, given, surname), "URL"))
    rng.shuffle(contacts)
    separator = rng.choice((" | ", "\n", " · "))
    for i, (key, value, label) in enumerate(contacts):
        doc.add(separator if i else "")
        doc.add(key if rng.random() < 0.8 else "")
        doc.add(value, label)
    if rng.random() < 0.3:
        doc.add("\nAddress: ")
        doc.add(f"{rng.randint(2, 140)} {rng.choice(STREETS)}", "STREET_ADDRESS")
        doc.add(f", {rng.choice(CITIES)}")
    doc.add("\n\nExperience\n")
    year = rng.randint(2008, 2016)
    for _ in range(rng.randint(1, 3)):
        end = year + rng.randint(1, 4)
        employer = _employer(rng)
        doc.add(f"{rng.choice(TITLES)}, {employer} ({year}–{end}): ")
        doc.add(f"built {rng.choice(SKILLS)} pipelines and led a team of {rng.randint(2, 9)}")
        doc.add(f" ({_company_site(rng, employer)}).\n" if rng.random() < 0.3 else ".\n")
        year = end
    doc.add(f"\nEducation\n{rng.choice(('BSc', 'MSc', 'BA'))} Computer Science, {rng.choice(SCHOOLS)} ({year - 8})\n")
    doc.add("\nSkills: " + ", ".join(rng.sample(SKILLS, rng.randint(3, 6))) + "\n")
    if rng.random() < 0.5:
        ref_given, ref_surname = _given(rng), _surname(rng)
        doc.add("\nReferee: ")
        doc.add(f"{ref_given} {ref_surname}", "PERSON")
        doc.add(f", {rng.choice(TITLES)} at {_employer(rng)}, ")
        doc.add(_email(rng, ref_given, ref_surname), "EMAIL_ADDRESS")
        if rng.random() < 0.5:
            doc.add(", tel. ")
            doc.add(_phone(rng), "PHONE_NUMBER")
        doc.add("\n")
    if rng.random() < 0.4:
        doc.add("\nI am happy to talk: write to ")
        doc.add(_email(rng, given, surname), "EMAIL_ADDRESS")
        doc.add(" or call ")
        doc.add(_phone(rng), "PHONE_NUMBER")
        doc.add(" any weekday.\n")
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--labels", type=int, default=40, help="documents in the calibration pool")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    records = [
        {"id": f"cv-{i:04d}", "text": (d := _cv(rng)).text, "spans": d.spans, "domain": "cv"} for i in range(args.docs)
    ]
    rng.shuffle(records)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, part in (("cal", records[: args.labels]), ("test", records[args.labels :])):
        path = args.out / f"cv.{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        print(f"{path}: {len(part)} records, {sum(len(r['spans']) for r in part)} spans")


if __name__ == "__main__":
    main()
