"""Checks on the generated data sets in ``curation/data`` and on the determinism of their generator."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # plain `pytest` without a conftest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import cli, datasets
from curation.core import spans

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "curation" / "data"
SAMPLE, VALIDATION, CODE = "sample_corpus.jsonl", "validation.jsonl", "code_secrets.jsonl"
FILES = [SAMPLE, VALIDATION, CODE]

ALLOWED_LABELS = {
    spans.PERSON,
    spans.EMAIL_ADDRESS,
    spans.PHONE_NUMBER,
    spans.CREDIT_CARD,
    spans.IBAN_CODE,
    spans.US_SSN,
    spans.IP_ADDRESS,
    spans.STREET_ADDRESS,
    spans.DATE_TIME,
    spans.ACCOUNT_ID,
    spans.USERNAME,
    spans.PASSWORD,
    spans.API_KEY,
    spans.PRIVATE_KEY,
    spans.CONNECTION_STRING,
    spans.SECRET,
    spans.URL,
    spans.ORGANIZATION,
    spans.LOCATION,
}
KINDS = {"chat", "text", "code"}
SIZE_LIMITS = {SAMPLE: (60_000, 150_000), VALIDATION: (1, 250_000), CODE: (1, 400_000)}
COUNT_LIMITS = {SAMPLE: (120, 200), VALIDATION: (280, 320), CODE: (180, 220)}


def load(name: str) -> list[dict[str, Any]]:
    """Records of one data file, parsed line by line."""
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def values(record: dict[str, Any]) -> list[str]:
    """The labeled substrings of ``record``."""
    return [record["text"][s["start"] : s["end"]] for s in record["spans"]]


def luhn_ok(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


@pytest.mark.parametrize("name", FILES)
def test_file_size_and_count(name: str) -> None:
    size = (DATA / name).stat().st_size
    lo, hi = SIZE_LIMITS[name]
    assert lo <= size <= hi, f"{name}: {size} bytes"
    n = len(load(name))
    lo, hi = COUNT_LIMITS[name]
    assert lo <= n <= hi, f"{name}: {n} records"


@pytest.mark.parametrize("name", FILES)
def test_lines_are_canonical_json(name: str) -> None:
    raw = (DATA / name).read_bytes()
    assert raw.endswith(b"\n")
    for line in raw.decode("utf-8").splitlines():
        record = json.loads(line)
        again = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        assert again == line


@pytest.mark.parametrize("name", FILES)
def test_schema(name: str) -> None:
    for rec in load(name):
        assert {"id", "kind", "text", "spans"} <= set(rec), rec.get("id")
        assert set(rec) <= {"id", "kind", "scope_id", "text", "spans", "metadata"}
        assert isinstance(rec["id"], str) and rec["id"]
        assert rec["kind"] in KINDS
        assert isinstance(rec["text"], str) and rec["text"].strip()
        assert isinstance(rec["spans"], list)
        if name != VALIDATION:
            assert isinstance(rec["scope_id"], str) and rec["scope_id"]
            assert isinstance(rec["metadata"], dict)
        if rec["kind"] == "code" and "metadata" in rec:
            assert isinstance(rec["metadata"]["path"], str) and rec["metadata"]["path"]
    if name == CODE:
        assert {rec["kind"] for rec in load(name)} == {"code"}
    else:
        assert {rec["kind"] for rec in load(name)} == KINDS


@pytest.mark.parametrize("name", FILES)
def test_spans_bounds_order_labels(name: str) -> None:
    for rec in load(name):
        prev_end = 0
        for span in rec["spans"]:
            assert set(span) == {"start", "end", "label"}, rec["id"]
            start, end = span["start"], span["end"]
            assert isinstance(start, int) and isinstance(end, int)
            assert 0 <= start < end <= len(rec["text"]), (rec["id"], span)
            assert start >= prev_end, f"{rec['id']}: overlapping or unsorted span {span}"
            assert span["label"] in ALLOWED_LABELS, (rec["id"], span)
            assert spans.Span(start, end, span["label"]).text_of(rec["text"]).strip(), (rec["id"], span)
            prev_end = end


@pytest.mark.parametrize("name", FILES)
def test_labeled_values_are_labeled_everywhere(name: str) -> None:
    """Every occurrence of a labeled value inside its record is covered by some span."""
    for rec in load(name):
        text = rec["text"]
        labeled = [spans.Span(s["start"], s["end"], s["label"]) for s in rec["spans"]]
        mask = spans.char_mask(labeled, len(text))
        for value in set(values(rec)):
            if len(value) < 4:
                continue
            for m in re.finditer(re.escape(value), text):
                assert all(mask[m.start() : m.end()]), f"{rec['id']}: unlabeled {value!r} at {m.start()}"


def test_ids_unique_across_files() -> None:
    ids = [rec["id"] for name in FILES for rec in load(name)]
    assert len(ids) == len(set(ids))


def test_sample_kind_mix_and_target_fraction() -> None:
    records = load(SAMPLE)
    share = {k: sum(r["kind"] == k for r in records) / len(records) for k in KINDS}
    assert 0.5 <= share["chat"] <= 0.7, share
    assert 0.12 <= share["text"] <= 0.3, share
    assert 0.12 <= share["code"] <= 0.3, share
    target = sum(s["end"] - s["start"] for r in records for s in r["spans"])
    total = sum(len(r["text"]) for r in records)
    assert 0.10 <= target / total <= 0.25


@pytest.mark.parametrize("name", [SAMPLE, VALIDATION])
def test_chat_conversations_span_several_records(name: str) -> None:
    convs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in load(name):
        if rec["kind"] == "chat":
            convs[rec["scope_id"]].append(rec)
            assert all(line.startswith(("customer: ", "agent: ")) for line in rec["text"].split("\n"))
    assert len(convs) >= 20
    recurring = 0
    for scope, recs in convs.items():
        assert 2 <= len(recs) <= 4, scope
        assert sorted(r["metadata"]["part"] for r in recs) == list(range(1, len(recs) + 1))
        per_record = [set(values(r)) for r in recs]
        if any(v in other for i, vals in enumerate(per_record) for v in vals for other in per_record[i + 1 :]):
            recurring += 1
    assert recurring >= 0.7 * len(convs), "customer details should recur across a conversation's records"


def test_code_secrets_repos_and_clean_files() -> None:
    records = load(CODE)
    clean = [r for r in records if not r["spans"]]
    assert 0.2 <= len(clean) / len(records) <= 0.4
    high_entropy = re.compile(r"[0-9a-f]{12,}|[A-Za-z0-9+/]{40,}={0,2}|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-")
    assert sum(bool(high_entropy.search(r["text"])) for r in clean) >= 0.8 * len(clean)
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_repo[rec["scope_id"]].append(rec)
    credential_labels = spans.CREDENTIAL_LABELS | {spans.API_KEY}
    repeated = 0
    for recs in by_repo.values():
        seen: dict[str, int] = defaultdict(int)
        for rec in recs:
            for span, value in zip(rec["spans"], values(rec), strict=True):
                if span["label"] in credential_labels:
                    seen[value] += 1
        repeated += any(n >= 2 for n in seen.values())
    assert repeated >= 0.6 * len(by_repo)
    assert len({r["metadata"]["language"] for r in records}) >= 10


@pytest.mark.parametrize("name", FILES)
def test_credit_cards_pass_luhn(name: str) -> None:
    for rec in load(name):
        for span, value in zip(rec["spans"], values(rec), strict=True):
            if span["label"] == spans.CREDIT_CARD:
                assert luhn_ok(value), (rec["id"], value)


def test_validation_values_absent_from_sample() -> None:
    sample_text = "\n".join(r["text"] for r in load(SAMPLE))
    leaked = sorted({v for rec in load(VALIDATION) for v in values(rec) if v in sample_text})
    assert not leaked, leaked[:10]


def test_regenerating_reproduces_identical_bytes(tmp_path: Path) -> None:
    import faker

    if faker.VERSION != datasets.GENERATED_WITH_FAKER:
        pytest.skip(f"data generated with Faker {datasets.GENERATED_WITH_FAKER}, installed {faker.VERSION}")
    assert cli.main(["--out-dir", str(tmp_path)]) == 0
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
