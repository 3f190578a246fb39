"""The label map speaks the public corpora's vocabularies (presidio-research, Presidio, CredData, TAB) and a
user's own (a YAML file through `curation eval --label-map` and the config's `label_map`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from curation.cli import build_parser, main
from curation.core.config import ConfigError, load_config
from curation.ingest.readers import ingest
from curation.labels.label_map import (
    CONVENTION_LABELS,
    CREDDATA_PARTS,
    DEFAULT_LABEL_MAP,
    LabelMapError,
    UnknownLabelError,
    load_label_map,
    map_label,
)
from curation.labels.sets import LabeledFormatError, from_presidio_research_json, load_labeled, write_labeled

# presidio-research's generator output types (PresidioSentenceFaker, the older FakeDataGenerator and its
# InputSample tags) and the entities Presidio 2.2's predefined recognizers emit.
PRESIDIO_RESEARCH_TYPES = (
    "PERSON", "FIRST_NAME", "LAST_NAME", "NAME", "PER", "PREFIX", "TITLE", "FEMALE_TITLE", "MALE_TITLE", "JOB",
    "OCCUPATION", "ROLE", "ORG", "ORGANIZATION", "COMPANY", "LOC", "LOCATION", "GPE", "CITY", "COUNTRY", "STATE",
    "ADDRESS", "FULL_ADDRESS", "STREET", "STREET_NO", "STREET_ADDRESS", "ZIP", "ZIP_CODE", "NATIONALITY",
    "NATION_MAN", "NATION_WOMAN", "NATION_PLURAL", "NORP", "NRP", "DATE_TIME", "DATE", "TIME", "BIRTHDAY", "AGE",
    "GENDER", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN", "IBAN_CODE", "IP_ADDRESS", "URL",
    "DOMAIN_NAME", "US_SSN", "US_DRIVER_LICENSE",
)  # fmt: skip
PRESIDIO_ENTITIES = (
    "ABA_ROUTING_NUMBER", "AGE", "AU_ABN", "AU_ACN", "AU_MEDICARE", "AU_TFN", "CA_POSTAL_CODE", "CA_SIN",
    "CREDIT_CARD", "CRYPTO", "DATE_TIME", "DE_BSNR", "DE_FUEHRERSCHEIN", "DE_HANDELSREGISTER",
    "DE_HEALTH_INSURANCE", "DE_ID_CARD", "DE_KFZ", "DE_LANR", "DE_PASSPORT", "DE_PLZ", "DE_SOCIAL_SECURITY",
    "DE_TAX_ID", "DE_TAX_NUMBER", "DE_VAT_ID", "EMAIL", "EMAIL_ADDRESS", "ES_NIE", "ES_NIF", "ES_PASSPORT",
    "FI_PERSONAL_IDENTITY_CODE", "IBAN_CODE", "ID", "IN_AADHAAR", "IN_GSTIN", "IN_PAN", "IN_PASSPORT",
    "IN_VEHICLE_REGISTRATION", "IN_VOTER", "IP_ADDRESS", "IT_DRIVER_LICENSE", "IT_FISCAL_CODE", "IT_IDENTITY_CARD",
    "IT_PASSPORT", "IT_VAT_CODE", "KR_BRN", "KR_DRIVER_LICENSE", "KR_FRN", "KR_PASSPORT", "KR_RRN", "LOCATION",
    "MAC_ADDRESS", "MEDICAL_BIOLOGICAL_ATTRIBUTE", "MEDICAL_BIOLOGICAL_STRUCTURE", "MEDICAL_CLINICAL_EVENT",
    "MEDICAL_DISEASE_DISORDER", "MEDICAL_FAMILY_HISTORY", "MEDICAL_HISTORY", "MEDICAL_LICENSE", "MEDICAL_MEDICATION",
    "MEDICAL_THERAPEUTIC_PROCEDURE", "NG_NIN", "NG_VEHICLE_REGISTRATION", "NRP", "ORGANIZATION", "PERSON",
    "PHONE_NUMBER", "PH_PASSPORT", "PH_TIN", "PH_UMID", "PL_PESEL", "SE_ORGANISATIONSNUMMER", "SE_PERSONNUMMER",
    "SG_NRIC_FIN", "SG_UEN", "TH_TNIN", "TR_LICENSE_PLATE", "TR_NATIONAL_ID", "UK_DRIVING_LICENCE", "UK_NHS",
    "UK_NINO", "UK_PASSPORT", "UK_POSTCODE", "UK_VEHICLE_REGISTRATION", "URL", "US_BANK_NUMBER", "US_CLAIM_NUMBER",
    "US_DRIVER_LICENSE", "US_HEALTH_INSURANCE_MEMBER_ID", "US_ITIN", "US_MBI", "US_NPI", "US_PASSPORT",
    "US_PRESCRIPTION_NUMBER", "US_PRIOR_AUTHORIZATION_NUMBER", "US_PROVIDER_TAX_ID", "US_REFERRAL_NUMBER", "US_SSN",
    "UUID", "ZA_COMPANY_REGISTRATION", "ZA_DRIVER_LICENSE", "ZA_ID_NUMBER", "ZA_INCOME_TAX_NUMBER",
    "ZA_LICENSE_PLATE", "ZA_MOBILE_NUMBER", "ZA_PASSPORT", "ZA_TELEPHONE_NUMBER", "ZA_TRAFFIC_REGISTER_NUMBER",
    "ZA_VAT_NUMBER",
)  # fmt: skip


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_every_default_entry_maps_onto_a_convention_label() -> None:
    assert set(DEFAULT_LABEL_MAP.values()) <= CONVENTION_LABELS


@pytest.mark.parametrize("label", sorted({*PRESIDIO_RESEARCH_TYPES, *PRESIDIO_ENTITIES}))
def test_presidio_research_and_presidio_entities_are_known(label: str) -> None:
    assert map_label(label) in CONVENTION_LABELS


def test_tab_categories_are_all_known() -> None:
    tab = {"PERSON": "PERSON", "ORG": "ORGANIZATION", "LOC": "LOCATION", "DATETIME": "DATE_TIME",
           "CODE": "ACCOUNT_ID", "DEM": "NRP", "QUANTITY": "SURPRISE", "MISC": "SURPRISE"}  # fmt: skip
    assert {label: map_label(label) for label in tab} == tab


def test_every_rule_of_the_shipped_credsweeper_is_a_known_creddata_category() -> None:
    spec = importlib.util.find_spec("credsweeper")  # a pinned requirement: missing is a failure, not a skip
    assert spec is not None and spec.submodule_search_locations, "credsweeper is not installed (requirements.txt)"
    rules = yaml.safe_load((Path(spec.submodule_search_locations[0]) / "rules" / "config.yaml").read_text())
    assert [r["name"] for r in rules if r["name"] not in CREDDATA_PARTS] == []


def test_a_presidio_research_file_with_address_and_prefix_loads(tmp_path: Path) -> None:
    text = "Mr. Dan Wu lives at 12 Oak St, 90210 Springfield, USA; born 1970, age 54, a nurse, Czech."
    values = [("PREFIX", "Mr."), ("PERSON", "Dan Wu"), ("ADDRESS", "12 Oak St"), ("ZIP_CODE", "90210"),
              ("CITY", "Springfield"), ("COUNTRY", "USA"), ("BIRTHDAY", "1970"), ("AGE", "54"), ("JOB", "nurse"),
              ("NATIONALITY", "Czech")]  # fmt: skip
    spans = [
        {"entity_type": t, "entity_value": v, "start_position": text.index(v), "end_position": text.index(v) + len(v)}
        for t, v in values
    ]
    source = tmp_path / "synth_dataset.json"
    source.write_text(json.dumps([{"full_text": text, "spans": spans}]), encoding="utf-8")
    labeled = tmp_path / "presidio.jsonl"
    write_labeled(labeled, from_presidio_research_json(source))
    record = load_labeled(labeled)[0]
    assert [(text[s.start : s.end], s.label) for s in record.spans] == [
        ("Mr.", "TITLE"),  # presidio-research maps PREFIX to TITLE itself
        ("Dan Wu", "PERSON"),
        ("12 Oak St", "STREET_ADDRESS"),
        ("90210", "STREET_ADDRESS"),
        ("Springfield", "LOCATION"),
        ("USA", "LOCATION"),
        ("1970", "DATE_TIME"),
        ("54", "AGE"),  # the convention has an AGE label of its own
        ("nurse", "TITLE"),
        ("Czech", "NRP"),
    ]


@pytest.mark.parametrize(
    ("category", "label"),
    [
        ("API:Key", "API_KEY"),
        ("Key:Secret", "API_KEY"),
        ("Auth:Token", "API_KEY"),
        ("Auth:Password", "PASSWORD"),  # auth_password="..."
        ("Dropbox App secret:Password", "PASSWORD"),  # MYSQL_PASSWORD=...
        ("Secret:Token", "API_KEY"),
        ("Token:Secret", "API_KEY"),  # the same token_secret line, parts the other way round
        ("Password:Key:CMD Password", "PASSWORD"),
        ("PEM Private Key:Key", "PRIVATE_KEY"),
        ("URL Credentials:Token", "CONNECTION_STRING"),
        ("AWS S3 Bucket:Key", "API_KEY"),  # any credential part beats a resource name
        ("NKEY Seed", "PRIVATE_KEY"),
        ("AWS Client ID", "API_KEY"),
        ("Bearer Authorization", "API_KEY"),
        ("Firebase Domain", "ACCOUNT_ID"),
        ("OTP / 2FA Secret:Secret", "SECRET"),
        ("Seed, Salt, Nonce", "SECRET"),  # CredData's first release named eight categories
        ("Generic Token", "API_KEY"),
    ],
)
def test_creddata_categories_and_multi_rule_values_map_by_their_parts(category: str, label: str) -> None:
    assert map_label(category) == label


def test_creddata_style_file_loads_with_the_expected_labels(tmp_path: Path) -> None:
    text = "token_secret: 'h9wmLazMc'\nauth_password=\"vjtv\"\nnkey=SUAIBDPBAUTW\n"
    values = [("h9wmLazMc", "Secret:Token"), ("vjtv", "Auth:Password"), ("SUAIBDPBAUTW", "NKEY Seed")]
    spans = [{"start": text.index(v), "end": text.index(v) + len(v), "label": c} for v, c in values]
    path = _write(tmp_path / "cred.jsonl", [{"id": "c1", "text": text, "kind": "code", "spans": spans}])
    record = load_labeled(path)[0]
    assert [(text[s.start : s.end], s.label) for s in record.spans] == [
        ("h9wmLazMc", "API_KEY"),
        ("vjtv", "PASSWORD"),
        ("SUAIBDPBAUTW", "PRIVATE_KEY"),
    ]


def test_an_unknown_label_or_part_is_an_error_naming_file_line_and_known_labels(tmp_path: Path) -> None:
    ok = {"id": "a", "text": "abc", "spans": [{"start": 0, "end": 2, "label": "Token"}]}
    for label, part in (("NOT_A_LABEL", None), ("Token:Not A Rule", "'Not A Rule'")):
        bad = {"id": "b", "text": "abc", "spans": [{"start": 0, "end": 2, "label": label}]}
        path = _write(tmp_path / "bad.jsonl", [ok, bad])
        with pytest.raises(LabeledFormatError) as info:
            load_labeled(path)
        message = str(info.value)
        assert message.startswith(f"{path}:2: span 0: unknown label {label!r}")
        assert "known labels: ACCOUNT_ID, AGE, API_KEY" in message and "PERSON" in message
        assert part is None or f"unknown part: {part}" in message
    with pytest.raises(UnknownLabelError):
        map_label("Token:")  # an empty part is no part the map knows


def test_the_error_suggests_the_closest_source_names(tmp_path: Path) -> None:
    record = {"id": "a", "text": "abc", "spans": [{"start": 0, "end": 1, "label": "ADRESS"}]}
    path = _write(tmp_path / "x.jsonl", [record])
    with pytest.raises(LabeledFormatError, match="closest: ADDRESS"):
        load_labeled(path)


def _label_map(tmp_path: Path, mapping: dict) -> Path:
    path = tmp_path / "labels.yaml"
    path.write_text(yaml.safe_dump(mapping, allow_unicode=True), encoding="utf-8")
    return path


def test_a_label_map_file_maps_a_custom_vocabulary_through_the_eval_loader(tmp_path: Path) -> None:
    gold = _write(
        tmp_path / "gold.jsonl",
        [{"id": "a", "text": "Kunde Anna, Konto 123", "spans": [{"start": 6, "end": 10, "label": "Kunde"},
                                                              {"start": 18, "end": 21, "label": "Konto"}]}],
    )  # fmt: skip
    with pytest.raises(LabeledFormatError, match="unknown label 'Kunde'"):
        load_labeled(gold)
    mapping = _label_map(tmp_path, {"Kunde": "PERSON", "Konto": "ACCOUNT_ID", "Auth:Token": "PASSWORD"})
    args = build_parser().parse_args(
        ["eval", str(gold), "--predictions", "p.jsonl", "--metrics", "m.json", "--label-map", str(mapping)]
    )
    table = load_label_map(args.label_map)  # what cmd_eval hands run_eval, which reads GOLD and VAL with it
    assert [s.label for s in load_labeled(Path(args.gold), table)[0].spans] == ["PERSON", "ACCOUNT_ID"]
    assert map_label("Auth:Token", table) == "PASSWORD"  # an exact entry wins over the parts rule
    assert map_label("GPE", table) == "LOCATION"  # on top of the default map, not instead of it


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Kunde: CUSTOMER\n", "key 'Kunde': 'CUSTOMER' is not a convention label (allowed: ACCOUNT_ID"),
        ("PERSON: ORGANIZATION\n", "key 'PERSON': is a convention label already"),
        ("- Kunde\n", "must be a non-empty mapping"),
        ("Kunde: [PERSON\n", "not valid YAML"),
    ],
)
def test_a_bad_label_map_file_is_an_error_naming_file_and_key(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LabelMapError) as info:
        load_label_map(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)
    with pytest.raises(LabelMapError, match="not found"):
        load_label_map(tmp_path / "missing.yaml")


def test_eval_reports_a_bad_label_map_and_exits_2(tmp_path: Path, capsys) -> None:
    mapping = _label_map(tmp_path, {"Kunde": "CUSTOMER"})
    code = main(["eval", "g.jsonl", "--predictions", "p", "--metrics", "m", "--label-map", str(mapping)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("curation eval: ") and str(mapping) in err and "'Kunde'" in err


def test_config_label_map_is_validated_and_applies_to_labeled_files_and_input(tmp_path: Path) -> None:
    from curation.ingest.validation import validation_rows

    record = {"id": "v", "text": "Kunde Anna", "spans": [{"start": 6, "end": 10, "label": "Kunde"}]}
    val = _write(tmp_path / "val.jsonl", [record])
    _label_map(tmp_path, {"Kunde": "PERSON"})
    tagger_off = {"enabled": False}
    config = load_config(None, base_dir=str(tmp_path), validation=val.name, label_map="labels.yaml", tagger=tagger_off)
    assert config.label_table()["Kunde"] == "PERSON"
    _, gold, _ = validation_rows(config)
    assert [g[-1] for g in gold] == ["PERSON"]
    result = ingest(val, batch_id="b", label_map=config.label_table())
    assert result.quarantine.height == 0 and result.gold_spans["label"].to_list() == ["PERSON"]
    assert "unknown label 'Kunde'" in ingest(val, batch_id="b").quarantine["reason"][0]

    (tmp_path / "wrong.yaml").write_text("Kunde: CUSTOMER\n", encoding="utf-8")
    for value, message in (
        ("missing.yaml", "label_map: .*missing.yaml is not a file"),
        ("wrong.yaml", r"label_map: .*wrong.yaml: key 'Kunde': 'CUSTOMER' is not a convention label"),
    ):
        with pytest.raises(ConfigError, match=message):
            load_config(None, base_dir=str(tmp_path), label_map=value)


def test_label_map_file_is_part_of_the_run_fingerprint(tmp_path: Path) -> None:
    from curation.delivery.freshness import run_fingerprint

    parts = {"code": "c0", "model_key": "m#1", "detector_versions": {"ruleset": "r1"}, "key_id": "k1"}
    _label_map(tmp_path, {"Kunde": "PERSON"})
    config = load_config(None, base_dir=str(tmp_path), label_map="labels.yaml")
    base = run_fingerprint(config, **parts)
    _label_map(tmp_path, {"Kunde": "ORGANIZATION"})
    assert run_fingerprint(config, **parts) != base


def test_the_shipped_meddocan_map_loads_onto_age_and_id_number() -> None:
    """The example map for Spanish clinical reports (issue 38): every type of MEDDOCAN's training split,
    ages and identifiers onto the convention's own AGE and ID_NUMBER."""
    from curation.core.config import bundled
    from curation.labels.label_map import load_label_map

    mapping = load_label_map(bundled("label_maps/meddocan.yaml"))
    assert mapping["EDAD_SUJETO_ASISTENCIA"] == "AGE"
    assert {mapping[k] for k in ("ID_SUJETO_ASISTENCIA", "ID_ASEGURAMIENTO", "ID_TITULACION_PERSONAL_SANITARIO")} == {
        "ID_NUMBER"
    }
    raw = yaml.safe_load(bundled("label_maps/meddocan.yaml").read_text(encoding="utf-8"))
    assert len(raw) == 21
