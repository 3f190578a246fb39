"""LM rewriting: chunk invariants, verification, fallback and records (deterministic generators), plus
one end-to-end run with the real embedded instruct model."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.core import spans as S
from curation.views.convention import load_convention
from curation.views.rewriting import (
    RewriteConfig,
    Rewriter,
    RewriteRequest,
    clean_output,
    contains_value,
    propagate,
    split_chunks,
    surrogate_fallback,
    typed_tag_fallback,
    verify_rewrite,
)
from curation.views.surrogates import Scope, SurrogateEngine

CFG = RewriteConfig(enabled=True)

PARA1 = "customer: Hi there. My name is Julian Thomson and my order is SO95963835.\n"
PARA2 = "agent: The reset link expires after 30 minutes, so please use it soon after it arrives.\n"
PARA3 = "customer: Thanks, Julian Thomson again here, call me on 931.774.5949 please."


def _span(text: str, value: str, label: str, nth: int = 0) -> S.Span:
    start = -1
    for _ in range(nth + 1):
        start = text.index(value, start + 1)
    return S.Span(start, start + len(value), label)


def _doc() -> tuple[str, list[S.Span]]:
    text = PARA1 + "\n" + PARA2 + "\n" + PARA3
    spans = [
        _span(text, "Julian Thomson", S.PERSON),
        _span(text, "SO95963835", S.ACCOUNT_ID),
        _span(text, "931.774.5949", S.PHONE_NUMBER),
    ]
    return text, spans


def replacing_generator(table: dict[str, str]):
    """A deterministic 'model': replaces each target value by a fixed fictional one."""

    def generate(requests: Sequence[RewriteRequest]) -> list[str]:
        out = []
        for request in requests:
            text = request.text
            for _, value in request.targets:
                text = text.replace(value, table.get(value, "Alex Doe"))
            out.append(text)
        return out

    return generate


def echo_generator(requests: Sequence[RewriteRequest]) -> list[str]:
    """The typical failure of a small model: the chunk comes back unchanged."""
    return [r.text for r in requests]


# -- chunking ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(["word", " ", "\n", "\n\n", ". ", "x" * 40, "é", "\t", "!"]), max_size=200).map(
        "".join
    ),
    max_chars=st.integers(16, 200),
)
def test_chunks_cover_text_exactly_and_respect_limit(text: str, max_chars: int) -> None:
    chunks = split_chunks(text, max_chars)
    assert "".join(text[a:b] for a, b in chunks) == text
    assert all(b > a for a, b in chunks)
    assert all(b - a <= max_chars for a, b in chunks)
    assert [a for a, _ in chunks[1:]] == [b for _, b in chunks[:-1]]
    assert (chunks[0][0], chunks[-1][1]) == (0, len(text)) if text else chunks == []


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=600), max_chars=st.integers(16, 120), data=st.data())
def test_chunks_never_cut_inside_protected_spans(text: str, max_chars: int, data) -> None:
    n = len(text)
    starts = data.draw(st.lists(st.integers(0, max(0, n - 1)), max_size=5)) if n else []
    protect = [S.Span(a, min(n, a + data.draw(st.integers(1, max_chars)))) for a in starts]
    chunks = split_chunks(text, max_chars, protect)
    assert "".join(text[a:b] for a, b in chunks) == text
    assert all(0 < b - a <= max_chars for a, b in chunks)
    for _, cut in chunks[:-1]:  # only a protected run longer than a chunk may be cut
        assert not any(s.start < cut < s.end for s in S.merge(protect) if s.length <= max_chars)


def test_chunks_prefer_paragraphs_then_lines_then_sentences() -> None:
    text = "a" * 30 + "\n\n" + "b" * 30 + "\n" + "c" * 20 + ". " + "d" * 20
    assert next(text[a:b] for a, b in split_chunks(text, 40)) == "a" * 30 + "\n\n"
    lines = "one line here\nsecond line. Has two sentences. Yes\n"
    pieces = [lines[a:b] for a, b in split_chunks(lines, 20)]
    assert pieces[0] == "one line here\n"
    assert all(p.endswith((" ", "\n")) for p in pieces[:-1])
    assert split_chunks("x" * 50, 20) == [(0, 20), (20, 40), (40, 50)]  # no boundary: hard split
    assert split_chunks("", 20) == []


# -- verification -----------------------------------------------------------------------------


def test_verification_rejects_original_values_in_any_case_or_spacing() -> None:
    chunk = "Call Julian Thomson on 931.774.5949 about the refund."
    spans = [_span(chunk, "Julian Thomson", S.PERSON), _span(chunk, "931.774.5949", S.PHONE_NUMBER)]
    good = "Call Maria Lopez on 555.010.1234 about the refund."
    assert verify_rewrite(chunk, good, spans, CFG).ok
    for leaked in (
        "Call JULIAN THOMSON on 555.010.1234 about the refund.",
        "Call julian   thomson on 555.010.1234 about the refund.",
        "Call JulianThomson on 555.010.1234 about the refund.",
        "Call Maria Lopez on 931. 774. 5949 about the refund.",
    ):
        verdict = verify_rewrite(chunk, leaked, spans, CFG)
        assert not verdict.ok and verdict.reason == "leak"


def test_verification_checks_retention_length_numbers_and_artifacts() -> None:
    chunk = "Hello Julian Thomson, the reset link expires after 30 minutes, so please use it soon."
    spans = [_span(chunk, "Julian Thomson", S.PERSON)]
    ok = "Hello Maria Lopez, the reset link expires after 30 minutes, so please use it soon."
    assert verify_rewrite(chunk, ok, spans, CFG).ok
    cases = {
        "": "empty",
        "<|im_start|>assistant\nHello Maria Lopez, the reset link expires after 30 minutes, so please use it soon.": (
            "artifact"
        ),
        "Hello [PERSON], the reset link expires after 30 minutes, so please use it soon.": "artifact",
        "Hello Maria Lopez, the reset link expires after 45 minutes, so please use it soon.": "numbers",
        "Hello Maria Lopez, a new password arrives by email in 30 minutes time, so go now.": "retention",
        "Hi Maria, 30 minutes.": "length",
        ok + " " + ok: "length",
    }
    for output, reason in cases.items():
        verdict = verify_rewrite(chunk, output, spans, CFG)
        assert not verdict.ok and verdict.reason.startswith(reason), (output, verdict)


def test_short_values_match_whole_tokens_only() -> None:
    assert contains_value("Dear Al, hi", "Al")
    assert not contains_value("Dear Alice", "Al")
    assert contains_value("ID: a b 12", "ab12")


def test_clean_output_drops_lead_in_and_restores_outer_whitespace() -> None:
    chunk = "\n  Hello Julian.\n\n"
    assert clean_output("Sure! Here is the rewritten text:\nHello Maria.", chunk) == "\n  Hello Maria.\n\n"
    assert clean_output("```\nHello Maria.\n```", chunk) == "\n  Hello Maria.\n\n"
    assert clean_output("   ", chunk) == ""


def test_propagation_marks_other_occurrences_of_flagged_values() -> None:
    text = "Omar Jones called. Later OMAR  jones wrote again. Al and Al."
    spans = propagate(text, [S.Span(0, 10, S.PERSON), S.Span(50, 52, S.PERSON)])
    assert [text[s.start : s.end] for s in spans] == ["Omar Jones", "OMAR  jones", "Al"]


# -- rewriting, fallback and records ------------------------------------------------------------


def test_verified_rewrite_is_used_and_unflagged_chunks_stay_byte_identical() -> None:
    text, spans = _doc()
    table = {"Julian Thomson": "Maria Lopez", "SO95963835": "SO10000001", "931.774.5949": "555.010.1234"}
    rewriter = Rewriter(RewriteConfig(enabled=True, max_chars=100), generate=replacing_generator(table))
    result = rewriter.rewrite_document(text, spans)
    assert [c.action for c in result.chunks] == ["rewritten", "kept", "rewritten"]
    kept = result.chunks[1]
    assert text[kept.start : kept.end] == result.text[kept.new_start : kept.new_end] == PARA2 + "\n"
    assert result.text == text.replace("Julian Thomson", "Maria Lopez").replace("SO95963835", "SO10000001").replace(
        "931.774.5949", "555.010.1234"
    )
    # Records tile both texts and carry labels only.
    assert [(c.start, c.end) for c in result.chunks] == split_chunks(text, 100, propagate(text, spans))
    assert result.chunks[-1].new_end == len(result.text)
    assert result.changed_ranges == [(c.new_start, c.new_end) for c in result.chunks if c.action != "kept"]
    assert result.counts() == {"kept": 1, "rewritten": 2, "fallback": 0}
    assert rewriter.stats.pass_rate == 1.0


def test_failed_verification_falls_back_and_is_recorded_without_values() -> None:
    text, spans = _doc()
    calls: list[tuple[str, list[S.Span]]] = []

    def fallback(chunk: str, chunk_spans: Sequence[S.Span]) -> str:
        calls.append((chunk, list(chunk_spans)))
        return typed_tag_fallback(chunk, chunk_spans)

    rewriter = Rewriter(RewriteConfig(enabled=True, max_chars=100), generate=echo_generator)
    result = rewriter.rewrite_document(text, spans, fallback)
    assert [c.action for c in result.chunks] == ["fallback", "kept", "fallback"]
    assert [c.reason for c in result.chunks] == ["leak", "", "leak"]
    assert len(calls) == 2 and all(chunk_spans for _, chunk_spans in calls)
    for span in spans:
        assert not contains_value(result.text, span.text_of(text))
    assert "[PERSON]" in result.text and PARA2 in result.text
    records = repr([c.to_dict() for c in result.chunks])
    assert not any(contains_value(records, s.text_of(text)) for s in spans)
    assert rewriter.stats.fallback == 2 and rewriter.stats.pass_rate == 0.0


def test_generator_errors_and_wrong_counts_fall_back() -> None:
    text, spans = _doc()

    def broken(requests: Sequence[RewriteRequest]) -> list[str]:
        raise RuntimeError("out of memory")

    result = Rewriter(CFG, generate=broken).rewrite_document(text, spans)
    assert {c.reason for c in result.chunks if c.action == "fallback"} == {"generation error"}
    result = Rewriter(CFG, generate=lambda requests: []).rewrite_document(text, spans)
    assert all(c.action == "fallback" for c in result.chunks)
    assert not any(contains_value(result.text, s.text_of(text)) for s in spans)


def test_fallback_that_leaks_is_scrubbed_to_typed_tags() -> None:
    text, spans = _doc()
    result = Rewriter(CFG, generate=echo_generator).rewrite_document(text, spans, lambda chunk, _: chunk)
    assert all(c.reason.endswith("fallback scrubbed") for c in result.chunks if c.action == "fallback")
    assert not any(contains_value(result.text, s.text_of(text)) for s in spans)


def test_unflagged_documents_are_untouched_and_never_reach_the_model() -> None:
    def must_not_run(requests: Sequence[RewriteRequest]) -> list[str]:
        raise AssertionError("model called for an unflagged document")

    text = PARA2 * 20
    result = Rewriter(CFG, generate=must_not_run).rewrite_document(text, [])
    assert result.text == text and {c.action for c in result.chunks} == {"kept"}


def test_tagged_prompt_never_shows_the_model_an_original() -> None:
    text, spans = _doc()
    seen: list[RewriteRequest] = []

    def spy(requests: Sequence[RewriteRequest]) -> list[str]:
        seen.extend(requests)
        return echo_generator(requests)

    Rewriter(RewriteConfig(enabled=True, prompt_style="tagged"), generate=spy).rewrite_document(text, spans)
    assert seen
    for request in seen:
        shown = repr(request.messages())
        assert not any(contains_value(shown, s.text_of(text)) for s in spans)
        assert "<redacted>" in repr(request)


def test_surrogate_fallback_matches_the_surrogate_engine_per_scope() -> None:
    text, spans = _doc()
    engine = SurrogateEngine(bytes(range(32)), load_convention(), "test")
    engine.register_originals(s.text_of(text) for s in spans)
    scope = Scope("doc-1", "conv-1")
    fallback = surrogate_fallback(engine, scope, text, spans)
    result = Rewriter(RewriteConfig(enabled=True, max_chars=100), generate=echo_generator).rewrite_document(
        text, spans, fallback
    )
    whole = engine.apply(text, propagate(text, spans), scope).text
    assert result.text == whole  # same surrogates chunk by chunk as for the whole document
    assert "Julian Thomson again" not in result.text  # the unflagged repeat was propagated
    assert not any(contains_value(result.text, s.text_of(text)) for s in spans)


def test_invalid_spans_and_config_are_rejected() -> None:
    with pytest.raises(ValueError, match="ends past the text"):
        Rewriter(CFG, generate=echo_generator).rewrite_document("short", [S.Span(0, 50, S.PERSON)])
    with pytest.raises(ValueError):
        RewriteConfig(prompt_style="fancy")
    with pytest.raises(ValueError):
        RewriteConfig(max_length_ratio=0.9)
    assert RewriteConfig().enabled is False and RewriteConfig().model is None


# -- the real embedded instruct model -----------------------------------------------------------


@pytest.mark.slow
def test_real_embedded_model_rewrites_or_falls_back_without_leaking() -> None:
    text = "Hi, this is Julian Thomson. My order SO95963835 never arrived; call me on 931.774.5949."
    spans = [
        _span(text, "Julian Thomson", S.PERSON),
        _span(text, "SO95963835", S.ACCOUNT_ID),
        _span(text, "931.774.5949", S.PHONE_NUMBER),
    ]
    rewriter = Rewriter(RewriteConfig(enabled=True, max_new_tokens=64))
    result = rewriter.rewrite_document(text, spans)
    assert [c.action for c in result.chunks] in (["rewritten"], ["fallback"])
    assert rewriter.stats.generated == 1  # the model really ran
    assert not any(contains_value(result.text, s.text_of(text)) for s in spans)
    assert not re.search(r"<\|im_(start|end)\|>", result.text)
    if result.chunks[0].action == "rewritten":
        assert verify_rewrite(text, result.text, spans, rewriter.config).ok
