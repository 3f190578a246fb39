"""Residual audits: known-value and vault scans find leaks (and only report hashes), bounds are right."""

from __future__ import annotations

import hashlib
import math
import random
import time
from pathlib import Path

import pytest

from curation.core import spans as S
from curation.core.matching import normalize_for_match
from curation.gates import audit
from curation.gates.audit import (
    Finding,
    clopper_pearson_upper,
    find_known_values,
    find_vault_values,
    sampled_residual_audit,
    value_digest,
    wilson_upper,
)
from curation.views.vault import Vault, VaultRecord, hmac_value

KEY = bytes(range(32))


def _sha(value: str) -> str:
    return hashlib.sha256(normalize_for_match(value).encode()).hexdigest()


def _by_kind(findings: list[Finding]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in findings:
        out[f.kind] = out.get(f.kind, 0) + f.count
    return out


# --------------------------------------------------------------------------------------------
# normalize_for_match / find_known_values


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Dana Whitfield", "Dana  WHITFIELD"),
        ("555-0134", "5550134"),
        ("(415) 555-0134", "415.555.0134"),
        ("José Ruiz", "JOSE RUIZ"),
        ("Jose\u0301", "josé"),  # decomposed vs precomposed accent
        ("dana.whitfield@example.com", "DANA WHITFIELD @ example . com"),
    ],
)
def test_normalize_for_match_ignores_case_space_punctuation_and_accents(a: str, b: str) -> None:
    assert normalize_for_match(a) == normalize_for_match(b)
    assert normalize_for_match(a).isalnum()


def test_exact_and_normalized_matches_are_told_apart() -> None:
    texts = [
        ("d1", "Agent: Hi Dana Whitfield, your number 555-0134 is on file."),
        ("d2", "Customer: this is Dana  WHITFIELD; call me on 5550134 or (555) 0134."),
        ("d3", "Nothing private here, just a market update."),
    ]
    values = [(S.PERSON, "Dana Whitfield"), (S.PHONE_NUMBER, "555-0134"), (S.PERSON, "Mark")]
    found = find_known_values(texts, values)
    got = {(f.doc_id, f.label, f.kind): f.count for f in found}
    assert got == {
        ("d1", S.PERSON, "exact"): 1,
        ("d1", S.PHONE_NUMBER, "exact"): 1,
        ("d2", S.PERSON, "normalized"): 1,
        ("d2", S.PHONE_NUMBER, "normalized"): 2,
    }
    person = next(f for f in found if f.label == S.PERSON)
    assert person.value_sha256 == _sha("Dana Whitfield")
    assert found.docs_scanned == 3 and found.values_checked == 3 and found.values_skipped == 0


def test_matches_respect_word_edges() -> None:
    texts = [("d", "The Marketing team met Markus; Danaher is a company. Mark said hi.")]
    found = find_known_values(texts, [(S.PERSON, "Mark"), (S.PERSON, "Dana")])
    assert [(f.label, f.kind, f.count, f.value_sha256) for f in found] == [(S.PERSON, "exact", 1, _sha("Mark"))]


def test_values_with_leading_punctuation_match_verbatim() -> None:
    text = "call +1 (212) 867-5309 or email <dana.w@acme-corp.com>."
    values = [(S.PHONE_NUMBER, "+1 (212) 867-5309"), (S.EMAIL_ADDRESS, "dana.w@acme-corp.com")]
    found = find_known_values([("d", text)], values)
    assert sorted((f.label, f.kind) for f in found) == [(S.EMAIL_ADDRESS, "exact"), (S.PHONE_NUMBER, "exact")]


def test_short_values_are_skipped_and_counted() -> None:
    found = find_known_values([("d", "Al met Bo at 10.")], [(S.PERSON, "Al"), (S.PERSON, "Bo"), ("X", "--")])
    assert list(found) == []
    assert (found.values_skipped, found.values_checked) == (3, 0)
    assert found.summary()["values_skipped_too_short"] == 3


def test_same_value_under_two_labels_and_spellings_reports_each_label() -> None:
    texts = [("d", "Ref 5550134 and again 555-0134")]
    values = [(S.PHONE_NUMBER, "555-0134"), (S.PHONE_NUMBER, "5550134"), (S.ACCOUNT_ID, "555 0134")]
    got = {(f.label, f.kind): f.count for f in find_known_values(texts, values)}
    assert got == {(S.PHONE_NUMBER, "exact"): 2, (S.ACCOUNT_ID, "normalized"): 2}


def test_keyed_digest_replaces_plain_sha256() -> None:
    found = find_known_values([("d", "Dana Whitfield")], [(S.PERSON, "Dana Whitfield")], key=KEY)
    assert found[0].value_sha256 == value_digest("danawhitfield", KEY) != _sha("Dana Whitfield")


def test_reports_never_contain_raw_values() -> None:
    values = [(S.PERSON, "Dana Whitfield"), (S.PHONE_NUMBER, "555-0134"), (S.EMAIL_ADDRESS, "dana@acme.io")]
    texts = [("d1", "Dana Whitfield 555-0134 dana@acme.io"), ("d2", "DANA whitfield 5550134")]
    found = find_known_values(texts, values)
    assert len(found) == 5
    rendered = " ".join([repr(found), str(found), str(found.summary()), *map(str, found), *map(repr, found)])
    for _, value in values:
        for form in (value, value.casefold(), normalize_for_match(value)):
            assert form not in rendered


def test_known_value_scan_scales_to_10k_values_by_2k_docs() -> None:
    rng = random.Random(3)
    words = ["the", "order", "refund", "ticket", "please", "account", "support", "team", "call", "thanks"]
    values = [(S.PERSON, f"Person{i} Surname{i}") for i in range(10_000)]
    planted = {f"doc{i}": values[i * 5][1] for i in range(0, 2_000, 50)}
    texts = []
    for i in range(2_000):
        tokens = [rng.choice(words) for _ in range(200)]
        if f"doc{i}" in planted:
            tokens.insert(100, planted[f"doc{i}"].upper())
        texts.append((f"doc{i}", " ".join(tokens)))
    start = time.perf_counter()
    found = find_known_values(texts, values)
    elapsed = time.perf_counter() - start
    assert {f.doc_id for f in found} == set(planted)
    assert all(f.kind == "normalized" for f in found)
    assert elapsed < 10, f"known-value scan took {elapsed:.1f}s"


# --------------------------------------------------------------------------------------------
# find_vault_values


def _vault_with(tmp_path: Path, originals: list[tuple[str, str]]) -> set[str]:
    with Vault(tmp_path / "vault.duckdb") as vault:
        vault.upsert(
            VaultRecord("conv-1", label, hmac_value(KEY, value, label), f"surrogate-{i}", "kid")
            for i, (label, value) in enumerate(originals)
        )
        return vault.known_hmacs()


def test_vault_audit_finds_planted_values_by_hmac(tmp_path: Path) -> None:
    originals = [
        (S.PERSON, "Dana Whitfield"),
        (S.PHONE_NUMBER, "(415) 555-2671"),
        (S.EMAIL_ADDRESS, "dw@acme.io"),
    ]
    known = _vault_with(tmp_path, originals)
    texts = [
        ("leak", "Thanks, Ms. Dana Whitfield! We will call 415-555-2671 (mobile) and mail <DW@acme.io>."),
        ("again", "dana whitfield wrote twice. Later: Dana Whitfield."),
        ("clean", "Thanks, Ms. Avery Stone! We will call 555-0100 and mail avery@example.com."),
    ]
    found = find_vault_values(texts, KEY, known, [S.PERSON, S.PHONE_NUMBER, S.EMAIL_ADDRESS])
    got = {(f.doc_id, f.label): f.count for f in found}
    assert got == {
        ("leak", S.PERSON): 1,
        ("leak", S.PHONE_NUMBER): 1,
        ("leak", S.EMAIL_ADDRESS): 1,
        ("again", S.PERSON): 2,
    }
    assert {f.value_sha256 for f in found} <= known
    assert all(f.kind == "vault" for f in found)
    rendered = repr(found) + str(found.summary())
    assert "Whitfield" not in rendered and "2671" not in rendered and "acme" not in rendered


def test_vault_audit_only_checks_the_given_labels(tmp_path: Path) -> None:
    known = _vault_with(tmp_path, [(S.PERSON, "Dana Whitfield")])
    texts = [("d", "Dana Whitfield")]
    assert list(find_vault_values(texts, KEY, known, [S.LOCATION])) == []
    assert list(find_vault_values(texts, bytes(32), known, [S.PERSON])) == []  # another key finds nothing
    assert len(find_vault_values(texts, KEY, known, [S.PERSON], max_words=2)) == 1
    assert list(find_vault_values(texts, KEY, known, [S.PERSON], max_words=1)) == []
    assert len(find_vault_values(texts, KEY, known, [S.PERSON], max_words={S.PERSON: 2})) == 1
    assert list(find_vault_values(texts, KEY, known, [S.PERSON], max_words={S.PERSON: 1})) == []
    assert len(find_vault_values(texts, KEY, known, [S.PERSON], max_words={S.URL: 1})) == 1  # default 8
    for bad in (0, {S.PERSON: 0}):
        with pytest.raises(ValueError, match="max_words"):
            find_vault_values(texts, KEY, known, [S.PERSON], max_words=bad)


def test_vault_audit_finds_values_inside_assignments(tmp_path: Path) -> None:
    known = _vault_with(tmp_path, [(S.API_KEY, "sk_live_51Habc9XyZ"), (S.USERNAME, "dwhitfield")])
    texts = [("code", 'API_KEY="sk_live_51Habc9XyZ"\nuser=dwhitfield;')]
    got = {f.label for f in find_vault_values(texts, KEY, known, [S.API_KEY, S.USERNAME])}
    assert got == {S.API_KEY, S.USERNAME}


# --------------------------------------------------------------------------------------------
# bounds


def test_clopper_pearson_known_values() -> None:
    assert clopper_pearson_upper(0, 100, 0.95) == pytest.approx(0.0295, abs=5e-5)
    assert clopper_pearson_upper(0, 100, 0.95) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    assert clopper_pearson_upper(0, 300, 0.95) == pytest.approx(0.00994, abs=5e-5)  # "rule of three"
    upper = clopper_pearson_upper(5, 100, 0.95)
    assert upper == pytest.approx(0.1023, abs=5e-5)
    tail = sum(math.comb(100, i) * upper**i * (1 - upper) ** (100 - i) for i in range(6))
    assert tail == pytest.approx(0.05, abs=1e-9)  # P(X <= 5 | n=100, p=upper) = 1 - confidence
    assert clopper_pearson_upper(100, 100) == 1.0
    assert clopper_pearson_upper(0, 0) == 1.0


def test_wilson_known_values() -> None:
    assert wilson_upper(0, 100, 0.95) == pytest.approx(0.02635, abs=5e-5)
    assert wilson_upper(5, 100, 0.95) == pytest.approx(0.09916, abs=5e-5)
    assert wilson_upper(0, 0) == 1.0
    assert wilson_upper(10, 10) == pytest.approx(1.0)
    assert wilson_upper(5, 100, 0.99) > wilson_upper(5, 100, 0.95)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 100), (3, 50), (20, 400), (49, 50), (1, 5000)])
def test_bisection_fallback_matches_scipy(k: int, n: int) -> None:
    for confidence in (0.9, 0.95, 0.99):
        assert audit._cp_upper_bisect(k, n, confidence) == pytest.approx(
            clopper_pearson_upper(k, n, confidence), abs=1e-9
        )


def test_bounds_reject_impossible_counts() -> None:
    for bad in [(-1, 10, 0.95), (11, 10, 0.95), (1, 10, 1.0), (1, 10, 0.0)]:
        with pytest.raises(ValueError):
            wilson_upper(*bad)
        with pytest.raises(ValueError):
            clopper_pearson_upper(*bad)


# --------------------------------------------------------------------------------------------
# sampled_residual_audit


def test_clean_sample_passes_with_its_bound() -> None:
    ids = [f"doc-{i}" for i in range(1_000)]
    checked: list[str] = []

    def has_residual(doc_id: str) -> bool:
        checked.append(doc_id)
        return False

    result = sampled_residual_audit(ids, has_residual, 200, seed=7, confidence=0.95, budget=0.05)
    assert (result.population, result.sampled, result.with_residual, result.rate) == (1000, 200, 0, 0.0)
    assert result.upper_bound == pytest.approx(1 - 0.05 ** (1 / 200))
    assert result.passed and len(set(checked)) == 200
    assert "Clopper-Pearson".lower() in result.method.lower() and "seed 7" in result.method


def test_sample_is_reproducible_and_order_independent() -> None:
    ids = [f"doc-{i}" for i in range(500)]
    seen: list[list[str]] = []
    for order in (ids, list(reversed(ids))):
        picked: list[str] = []
        sampled_residual_audit(order, lambda d, p=picked: p.append(d) or False, 50, 11, 0.95, 0.1)
        seen.append(sorted(picked))
    assert seen[0] == seen[1]


def test_residuals_over_budget_fail() -> None:
    ids = [f"doc-{i}" for i in range(4_000)]
    result = sampled_residual_audit(ids, lambda d: d.endswith("7"), 400, 1, 0.95, 0.05, bound="wilson")
    assert result.sampled == 400 and result.population == 4_000
    assert result.rate == pytest.approx(result.with_residual / 400) and result.rate > 0.05
    assert result.upper_bound == pytest.approx(wilson_upper(result.with_residual, 400))
    assert not result.passed and "over budget" in result.reason


def test_empty_batch_fails_unless_allowed() -> None:
    result = sampled_residual_audit([], lambda d: False, 100, 1, 0.95, 0.05)
    assert not result.passed and result.reason == "empty batch: nothing to audit"
    assert result.upper_bound == 1.0 and result.sampled == 0
    allowed = sampled_residual_audit([], lambda d: False, 100, 1, 0.95, 0.05, allow_empty=True)
    assert allowed.passed and "empty batch" in allowed.reason


def test_small_batch_is_audited_in_full_and_bad_settings_are_rejected() -> None:
    result = sampled_residual_audit(["a", "b", "b"], lambda d: False, 100, 1, 0.95, 0.05)
    assert result.sampled == result.population == 2
    assert result.passed and result.upper_bound == 0.0 and "all documents audited" in result.reason
    # a clean batch of 20 passes with the default budget (a 95% bound on 0 of 20 would be 0.139 > 0.05) ...
    clean = sampled_residual_audit([f"d{i}" for i in range(20)], lambda d: False, 200, 7, 0.95, 0.05)
    assert clean.passed and clean.rate == 0.0
    # ... and a census still fails a batch whose measured rate is over budget (2 of 20 = 0.1)
    dirty = sampled_residual_audit([f"d{i}" for i in range(20)], lambda d: d in {"d3", "d4"}, 200, 7, 0.95, 0.05)
    assert not dirty.passed and dirty.rate == pytest.approx(0.1) and "over budget" in dirty.reason
    with pytest.raises(ValueError, match="bound"):
        sampled_residual_audit(["a"], lambda d: False, 1, 1, 0.95, 0.1, bound="normal")
    with pytest.raises(ValueError, match="budget"):
        sampled_residual_audit(["a"], lambda d: False, 1, 1, 0.95, 5.0)


def test_propagation_masks_every_occurrence_the_leak_scan_would_report():
    """Masking and the leak gate share one matcher: a value masked once is masked wherever the gate would
    find it (other case, underscores, hyphens, a line break between its words), never inside a longer
    word, and the gate then finds nothing in the redacted text."""
    from curation.core.spans import Span
    from curation.gates.audit import find_known_values
    from curation.policy.masking import propagate_duplicates, redact

    texts = {
        "a": "Contact Dana Whitfield or the HttpClient team; Java: x = HttpClient.newHttpClient();",
        "b": "DANA_WHITFIELD = load()\nclient = http_client\nDana\nWhitfield signed; Danaë? no: Danawhitfields stays.",
        "c": "Other scope: Dana Whitfield.",
    }
    first = texts["a"].index("Dana")
    http = texts["a"].index("HttpClient")
    url = texts["a"].index("HttpClient.new")  # a detector's false URL: its mask leaves 'HttpClient()' on an edge
    selected = {
        "a": [Span(first, first + 14, "PERSON"), Span(http, http + 10, "ORGANIZATION"), Span(url, url + 14, "URL")],
        "b": [],
        "c": [],
    }
    scope_of = {"a": "s1", "b": "s1", "c": "s2"}
    masked = propagate_duplicates(texts, selected, scope_of, scope="scope", min_chars=4)
    java = texts["a"].index("HttpClient.newHttpClient")
    assert any(s.start <= java and java + 24 <= s.end for s in masked["a"])  # the rest of newHttpClient too
    found = {texts["b"][s.start : s.end] for s in masked["b"]}
    assert found == {"DANA_WHITFIELD", "http_client", "Dana\nWhitfield"}
    assert masked["c"] == []  # another scope: not propagated
    values = [("PERSON", "Dana Whitfield"), ("ORGANIZATION", "HttpClient")]
    redacted = [(d, redact(texts[d], masked[d])) for d in ("a", "b")]
    assert len(find_known_values(redacted, values)) == 0
    unmasked = find_known_values([("b", texts["b"])], values)
    assert sum(f.count for f in unmasked) == 3  # the scan does see them unmasked
