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


def test_spanish_dates_shift_day_first_and_keep_their_month_words() -> None:
    from curation.views.surrogates.dates import shift_dates

    assert shift_dates("03/03/1946", 30, day_first=True) == "02/04/1946"  # 3 March + 30 days
    assert shift_dates("03/03/1946", 30) == "04/02/1946"  # English reads it as March 3rd
    assert shift_dates("3 de marzo de 2016", 30) == "2 de abril de 2016"
    assert shift_dates("el 5 de mayo", 30) == "el 4 de junio"
    assert shift_dates("3 March 2016", 30) == "2 April 2016"  # English unchanged


def test_a_spanish_engine_draws_spanish_names_and_valid_dni() -> None:
    from curation.detect.validators import is_dni
    from curation.views.convention import load_convention
    from curation.views.surrogates import SurrogateEngine
    from curation.views.surrogates.pools import name_pool

    spanish = get_language("es")
    engine = SurrogateEngine(b"k" * 32, load_convention(None), "test", spanish.name_locales, spanish.day_first_dates)
    pool = name_pool(spanish.name_locales)
    name = engine.surrogate("doc-1", PERSON, "Ernesto Valdivieso Ruiz")
    first, *_, last = name.split()
    assert first in pool.given and last in pool.last and name != "Ernesto Valdivieso Ruiz"
    dni = engine.surrogate("doc-1", ID_NUMBER, "12345678Z")
    assert is_dni(dni) and dni != "12345678Z"
    assert engine.surrogate("doc-1", AGE, "70 años") == "70-74 años"
    assert engine.surrogate("doc-1", "DATE_TIME", "03/03/1946") != "03/03/1946"


def test_the_batch_language_comes_from_the_config_else_the_domains_labeled_set_else_the_batch(tmp_path) -> None:
    import json

    from curation.core.config import ConfigError, load_config

    labeled = tmp_path / "notas.jsonl"
    labeled.write_text(json.dumps({"id": "1", "text": SPANISH, "spans": []}) + "\n", encoding="utf-8")
    sets = {"tagger": {"labeled_sets": [f"clinical_es={labeled}"]}}
    config_file = tmp_path / "curation.yaml"
    config_file.write_text(json.dumps(sets), encoding="utf-8")
    assert load_config(config_file).detectors.language == "en"  # the default domain: English
    assert load_config(config_file, domain="clinical_es").detectors.language == "es"  # detected from its set
    assert load_config(config_file, domain="clinical_es", language="en").detectors.language == "en"  # --language
    config_file.write_text(json.dumps({**sets, "languages": {"support": "es"}}), encoding="utf-8")
    assert load_config(config_file).detectors.language == "es"
    batch = tmp_path / "lote.jsonl"  # a batch of a domain nobody labeled: its own records say the language
    batch.write_text(json.dumps({"id": "b1", "text": SPANISH}) + "\n", encoding="utf-8")
    config_file.write_text(json.dumps({"input": str(batch)}), encoding="utf-8")
    assert load_config(config_file).detectors.language == "es"  # though its domain's labels are English
    config_file.write_text(json.dumps({"input": str(batch), "language": "en"}), encoding="utf-8")
    assert load_config(config_file).detectors.language == "en"  # a stated language wins over detection
    config_file.write_text(json.dumps({"languages": {"support": "xx"}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="languages: unknown language 'xx'"):
        load_config(config_file)
