"""Self-training: the tagger learns from a domain's unlabeled texts, judged by its labeled ones.

With a few dozen labels a head has seen few of a domain's names; the domain's unlabeled texts (the pool
labels were picked from, or the batch) hold many more. A head trained on the labels tags the pool; the
tokens it is confident about (a label's probability, or O's, above a bound) become pseudo-labels, the
tokens between are not trained on, and a second head trains on labels plus pseudo-labels. Whether that
helped is measured, not assumed: each fold's second head is built from that fold's first head (so no
labeled text is judged by a head whose pseudo-labels came from a head that saw it), and the self-trained
head is kept only where its out-of-fold F1 on the judging domain's labeled texts beats the plain one's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from curation.tagger.model import OUTSIDE, TaggedText, Tagger


@dataclass(frozen=True)
class SelfTrainingConfig:
    """How many unlabeled texts, and how confident a token must be to become a pseudo-label."""

    max_texts: int = 0  # unlabeled texts drawn from the pool (seeded); 0: self-training off
    confident: float = 0.9  # a token is pseudo-labeled with its likeliest label when that label's P >= this
    confident_outside: float = 0.99  # ... and O when P(O) >= this; the tokens between are not trained on
    min_gain: float = 0.002  # out-of-fold smoothed F1 the self-trained head must add to be kept
    seed: int = 0

    @property
    def enabled(self) -> bool:
        return self.max_texts > 0

    def to_dict(self) -> dict:
        return asdict(self)


def drawn_pool(
    pool: Sequence[TaggedText], labeled: Sequence[TaggedText], config: SelfTrainingConfig
) -> list[TaggedText]:
    """At most ``max_texts`` pool texts, not labeled ones, in a seeded order fixed by their content (so the
    draw does not depend on the pool file's order)."""
    seen = {it.text for it in labeled}
    unique: dict[str, TaggedText] = {}
    for it in pool:
        if it.text not in seen and len(it.char_start):
            unique.setdefault(it.text, it)
    order = sorted(unique, key=lambda t: hashlib.sha256(f"{config.seed}|{t}".encode()).hexdigest())
    return [unique[t] for t in order[: config.max_texts]]


def pseudo_labeled(head: Tagger, pool: Sequence[TaggedText], config: SelfTrainingConfig) -> list[TaggedText]:
    """The pool texts with ``head``'s confident tokens as targets (others ignored); texts with no
    confident token are dropped."""
    out = []
    for it, probs in zip(pool, head.predict_many([it.hidden for it in pool]), strict=True):
        best = probs.argmax(axis=1)
        outside = probs[:, 0] >= config.confident_outside
        private = (best != 0) & (probs.max(axis=1) >= config.confident)
        if not (outside | private).any():
            continue
        pseudo = [
            head.labels[int(b)] if p else (OUTSIDE if o else "")
            for b, p, o in zip(best.tolist(), private.tolist(), outside.tolist(), strict=True)
        ]
        out.append(TaggedText(it.text, it.char_start, it.char_end, it.hidden, [], pseudo))
    return out


def pseudo_counts(items: Sequence[TaggedText]) -> dict[str, int]:
    """How many texts and tokens the pseudo-labels cover, and how many tokens are pseudo-private."""
    tokens = sum(sum(1 for label in it.pseudo or [] if label) for it in items)
    private = sum(sum(1 for label in it.pseudo or [] if label and label != OUTSIDE) for it in items)
    return {"pseudo_texts": len(items), "pseudo_tokens": tokens, "pseudo_private_tokens": private}


def keep_self_trained(base_f1: float, self_trained_f1: float, config: SelfTrainingConfig) -> bool:
    """The judge: the self-trained head replaces the plain one only where it adds ``min_gain`` F1."""
    return bool(np.isfinite(self_trained_f1) and self_trained_f1 >= base_f1 + config.min_gain)
