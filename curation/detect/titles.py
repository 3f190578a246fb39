"""Job titles where the sentence or layout says they are one, and the name line above a title line."""

from __future__ import annotations

import re
from collections.abc import Iterator

from curation.core.spans import PERSON, Span
from curation.detect.base import _GREETING, _NOT_PLACES, _c

# --- job titles -----------------------------------------------------------------------------------------
# A job title next to a name narrows a person down to a handful of people, so it is tagged (label TITLE)
# where the sentence says it is one: "worked for X as <title>", "<Name>, the <title>, said", or a line of
# its own under a name line (signature, resume, address block).  Honorifics ("Dr.") are not titles: NER
# tags the name after them.  Words are ordinary occupation head nouns (the last word of a title):
# "Senior software engineer", "Court, municipal, and license clerk".
TITLE = "TITLE"
_OCCUPATION_HEADS = frozenset(
    """
    accountant actor actress actuary adjuster administrator adviser advisor agent aide analyst anchor
    announcer apprentice architect archivist artist assembler assessor assistant associate astronaut
    attendant attorney auditor author baker banker barber bartender bookkeeper breeder broker builder
    butcher butler buyer captain caretaker carpenter cashier caster cataloger chaplain chef chemist
    chiropractor choreographer cleaner clerk coach collector columnist commissioner composer conductor
    conservator consultant contractor controller cook coordinator copywriter coroner correspondent
    counsel counselor counsellor courier craftsman curator custodian cutter dancer dean decorator
    delegate dentist deputy designer detective developer dietitian dietician diplomat director
    dispatcher diver doctor drafter draftsman dresser driver economist editor educator electrician
    embalmer engineer engraver estimator examiner executive farmer fighter finisher firefighter
    fisherman fitter florist foreman forester fumigator gardener geologist glazier governor grader
    groundskeeper guard guide hairdresser handler harvester headteacher herder historian hostess host
    housekeeper hygienist illustrator inspector installer instructor insurer interpreter interviewer
    investigator janitor jeweler jeweller journalist judge laborer labourer landscaper lawyer lecturer
    librarian lifeguard lineman linguist locksmith logistician machinist maid manager manufacturer
    marshal mason mechanic mediator merchandiser messenger midwife miner minister model molder moulder
    mover musician nanny navigator negotiator nurse nutritionist officer operator optician optometrist
    orderly organizer packager packer painter paralegal paramedic pastor pathologist pharmacist
    photographer physician physicist physiotherapist pilot planner plasterer plumber poet policeman
    porter practitioner president priest principal processor producer professor programmer promoter
    proofreader prosecutor psychiatrist psychologist publicist publisher purchaser radiographer
    rancher ranger realtor receptionist recruiter referee registrar reporter representative researcher
    retailer reviewer roofer sailor salesman salesperson saleswoman scientist sculptor secretary
    sergeant servant server setter sheriff shipper singer sociologist soldier solicitor specialist
    statistician steward stewardess strategist stylist superintendent supervisor surgeon surveyor
    tailor teacher technician technologist teller tester therapist trader trainer translator treasurer
    trucker tutor typist underwriter upholsterer usher valuer veterinarian vet waiter waitress warden
    weaver welder worker writer
    """.split()
)
_OCCUPATION_SUFFIX = re.compile(r"(?i)(?:ologist|ographer|ician|iatrist|apist|ometrist|ist)$")
_TITLE_WORD = r"[A-Za-z][A-Za-z'’-]*"
_TITLE_HEAD = (
    r"(?i:(?:[a-z-]*(?:"
    + "|".join(sorted(_OCCUPATION_HEADS, key=len, reverse=True))
    + r")(?:e?s)?|[a-z]{3,}(?:ologist|ographer|ician|iatrist|apist|ometrist)s?)(?![\w'’-]))"
)
# up to five modifier words ("Court, municipal, and license"), then the head noun
_TITLE_PHRASE = (
    rf"(?P<t>(?:{_TITLE_WORD}(?:,?[ \t]+(?:and[ \t]+|&[ \t]+|of[ \t]+(?:the[ \t]+)?)?|[ \t]*/[ \t]*)){{0,5}}"
    rf"{_TITLE_HEAD})"
)
_TITLE_CONTEXTS = (
    # "I used to work for Acme as Midwife", "was hired as a senior nurse", "served as the finance director"
    _c(
        r"(?i)\b(?:work(?:s|ed|ing)?|employed|hired|serv(?:e|es|ed|ing)|started|promoted|appointed|job"
        r"|position|role|career|volunteer(?:s|ed|ing)?|trained|qualified|retired)\b[^\n.;!?]{0,80}?\bas[ \t]+"
        rf"(?:(?:an?|the|our|their|his|her|my|head|chief)[ \t]+)?{_TITLE_PHRASE}"
        r"(?=[ \t]*(?:[,.;:!?)\n]|$|(?:at|for|in|with|from|until|since|but|and|before|after|on)\b))"
    ),
    # "Marie Curie, the chief chemist, said"
    _c(
        r"(?<=[A-Za-zÀ-ÖØ-öø-ÿĀ-ž]),[ \t]+(?:(?i:the|our|their|an?)[ \t]+)"
        rf"{_TITLE_PHRASE}(?=,)"
    ),
    # a line of its own (checked below: the previous non-empty line must look like a name)
    _c(rf"(?m)^[ \t>*-]*{_TITLE_PHRASE}[ \t]*$"),
)
_NAME_LINE = re.compile(r"^[ \t>*-]*[^\W\d_][\w'’.-]*(?:[ \t]+[^\W\d_][\w'’.-]*){0,4}[ \t]*$")


def _name_line(line: str) -> bool:
    """A line that can be a person's name: 1-5 words, all capitalised (name particles aside) or all
    lower-case, no greeting or sign-off, not itself ending in an occupation."""
    if not _NAME_LINE.match(line) or _GREETING.match(line.strip(" \t>*-")):
        return False
    words = line.strip(" \t>*-").split()
    if _occupation_word(words[-1]) or words[0].lower() in _NOT_PLACES:
        return False
    rest = [w for w in words if w.lower() not in _NAME_PARTICLES]
    return all(w[0].isupper() for w in rest) or all(w.islower() for w in words)


_NAME_PARTICLES = frozenset("van von de der den da di du del della le la ter ten bin ibn al el dos das".split())


def _occupation_word(word: str) -> bool:
    w = word.lower().strip("'’-")
    if w.endswith("'s") or w.endswith("’s"):
        return False
    for form in (w, w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w):
        if form in _OCCUPATION_HEADS:
            return True
    return len(w) >= 7 and not w.endswith("list") and _OCCUPATION_SUFFIX.search(w) is not None


def _title_phrase_ok(phrase: str) -> bool:
    """The last word is an occupation; no word is a pronoun/article-only filler; cased consistently."""
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", phrase)
    if not words or len(words) > 6 or not _occupation_word(words[-1]):
        return False
    return not any(w.lower() in _TITLE_STOPWORDS for w in words)


_TITLE_STOPWORDS = frozenset(
    "i you he she it we they me him her us them my your his its our their this that these those is are was "
    "were be been am not no a an the to".split()
)


def _find_titles(text: str) -> Iterator[Span]:
    """Job titles in the three layouts of :data:`_TITLE_CONTEXTS`."""
    for i, pattern in enumerate(_TITLE_CONTEXTS):
        for m in pattern.finditer(text):
            start, end = m.span("t")
            if not _title_phrase_ok(text[start:end]):
                continue
            if i == 2:
                line_start = text.rfind("\n", 0, start) + 1
                prev = text[:line_start].rstrip().rsplit("\n", 1)[-1] if line_start else ""
                if not _name_line(prev):
                    continue
                if len(re.findall(r"[A-Za-z]+", text[start:end])) > 5:
                    continue
                # the name line above a title line (resume / signature header) is the person's name
                person = _header_name(text, text[:line_start].rstrip().rfind("\n") + 1, len(text[:line_start].rstrip()))
                if person is not None:
                    yield person
            yield Span(start, end, TITLE, 0.6, "pattern:job_title")


def _header_name(text: str, line_start: int, line_end: int) -> Span | None:
    """A PERSON span over a 2-4 word name line (quote/bullet prefix stripped), or None."""
    start, end = line_start, line_end
    while start < end and text[start] in " \t>*-?":
        start += 1
    while end > start and text[end - 1] in " \t,":
        end -= 1
    words = text[start:end].split()
    if not 2 <= len(words) <= 4 or not _name_line(text[start:end]) or any(_occupation_word(w) for w in words):
        return None
    return Span(start, end, PERSON, 0.6, "pattern:header_name")
