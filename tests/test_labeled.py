"""Labeled JSONL load/write, converters from presidio-research and BRAT, deterministic split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.core.spans import Span
from curation.labels.label_map import map_label
from curation.labels.sets import (
    LabeledFormatError,
    LabeledRecord,
    from_brat,
    from_presidio_research_json,
    load_labeled,
    split_records,
    write_labeled,
)

PRESIDIO_DIR = Path("/work/shared/data/presidio_synth")
needs_presidio = pytest.mark.skipif(
    not (PRESIDIO_DIR / "synth_dataset_v2.json").exists(), reason="presidio synth data not available"
)


def _records() -> list[LabeledRecord]:
    return [
        LabeledRecord("a", "Ann lives in Paris", [Span(0, 3, "PERSON"), Span(13, 18, "LOCATION")]),
        LabeledRecord("b", "print(key)", [], kind="code", scope_id="repo"),
    ]


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "out" / "gold.jsonl"
    write_labeled(path, _records())
    loaded = load_labeled(path)
    assert [(r.id, r.text, r.kind, r.scope_id) for r in loaded] == [
        ("a", "Ann lives in Paris", "text", None),
        ("b", "print(key)", "code", "repo"),
    ]
    assert [(s.start, s.end, s.label) for s in loaded[0].spans] == [(0, 3, "PERSON"), (13, 18, "LOCATION")]
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first == {
        "id": "a",
        "text": "Ann lives in Paris",
        "spans": [{"start": 0, "end": 3, "label": "PERSON"}, {"start": 13, "end": 18, "label": "LOCATION"}],
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "text": "abc"', "malformed JSON"),
        ('{"id": "x"}', "'text' must be a string"),
        ('{"text": "abc"}', "'id' must be"),
        ('{"id": "x", "text": "abc", "spans": [{"start": 1, "end": 7, "label": "P"}]}', "outside the text"),
        ('{"id": "x", "text": "abc", "spans": [{"start": 0, "end": 1}]}', "label"),
        ('{"id": "x", "text": "abc", "kind": "poem"}', "'kind'"),
        ('{"id": "ok", "text": "dup"}', "duplicate id 'ok' (first at line 1)"),
    ],
)
def test_load_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(LabeledFormatError) as info:
        load_labeled(path)
    assert str(info.value).startswith(f"{path}:3: ")
    assert message in str(info.value)


@needs_presidio
def test_presidio_converter_matches_shared_labeled_jsonl(tmp_path: Path) -> None:
    converted = from_presidio_research_json(PRESIDIO_DIR / "synth_dataset_v2.json")
    reference = load_labeled(PRESIDIO_DIR / "labeled.jsonl")
    assert len(converted) == len(reference)
    for ours, theirs in zip(converted[:50], reference[:50], strict=True):
        assert ours.id == theirs.id
        assert ours.text == theirs.text
        # loading maps the generator's names (GPE, ZIP_CODE, ...) onto the convention's labels
        assert [(s.start, s.end, map_label(s.label)) for s in ours.spans] == [
            (s.start, s.end, s.label) for s in theirs.spans
        ]
    out = tmp_path / "labeled.jsonl"
    write_labeled(out, converted)
    assert out.read_bytes() == (PRESIDIO_DIR / "labeled.jsonl").read_bytes()


def test_presidio_converter_rejects_offsets_that_do_not_match(tmp_path: Path) -> None:
    path = tmp_path / "ps.json"
    span = {"entity_type": "PERSON", "entity_value": "Bob", "start_position": 0, "end_position": 3}
    path.write_text(json.dumps([{"full_text": "Ann", "spans": [span]}]), encoding="utf-8")
    with pytest.raises(LabeledFormatError, match=r"record 0: span 0 \[0, 3\) does not match"):
        from_presidio_research_json(path)


def test_brat_discontinuous_span_gives_one_span_per_fragment(tmp_path: Path) -> None:
    txt = tmp_path / "note1.txt"
    txt.write_bytes(b"Dr. Ann\r\nSmith visited 10 Main St.\n")
    text = txt.read_bytes().decode()
    ann = tmp_path / "note1.ann"
    ann.write_text(
        "T1\tPERSON 4 7;9 14\tAnn Smith\n"
        "T2\tSTREET_ADDRESS 23 33\t10 Main St\n"
        "R1\tRel Arg1:T1 Arg2:T2\n"
        "#1\tAnnotatorNotes T1\tchecked\n"
        "A1\tNegated T1\n",
        encoding="utf-8",
    )
    rec = from_brat(txt, ann)
    assert rec.id == "note1" and rec.text == text
    assert [(s.start, s.end, s.label) for s in rec.spans] == [
        (4, 7, "PERSON"),
        (9, 14, "PERSON"),
        (23, 33, "STREET_ADDRESS"),
    ]
    assert [s.text_of(text) for s in rec.spans] == ["Ann", "Smith", "10 Main St"]


def test_brat_bad_offsets_name_the_line(tmp_path: Path) -> None:
    txt = tmp_path / "d.txt"
    txt.write_text("short", encoding="utf-8")
    ann = tmp_path / "d.ann"
    ann.write_text("T1\tPERSON 0 2\tsh\nT2\tPERSON 3 99\tx\n", encoding="utf-8")
    with pytest.raises(LabeledFormatError, match=r"d\.ann:2: fragment \[3, 99\)"):
        from_brat(txt, ann)


def test_split_is_deterministic_and_complete() -> None:
    records = [LabeledRecord(f"r{i}", f"text {i}") for i in range(100)]
    a, b = split_records(records, 0.3, seed=7)
    again_a, again_b = split_records(list(reversed(records)), 0.3, seed=7)
    assert len(a) == 30 and len(b) == 70
    assert {r.id for r in a} == {r.id for r in again_a} and {r.id for r in b} == {r.id for r in again_b}
    assert {r.id for r in a} | {r.id for r in b} == {r.id for r in records}
    assert [r.id for r in a] == [r.id for r in records if r in a]  # input order kept
    other_a, _ = split_records(records, 0.3, seed=8)
    assert {r.id for r in other_a} != {r.id for r in a}


def test_split_keeps_scopes_together() -> None:
    records = [LabeledRecord(f"r{i}", "t", scope_id=f"s{i // 4}") for i in range(40)]
    a, b = split_records(records, 0.5, seed=1)
    assert {r.scope_id for r in a}.isdisjoint({r.scope_id for r in b})
    assert len(a) == 20


def test_split_rejects_bad_fraction() -> None:
    with pytest.raises(ValueError, match="fraction"):
        split_records([], 1.5, seed=0)


@pytest.mark.parametrize("name", ["tab_echr_dev", "creddata_dev", "presidio_synth"])
def test_shared_sets_load_as_they_are_with_convention_labels(name: str) -> None:
    path = Path("/work/shared/data") / name / "labeled.jsonl"
    if not path.exists():
        pytest.skip("shared dev data not available")
    from curation.labels.label_map import CONVENTION_LABELS

    records = load_labeled(path)
    labels = {s.label for r in records for s in r.spans}
    assert labels and labels <= CONVENTION_LABELS


def test_label_map_maps_tab_and_creddata_names_and_keeps_identifier(tmp_path: Path) -> None:
    path = tmp_path / "tab.jsonl"
    spans = [
        {"start": 0, "end": 3, "label": "PERSON", "identifier": "DIRECT"},
        {"start": 4, "end": 8, "label": "DATETIME", "identifier": "QUASI"},
        {"start": 9, "end": 13, "label": "ORG", "identifier": "NO_MASK"},
        {"start": 14, "end": 17, "label": "API:Token"},
    ]
    path.write_text(json.dumps({"id": "a", "text": "Ann 1999 City key", "spans": spans}) + "\n")
    record = load_labeled(path)[0]
    assert [(s.label, s.source) for s in record.spans] == [
        ("PERSON", "gold:DIRECT"),
        ("DATE_TIME", "gold:QUASI"),
        ("API_KEY", "gold"),
    ]
    assert record.to_dict()["spans"][0]["identifier"] == "DIRECT"


def test_unknown_label_names_label_file_and_known_labels(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "text": "abc", "spans": [{"start": 0, "end": 2, "label": "NOT_A_LABEL"}]}\n')
    with pytest.raises(LabeledFormatError) as info:
        load_labeled(path)
    message = str(info.value)
    assert message.startswith(f"{path}:1: ")
    assert "'NOT_A_LABEL'" in message and "PERSON" in message and "known labels" in message


def test_tagger_labeled_sets_are_checked_when_the_config_loads(tmp_path: Path) -> None:
    from curation.core.config import ConfigError, load_config

    good = tmp_path / "court.jsonl"
    good.write_text('{"id": "a", "text": "x"}\n')
    config = load_config(None, base_dir=str(tmp_path), tagger={"labeled_sets": ["court=court.jsonl"]})
    assert ("court", good) in config.tagger_sets()
    assert [d for d, _ in config.tagger_sets()][-2:] == ["synthetic_pii", "court"]  # bundled public sets
    for entry, message in (("court.jsonl", "must be 'domain=path"), ("x=missing.jsonl", "is not a file")):
        with pytest.raises(ConfigError, match=message):
            load_config(None, base_dir=str(tmp_path), tagger={"labeled_sets": [entry]})
