"""A case view of shouted lines: what the reference model, the tagger and NER read instead of ALL CAPS.

In a line written in capitals ("NOTE: MR. JOHN SMITH CALLED ABOUT THE INVOICE") case carries no signal,
and every signal that finds names leans on case: spaCy's small model reads capitals as acronyms, the
reference model finds a shouted common word as surprising as a name, and the tagger was trained on mixed
case. The view spells each word of such a line as the reference model's tokenizer sees it most often
(``curation/data/word_case.tsv``, made by ``scripts/casing_lexicon.py``): "Note: Mr. John Smith called
about the invoice". A word the lexicon does not know is read as a name (capitalised), unless it is at most
three letters (an acronym: "SSN") or drawn out ("ROOOOAD"). An initial ("J.") stays a capital, an
honorific ("MR", "DR") takes its usual spelling, and the word after either is read as a name whatever the
lexicon says ("DR BAKER" -> "Dr Baker", "Y. KAŞ" -> "Y. Kaş"). Lines in mixed case are left as they are.

The view has the original's length and offsets (a word whose case map changes its length keeps its
spelling), so a span found in the view is the same span of the text; detection reads the view, the
release keeps the original characters.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

CASE_VIEW_VERSION = "shouted-lines-3"

_WORD = re.compile(r"(?<![\w'’])[^\W\d_]+(?:['’][^\W\d_]+)?(?![\w])")
_CONTRACTIONS = frozenset({"t", "s", "re", "ve", "ll", "d", "m"})  # DON'T, JOHN'S; else O'BRIEN, D'ANGELO
_ELONGATED = re.compile(r"(.)\1\1")  # "ROOOOAD", "SHIIIIT": a drawn-out word, not a name
_SENTENCE_ENDS = ".!?:;"  # a word after one of these (and spaces) starts a sentence
_MIN_SHOUTED_WORDS = 2  # words of two or more letters, all capitals
# two capital words apart by spaces: prose, not ``PASSWORD=HUNTERTWO`` or a base64 value
_PROSE = re.compile(r"(?<![\w'’])[^\W\d_a-z]{2,}(?:['’][^\W\d_a-z]+)?[ \t]+[^\W\d_a-z]{2,}(?![\w])")
_MIN_UPPER_SHARE = 0.9  # of the line's cased letters
# words that introduce a name: the next word is one ("MR J. WOŁĄSIEWICZ", "MS P. GLYNN", "Y. HOŞ")
_HONORIFICS = {"mr": "Mr", "mrs": "Mrs", "ms": "Ms", "mx": "Mx", "dr": "Dr", "prof": "Prof"}
_AFTER_HONORIFIC = re.compile(r"\.?[ \t]+")
_AFTER_INITIAL = re.compile(r"\.[ \t]*")


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, str]:
    text = resources.files("curation.data").joinpath("word_case.tsv").read_text(encoding="utf-8")
    forms: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            word, form = line.split("\t")
            forms[word] = form
    return forms


def shouted(line: str) -> bool:
    """Whether a line is written in capitals: nearly all its cased letters upper, at least two words of
    two or more letters all in capitals, two of them next to each other with spaces between."""
    upper = sum(c.isupper() for c in line)
    lower = sum(c.islower() for c in line)
    if upper < 4 or upper < _MIN_UPPER_SHARE * (upper + lower):
        return False
    words = [w for w in _WORD.findall(line) if len(w) >= 2 and w.isupper()]
    return len(words) >= _MIN_SHOUTED_WORDS and _PROSE.search(line) is not None


def spelled(word: str, sentence_start: bool, after_name_lead: bool = False) -> str:
    """A capitalised word as the lexicon spells it (length kept, else unchanged); after an honorific or an
    initial a word the lexicon does not spell capitalised is read as a name all the same."""
    if not word.isupper():
        return word
    parts = re.split(r"(['’])", word, maxsplit=1)
    if len(parts) == 3:
        head, mark, tail = parts
        if tail.lower() in _CONTRACTIONS:
            return spelled(head, sentence_start) + mark + tail.lower()
        return head.title() + mark + tail.title()  # a name's particle: O'Brien
    form = _lexicon().get(word.lower())
    if after_name_lead and form in (None, "l"):
        form = "t"
    if form is None:
        form = "u" if len(word) <= 3 else "l" if _ELONGATED.search(word) else "t"
    if form == "l" and sentence_start:
        form = "t"
    result = word.lower() if form == "l" else word.title() if form == "t" else word
    return result if len(result) == len(word) else word


def _line_view(line: str) -> str:
    pieces: list[str] = []
    at = 0
    previous = ""  # the word before, when only a name lead's punctuation and spaces lie between
    for m in _WORD.finditer(line):
        word, between = m.group(0), line[at : m.start()]
        j = m.start() - 1
        while j >= 0 and line[j].isspace():
            j -= 1
        sentence_start = j < 0 or line[j] in _SENTENCE_ENDS
        lead = (previous.lower() in _HONORIFICS and _AFTER_HONORIFIC.fullmatch(between) is not None) or (
            len(previous) == 1 and previous.isupper() and _AFTER_INITIAL.fullmatch(between) is not None
        )
        pieces.append(between)
        if len(word) == 1 and line.startswith(".", m.end()):
            pieces.append(word)  # an initial: "J. SMITH"
        elif word.isupper() and word.lower() in _HONORIFICS and _AFTER_HONORIFIC.match(line, m.end()):
            pieces.append(_HONORIFICS[word.lower()])
        else:
            pieces.append(spelled(word, sentence_start, lead))
        previous, at = word, m.end()
    pieces.append(line[at:])
    return "".join(pieces)


def case_view(text: str) -> str:
    """``text`` with its shouted lines true-cased (the same object when there are none), same length."""
    if not any(c.isupper() for c in text):
        return text
    lines = text.splitlines(keepends=True)
    changed = False
    for i, line in enumerate(lines):
        if shouted(line):
            viewed = _line_view(line)
            if viewed != line:
                lines[i] = viewed
                changed = True
    return "".join(lines) if changed else text
