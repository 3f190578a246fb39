"""The redaction convention: the packaged default is sane, bad files fail loudly and precisely."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml

from curation.core import spans as S
from curation.views.convention import (
    DEFAULT_PATH,
    KNOWN_LABELS,
    STYLES,
    ConventionError,
    convention_from_dict,
    load_convention,
)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "convention.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _minimal(**entities: dict) -> dict:
    return {"version": 1, "entities": {"default": {"style": "typed_tag"}, **entities}}


def test_default_convention_covers_every_label_with_the_agreed_styles() -> None:
    conv = load_convention()
    assert set(conv.labels()) == set(KNOWN_LABELS)
    for label in (S.PERSON, S.EMAIL_ADDRESS, S.PHONE_NUMBER, S.ACCOUNT_ID, S.USERNAME, S.IP_ADDRESS, S.URL, S.NRP):
        assert conv.rule_for(label).style == "surrogate", label
    assert conv.rule_for(S.IBAN_CODE).style == conv.rule_for(S.US_SSN).style == "surrogate"
    card = conv.rule_for(S.CREDIT_CARD)
    assert (card.style, card.keep_last) == ("mask_keep_last", 4)
    assert conv.rule_for(S.DATE_TIME).style == "date_shift"
    assert conv.rule_for(S.STREET_ADDRESS).style == "generalize"
    for label in (*S.CREDENTIAL_LABELS, S.SURPRISE):
        assert conv.rule_for(label).style == "typed_tag", label
    assert all(rule.scope == "conversation" for rule in conv.rules.values())
    assert conv.rule_for(S.PHONE_NUMBER).source == "fictional 555-01xx"


def test_nrp_is_a_known_label_with_the_location_conventions() -> None:
    assert S.NRP in KNOWN_LABELS
    conv = load_convention()
    nrp, location = conv.rule_for(S.NRP), conv.rule_for(S.LOCATION)
    assert nrp is not conv.rules["default"]
    assert (nrp.style, nrp.scope) == (location.style, location.scope) == ("surrogate", "conversation")
    assert convention_from_dict(_minimal(NRP={"style": "indexed_tag"})).rule_for(S.NRP).style == "indexed_tag"


def test_unknown_label_falls_back_to_default() -> None:
    conv = load_convention()
    assert conv.rule_for("SOMETHING_NEW") is conv.rules["default"]


def test_to_yaml_is_the_exact_file_text(tmp_path: Path) -> None:
    assert load_convention().to_yaml() == DEFAULT_PATH.read_text(encoding="utf-8")
    text = "# my comment\nversion: 1\nentities:\n  default: {style: delete}\n"
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_convention(path).to_yaml() == text


def test_convention_built_from_dict_round_trips_through_yaml(tmp_path: Path) -> None:
    conv = convention_from_dict(_minimal(PERSON={"style": "indexed_tag", "scope": "document"}))
    again = load_convention(_write(tmp_path, yaml.safe_load(conv.to_yaml())))
    assert again.rules == conv.rules


@pytest.mark.parametrize(
    ("entities", "key", "needle"),
    [
        ({"PERSON": {"style": "scramble"}}, "entities.PERSON.style", "allowed: surrogate"),
        ({"PERSON": {"style": "surrogate", "scope": "planet"}}, "entities.PERSON.scope", "allowed: document"),
        ({"PERSON": {"style": "surrogate", "colour": "red"}}, "entities.PERSON.colour", "unknown key"),
        ({"PERSONS": {"style": "surrogate"}}, "entities.PERSONS", "unknown label"),
        ({"CREDIT_CARD": {"style": "mask_keep_last", "keep_last": -1}}, "entities.CREDIT_CARD.keep_last", ""),
        ({"PERSON": {"style": "surrogate", "keep_last": 4}}, "entities.PERSON.keep_last", "mask_keep_last"),
        ({"PERSON": {"style": "date_shift"}}, "entities.PERSON.style", "DATE_TIME"),
        ({"PERSON": {"style": "surrogate", "keep": [1, 2]}}, "entities.PERSON.keep", "strings"),
        ({"PERSON": "surrogate"}, "entities.PERSON", "mapping"),
    ],
)
def test_bad_convention_file_names_the_file_and_key(tmp_path: Path, entities: dict, key: str, needle: str) -> None:
    path = _write(tmp_path, _minimal(**entities))
    with pytest.raises(ConventionError) as info:
        load_convention(path)
    message = str(info.value)
    assert str(path) in message
    assert key in message
    assert needle in message
    assert info.value.key == key


def test_style_error_lists_every_allowed_style(tmp_path: Path) -> None:
    with pytest.raises(ConventionError) as info:
        load_convention(_write(tmp_path, _minimal(URL={"style": "nope"})))
    assert all(style in str(info.value) for style in STYLES)


def test_missing_default_and_bad_top_level_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConventionError, match=r"entities\.default"):
        load_convention(_write(tmp_path, {"entities": {"PERSON": {"style": "surrogate"}}}))
    with pytest.raises(ConventionError, match="allow_global"):
        load_convention(_write(tmp_path, {"allow_globl_scope": True, **_minimal()}))
    with pytest.raises(ConventionError, match="entities"):
        load_convention(_write(tmp_path, {"version": 1}))
    with pytest.raises(ConventionError, match="allow_global_scope: must be true or false"):
        load_convention(_write(tmp_path, {"allow_global_scope": "yes please", **_minimal()}))


def test_unreadable_or_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConventionError, match=r"nope\.yaml"):
        load_convention(missing)
    broken = tmp_path / "broken.yaml"
    broken.write_text("entities: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConventionError, match=r"broken\.yaml: <file>: is not valid YAML"):
        load_convention(broken)


def test_global_scope_needs_opt_in(tmp_path: Path) -> None:
    path = _write(tmp_path, _minimal(PERSON={"style": "surrogate", "scope": "global"}))
    with pytest.raises(ConventionError, match="allow_global_scope: true"):
        load_convention(path)


def test_global_scope_with_opt_in_warns(tmp_path: Path) -> None:
    data = {**_minimal(PERSON={"style": "surrogate", "scope": "global"}), "allow_global_scope": True}
    with pytest.warns(UserWarning, match="global scope"):
        conv = load_convention(_write(tmp_path, data))
    assert conv.rule_for(S.PERSON).scope == "global"


def test_default_convention_loads_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_convention()


def test_mask_keep_last_defaults_to_four() -> None:
    conv = convention_from_dict(_minimal(CREDIT_CARD={"style": "mask_keep_last"}))
    assert conv.rule_for(S.CREDIT_CARD).keep_last == 4
