"""Self-training: pseudo-labels from a head's confident tokens, the pool draw, and the judge."""

from __future__ import annotations

import numpy as np

from curation.core.spans import Span
from curation.tagger.model import (
    IGNORED,
    TaggedText,
    TaggerConfig,
    out_of_fold_probs,
    token_targets,
    train_tagger,
    training_digest,
)
from curation.tagger.self_training import (
    SelfTrainingConfig,
    drawn_pool,
    keep_self_trained,
    pseudo_counts,
    pseudo_labeled,
)

DIM = 8
CONFIG = TaggerConfig(encoder="window", right_context=0, epochs=60, batch_tokens=64, hidden=16, dropout=0.0)


def _text(rng, private: list[bool], gold: bool = True) -> TaggedText:
    """Tokens of three characters each; a private token's state has feature 0 high, the others low."""
    n = len(private)
    text = " ".join("Ann" if p else "the" for p in private)
    start = np.arange(n) * 4
    hidden = rng.normal(0, 0.3, (n, DIM)).astype(np.float32)
    hidden[:, 0] += np.where(private, 3.0, -3.0)
    spans = [Span(int(s), int(s) + 3, "PERSON", "gold") for s, p in zip(start, private, strict=True) if p]
    return TaggedText(text, start, start + 3, hidden, spans if gold else [])


def test_pseudo_labels_replace_gold_as_targets_and_ignored_tokens_train_nothing():
    rng = np.random.default_rng(0)
    item = _text(rng, [True, False, False])
    pseudo = TaggedText(item.text, item.char_start, item.char_end, item.hidden, [], ["PERSON", "", "O"])
    labels = ["O", "PERSON"]
    assert token_targets(item, labels).tolist() == [1, 0, 0]
    assert token_targets(pseudo, labels).tolist() == [1, IGNORED, 0]
    # the cache key of a head sees the pseudo-labels
    assert training_digest([item, pseudo], "m", CONFIG) != training_digest([item, item], "m", CONFIG)
    # a text with nothing to learn from does not break training (no NaN loss)
    empty = TaggedText(item.text, item.char_start, item.char_end, item.hidden, [], ["", "", ""])
    head = train_tagger([item, empty], "m", CONFIG)
    assert np.isfinite(head.predict(item.hidden)).all()


def test_the_pool_draw_leaves_labeled_texts_out_is_bounded_and_does_not_depend_on_order():
    rng = np.random.default_rng(1)
    labeled = [_text(rng, [True, False])]
    pool = [_text(rng, [bool(i % 2), False, True][: 1 + i % 3]) for i in range(12)] + labeled
    pool = [it for i, it in enumerate(pool) if it.text not in {p.text for p in pool[:i]}]  # distinct texts
    config = SelfTrainingConfig(max_texts=2, seed=3)
    drawn = drawn_pool(pool, labeled, config)
    assert len(drawn) == 2 and all(it.text != labeled[0].text for it in drawn)
    assert [it.text for it in drawn_pool(pool[::-1], labeled, config)] == [it.text for it in drawn]
    assert len(drawn_pool(pool, labeled, SelfTrainingConfig(max_texts=100))) == len(pool) - 1


def test_confident_tokens_become_pseudo_labels_and_unsure_ones_are_skipped():
    rng = np.random.default_rng(2)
    labeled = [_text(rng, list(rng.random(12) < 0.3)) for _ in range(8)]
    head = train_tagger(labeled, "m", CONFIG)
    truth = [True, False, False, True, False]
    pool = [_text(rng, truth, gold=False)]
    probs = head.predict(pool[0].hidden)
    bound = float(np.sort(probs.max(axis=1))[1])  # the second least confident token's probability
    pseudo = pseudo_labeled(head, pool, SelfTrainingConfig(max_texts=1, confident=0.5, confident_outside=0.5))
    assert pseudo[0].pseudo == ["PERSON" if t else "O" for t in truth]
    assert pseudo_counts(pseudo) == {"pseudo_texts": 1, "pseudo_tokens": 5, "pseudo_private_tokens": 2}
    # above that bound only the three most confident tokens are trained on; above every token's, none
    strict = pseudo_labeled(
        head, pool, SelfTrainingConfig(max_texts=1, confident=bound + 1e-6, confident_outside=bound + 1e-6)
    )
    assert sum(1 for label in strict[0].pseudo if label) == 3
    assert pseudo_labeled(head, pool, SelfTrainingConfig(max_texts=1, confident=1.01, confident_outside=1.01)) == []


def test_each_fold_self_trains_from_its_own_head_and_the_judge_needs_a_gain():
    rng = np.random.default_rng(3)
    items = [_text(rng, list(rng.random(10) < 0.3)) for _ in range(6)]
    pool = [_text(rng, list(rng.random(10) < 0.3), gold=False) for _ in range(4)]
    seen: list[int] = []

    def extra(fold_head):
        seen.append(id(fold_head))
        return pseudo_labeled(fold_head, pool, SelfTrainingConfig(max_texts=4))

    probs = out_of_fold_probs(items, "m", CONFIG, folds=2, extra=extra)
    assert len(seen) == 2 and len(set(seen)) == 2  # one first head per fold
    assert [p.shape for p in probs] == [(10, 2)] * 6
    config = SelfTrainingConfig(max_texts=4, min_gain=0.002)
    assert keep_self_trained(0.60, 0.603, config) and not keep_self_trained(0.60, 0.601, config)
    assert not keep_self_trained(0.60, float("nan"), config)
