"""Canary probe: planting, exposure arithmetic, and the end-to-end mechanics in tiny form (real model, a few
fine-tuning steps on CPU): a canary trained on gains likelihood; the same canary under a loss mask does not."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from curation.core.config import bundled
from curation.evaluation import canary as C

FORMATS = {
    "secret": re.compile(r" AKIA[A-Z2-7]{16}"),
    "name_phone": re.compile(r" \([2-9]\d\d\) [2-9]\d\d-\d{4}"),
    "account_id": re.compile(r" ACCT-\d{8}"),
}


def _sample() -> list[dict]:
    return [json.loads(line) for line in bundled("sample_corpus.jsonl").read_text().splitlines() if line.strip()]


def test_canaries_are_seeded_distinct_and_format_valid():
    settings = C.ProbeSettings(canaries_per_cell=2)
    first, again = C.make_canaries(settings), C.make_canaries(settings)
    assert first == again
    assert len(first) == 2 * len(C.CANARY_KINDS) * len(settings.duplicates)
    assert len({c.value for c in first}) == len(first)
    assert len({c.prefix for c in first}) == len(first)
    for c in first:
        assert FORMATS[c.kind].fullmatch(c.value), c.kind
    other = C.make_canaries(replace(settings, seed=settings.seed + 1))
    assert not {c.value for c in first} & {c.value for c in other}
    candidates = C.candidate_values(first[0], 50, settings.seed, {c.value for c in first})
    assert len(set(candidates)) == 50 and all(FORMATS[first[0].kind].fullmatch(v) for v in candidates)
    assert first[0].value not in candidates


def test_corpus_plants_each_canary_exactly_its_duplicate_count_in_distinct_hosts():
    settings = C.ProbeSettings(host_docs=24, heldout_docs=6)
    corpus = C.build_canary_corpus(_sample(), settings)
    assert len(corpus.records) == 24 and len(corpus.heldout) == 6
    texts = {r["id"]: r["text"] for r in corpus.records}
    for c in corpus.canaries:
        hosts = [doc_id for doc_id, text in texts.items() if c.sentence in text]
        assert sorted(hosts) == corpus.placements[c.canary_id]
        assert len(hosts) == c.duplicates
        assert sum(text.count(c.value) for text in texts.values()) == c.duplicates
    heldout = "\n".join(r["text"] for r in corpus.heldout)
    assert not any(c.value in heldout for c in corpus.canaries)
    # hosts keep the sample's supplied labels, which still point at the same characters
    sample = {r["id"]: r for r in _sample()}
    for record in corpus.records:
        original = sample[record["id"].removeprefix("probe-")]
        for span in record["spans"]:
            assert record["text"][span["start"] : span["end"]] == original["text"][span["start"] : span["end"]]
    with pytest.raises(ValueError, match="host_docs"):
        C.build_canary_corpus(_sample()[:20], settings)


def test_exposure_by_rank_and_extrapolation():
    rng = np.random.default_rng(0)
    candidates = rng.normal(-40.0, 3.0, size=63)
    exposure, by_rank, rank = C.exposure_bits(-100.0, candidates, 30.0)
    assert rank == 64 and by_rank == pytest.approx(0.0) and exposure == pytest.approx(0.0)
    middle = float(np.sort(candidates)[31])
    _, by_rank, rank = C.exposure_bits(middle, candidates, 30.0)
    assert rank == 33 and by_rank == pytest.approx(np.log2(64) - np.log2(33))
    exposure, by_rank, rank = C.exposure_bits(-20.0, candidates, 30.0)
    assert rank == 1 and by_rank == pytest.approx(6.0)
    assert 6.0 < exposure <= 30.0  # six standard deviations out: far past what 63 candidates resolve

@pytest.mark.slow

def test_training_blocks_keep_masked_tokens_as_context_without_loss():
    _, tokenizer, _ = C.load_model(C.ProbeSettings(), "float32")
    text = "Call Ana on (415) 293-0187 today."
    start = text.index("(")
    blocks, labels = C.training_blocks([C.TrainingDoc(text, [(start, start + 14)])], tokenizer, 64, 0)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert list(blocks[0, : len(ids)]) == ids  # every token stays in the input
    masked = labels[0, : len(ids)] == -100
    assert 0 < masked.sum() < len(ids)
    kept = tokenizer.decode([t for t, m in zip(ids, masked, strict=True) if not m])
    assert "293" not in kept and "Call Ana on" in kept


@pytest.fixture(scope="module")
def tiny_probe():
    """One canary planted 8 times in short documents; fine-tuned raw and with the canary loss-masked."""
    settings = C.ProbeSettings(
        steps=6, batch_size=4, seq_len=64, learning_rate=1e-3, trainable_layers=4, candidates=15, warmup_steps=1
    )
    planted, control = C.make_canaries(replace(settings, canaries_per_cell=1, duplicates=(8,)))[1:3]
    hosts = [r["text"][:120] for r in _sample()[:8]]
    raw_docs, masked_docs = [], []
    for host in hosts:
        text = f"{host}\n{planted.sentence}"
        start = text.index(planted.value) + 1
        raw_docs.append(C.TrainingDoc(text))
        masked_docs.append(C.TrainingDoc(text, [(start, start + len(planted.value) - 1)]))
    base, tokenizer, _ = C.load_model(settings, "float32")

    def value_logps(model) -> tuple[float, float]:
        return tuple(float(C.continuation_logprobs(model, tokenizer, c.prefix, [c.value])[0]) for c in (planted, control))  # noqa: E501

    before = value_logps(base.eval())
    raw_model, _, raw_stats = C.fine_tune(raw_docs, settings, label="raw", progress=False)
    masked_model, _, masked_stats = C.fine_tune(masked_docs, settings, label="masked", progress=False)
    return {
        "planted": planted,
        "tokenizer": tokenizer,
        "before": before,
        "raw": value_logps(raw_model),
        "masked": value_logps(masked_model),
        "raw_model": raw_model,
        "stats": (raw_stats, masked_stats),
        "settings": settings,
    }


def test_canary_trained_on_raw_text_becomes_more_likely(tiny_probe):
    (before, _), (after, _) = tiny_probe["before"], tiny_probe["raw"]
    assert after > before + 3.0, (before, after)
    raw_stats, masked_stats = tiny_probe["stats"]
    assert masked_stats["trained_loss_tokens"] < raw_stats["trained_loss_tokens"]
    rows, ppl = C.measure_model(
        tiny_probe["raw_model"], tiny_probe["tokenizer"], [tiny_probe["planted"]], ["Hello there."],
        tiny_probe["settings"], progress=False,
    )  # fmt: skip
    assert rows[0].rank <= 4 and rows[0].exposure_bits >= 2.0 and np.isfinite(ppl)
    # the one-pass greedy check agrees with an actual greedy decoding loop
    model, tokenizer, planted = tiny_probe["raw_model"], tiny_probe["tokenizer"], tiny_probe["planted"]
    assert rows[0].extracted == C.greedy_extracts(model, tokenizer, planted)


def test_same_canary_under_a_loss_mask_gains_no_loss_driven_likelihood(tiny_probe):
    (before, control_before), (raw_after, _) = tiny_probe["before"], tiny_probe["raw"]
    masked_after, control_after = tiny_probe["masked"]
    raw_gain, masked_gain = raw_after - before, masked_after - before
    # what any fine-tuning on this text does to a same-format value it never saw
    control_gain = control_after - control_before
    assert masked_gain < 0.25 * raw_gain, (raw_gain, masked_gain)
    assert masked_gain < control_gain + 2.0, (masked_gain, control_gain)
