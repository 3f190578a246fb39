"""A learned PII tagger over the reference model's hidden states (the scoring pass's by-product).

The forward pass that yields each token's NLL also yields its last hidden state; this module caches
those states per text and trains a small head over them, predicting the convention's entity label of
each token (or O). The model is causal, so its state at t has seen only the left context; the default
head runs a small bidirectional GRU over the projected states to add the right context (measured on
the dev sets: +0.02 character F1 on court text and presidio over a hidden layer reading the states of
t..t+2). Per-token label probabilities are facts; turning them into spans needs a threshold, which
calibration chooses. Decoding snaps spans to word edges so a name is never half masked.

The head is trained from labeled sets on the user's machine (no weights are shipped) and cached by
the digest of its training data, the reference model key and its config.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from curation.core.spans import SURPRISE, Span, char_mask

OUTSIDE = "O"
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class TaggerConfig:
    """The head's shape and training recipe; part of its cache key."""

    # "bigru": a bidirectional GRU over the projected states of the whole text (left and right context);
    # "window": one hidden layer over the states of tokens t..t+right_context only
    encoder: str = "bigru"
    hidden: int = 128
    right_context: int = 2  # window encoder: tokens after t whose states the head also reads
    segment: int = 256  # training texts are cut into segments this long, at a random offset each epoch
    epochs: int = 20
    batch_tokens: int = 4096
    learning_rate: float = 3e-3
    weight_decay: float = 1e-4
    dropout: float = 0.1
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


ENCODERS = ("bigru", "window")
PREDICT_SEGMENT = 512  # inference cuts long texts into segments this long, each read with CONTEXT more on both sides
CONTEXT = 64
# rows of every inference call (filler rows complete a short one): the recurrent head's per-step cost barely
# grows with rows, so 8 costs a lone window about what 1 would and shares a call among 8 of one length
PREDICT_ROWS = 8


# -- hidden-state cache ------------------------------------------------------------------------
class HiddenStateCache:
    """Last hidden states per (model key, text sha256) as float16 .npy files in a private folder."""

    def __init__(self, root: Path, model_key: str) -> None:
        digest = hashlib.sha256(model_key.encode()).hexdigest()[:16]
        self.folder = Path(root) / "hidden" / digest
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in (self.folder.parent, self.folder):
            os.chmod(path, 0o700)  # derived from private text: owner only

    def path(self, sha: str) -> Path:
        return self.folder / f"{sha}.npy"

    def has(self, sha: str) -> bool:
        return self.path(sha).exists()

    def get(self, sha: str) -> np.ndarray:
        return np.load(self.path(sha))

    def delete(self, sha: str) -> bool:
        try:
            self.path(sha).unlink()
            return True
        except FileNotFoundError:
            return False

    def prune(self, keep: set[str], max_bytes: int, max_age_s: float, now: float | None = None) -> int:
        """Delete states older than ``max_age_s``, then the oldest beyond ``max_bytes`` (``keep`` last)."""
        now = time.time() if now is None else now
        files = [(p.stat(), p) for p in self.folder.glob("*.npy")]
        removed, kept = 0, []
        for stat, path in files:
            if now - stat.st_mtime > max_age_s:
                path.unlink(missing_ok=True)
                removed += 1
            else:
                kept.append((path.stem in keep, stat.st_mtime, stat.st_size, path))
        total = sum(size for _, _, size, _ in kept)
        for _, _, size, path in sorted(kept):  # not-kept first, oldest first
            if total <= max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed += 1
        return removed

    def bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("*.npy"))

    def put(self, sha: str, states: np.ndarray) -> None:
        target = self.path(sha)
        tmp = target.with_name(f"{target.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, states.astype(np.float16, copy=False))
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)


# -- training data -----------------------------------------------------------------------------
@dataclass
class TaggedText:
    """One text's token offsets, hidden states and (for training) gold spans."""

    text: str
    char_start: np.ndarray
    char_end: np.ndarray
    hidden: np.ndarray
    gold: list[Span] = field(default_factory=list)
    # pseudo-labels (self-training): label name per token, "" where the token is not trained on; when set,
    # they are the training targets instead of the gold spans
    pseudo: list[str] | None = None


IGNORED = -100  # a token the loss skips (cross_entropy's ignore_index)


def token_targets(item: TaggedText, labels: Sequence[str]) -> np.ndarray:
    """Class index per token: the label of the gold span holding most of its non-space characters (or the
    item's pseudo-labels, IGNORED where it has none)."""
    index = {label: i for i, label in enumerate(labels)}
    if item.pseudo is not None:
        return np.array([index.get(label, IGNORED) if label else IGNORED for label in item.pseudo], dtype=np.int64)
    n = len(item.char_start)
    best = np.zeros(n, dtype=np.int64)
    best_overlap = np.zeros(n, dtype=np.int64)
    starts, ends = item.char_start, item.char_end
    for span in item.gold:
        if span.label not in index:
            continue
        lo = int(np.searchsorted(ends, span.start, side="right"))
        hi = int(np.searchsorted(starts, span.end, side="left"))
        for t in range(lo, hi):
            overlap = min(ends[t], span.end) - max(starts[t], span.start)
            if overlap > best_overlap[t]:
                best_overlap[t], best[t] = overlap, index[span.label]
    return best


def training_digest(items: Sequence[TaggedText], model_key: str, config: TaggerConfig) -> str:
    """Cache key of a head: its training texts and gold spans, the reference model key, its config."""
    h = hashlib.sha256()
    h.update(json.dumps({"model_key": model_key, "config": config.to_dict()}, sort_keys=True).encode())
    for item in items:
        h.update(hashlib.sha256(item.text.encode()).digest())
        h.update(json.dumps([[s.start, s.end, s.label] for s in item.gold]).encode())
        if item.pseudo is not None:
            h.update(json.dumps(item.pseudo).encode())
    return h.hexdigest()[:16]


# -- the head ----------------------------------------------------------------------------------
def _build_head(dim: int, n_labels: int, config: TaggerConfig):
    """The head as a torch module: (batch x time x dim padded states, lengths) -> label logits."""
    import torch

    if config.encoder not in ENCODERS:
        raise ValueError(f"tagger encoder must be one of {ENCODERS}, got {config.encoder!r}")

    class WindowHead(torch.nn.Module):
        """Hidden layer over [h_t, h_t+1, ..., h_t+r] (computed as a sum of shifted projections)."""

        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(dim)
            self.project = torch.nn.Linear(dim, config.hidden * (config.right_context + 1))
            self.drop = torch.nn.Dropout(config.dropout)
            self.out = torch.nn.Linear(config.hidden, n_labels)

        def forward(self, states: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            b, t, _ = states.shape
            z = self.project(self.norm(states)).view(b, t, config.right_context + 1, config.hidden)
            total = z[:, :, 0]
            position = torch.arange(t)
            for k in range(1, min(config.right_context, t - 1) + 1):
                later = torch.nn.functional.pad(z[:, k:, k], (0, 0, 0, k))  # state of t+k at position t
                valid = (position + k < lengths.unsqueeze(1)).unsqueeze(2)  # never past the text's end
                total = total + torch.where(valid, later, torch.zeros_like(later))
            return self.out(self.drop(torch.relu(total)))

    class RecurrentHead(torch.nn.Module):
        """A bidirectional GRU over the projected states: the causal model's state at t has seen only
        the left context, the backward direction adds the right context of the whole segment."""

        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(dim)
            self.project = torch.nn.Linear(dim, config.hidden)
            self.drop = torch.nn.Dropout(config.dropout)
            self.gru = torch.nn.GRU(config.hidden, config.hidden, batch_first=True, bidirectional=True)
            self.out = torch.nn.Linear(3 * config.hidden, n_labels)

        def forward(self, states: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            z = torch.relu(self.project(self.norm(states)))
            packed = torch.nn.utils.rnn.pack_padded_sequence(
                self.drop(z), lengths.cpu(), batch_first=True, enforce_sorted=False
            )
            context, _ = self.gru(packed)
            context, _ = torch.nn.utils.rnn.pad_packed_sequence(context, batch_first=True, total_length=z.shape[1])
            return self.out(self.drop(torch.cat([z, context], dim=2)))

    return RecurrentHead() if config.encoder == "bigru" else WindowHead()


def _padded(pieces: Sequence[np.ndarray], dim: int):
    """Right-padded float32 batch (pieces x longest x dim) and the pieces' lengths."""
    import torch

    lengths = torch.tensor([len(p) for p in pieces])
    batch = torch.zeros((len(pieces), int(lengths.max()), dim), dtype=torch.float32)
    for i, piece in enumerate(pieces):
        batch[i, : len(piece)] = torch.from_numpy(np.asarray(piece, dtype=np.float32))
    return batch, lengths


def segment_bounds(n: int, length: int, offset: int = 0) -> list[tuple[int, int]]:
    """[a, b) pieces covering range(n): the first ends at ``offset`` (if > 0), the others ``length`` long."""
    if n <= length:
        return [(0, n)]
    cuts = [0, *range(offset if offset > 0 else length, n, length), n]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


@dataclass
class Tagger:
    """A trained head: labels, config, weights (a torch state dict) and its training report."""

    labels: list[str]
    config: TaggerConfig
    state: dict
    dim: int
    digest: str
    report: dict = field(default_factory=dict)
    _module: object = None

    @property
    def key(self) -> str:
        return f"tagger-{self.digest}"

    def module(self):
        if self._module is None:
            import torch

            module = _build_head(self.dim, len(self.labels), self.config)
            module.load_state_dict({k: torch.as_tensor(v) for k, v in self.state.items()})
            self._module = module.eval()
        return self._module

    def predict(self, hidden: np.ndarray) -> np.ndarray:
        """Label probabilities per token (n_tokens x labels, float32)."""
        return self.predict_many([hidden])[0]

    def predict_many(self, texts: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Label probabilities of several texts' hidden states: each text is cut into segments of
        PREDICT_SEGMENT tokens read with CONTEXT tokens more on both sides; windows of one length share
        a call of PREDICT_ROWS rows (filler rows complete it), so a call's shape depends only on that
        length and a text's probabilities are the same bits whatever other texts are tagged with it
        (float32 GEMMs round differently at other row counts: measured 6e-8 apart)."""
        import torch

        out = [np.zeros((len(h), len(self.labels)), dtype=np.float32) for h in texts]
        by_length: dict[int, list] = {}
        for doc, h in enumerate(texts):
            for a, b in segment_bounds(len(h), PREDICT_SEGMENT) if len(h) else []:
                lo, hi = max(0, a - CONTEXT), min(len(h), b + CONTEXT)
                by_length.setdefault(hi - lo, []).append((doc, lo, a, b, hi))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one thread: the work split (and so the bits) must not depend on the machine
        try:
            with torch.inference_mode():
                for length, windows in sorted(by_length.items()):
                    for i in range(0, len(windows), PREDICT_ROWS):
                        self._predict_call(texts, windows[i : i + PREDICT_ROWS], length, out)
        finally:
            torch.set_num_threads(threads)
        return out

    def _predict_call(self, texts, windows: list, length: int, out: list[np.ndarray]) -> None:
        import torch

        batch = torch.zeros((PREDICT_ROWS, length, self.dim), dtype=torch.float32)
        for row, (doc, lo, _, _, hi) in enumerate(windows):
            batch[row] = torch.from_numpy(np.asarray(texts[doc][lo:hi], dtype=np.float32))
        lengths = torch.full((PREDICT_ROWS,), length)
        probs = torch.softmax(self.module()(batch, lengths), dim=2).numpy()
        for row, (doc, lo, a, b, _) in enumerate(windows):
            out[doc][a:b] = probs[row, a - lo : b - lo]

    # -- persistence (local cache only; never shipped) --
    def save(self, path: Path) -> None:
        import torch

        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        torch.save({k: torch.as_tensor(v) for k, v in self.state.items()}, buffer)
        meta = {
            "labels": self.labels,
            "config": self.config.to_dict(),
            "dim": self.dim,
            "digest": self.digest,
            "report": self.report,
        }
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_bytes(json.dumps(meta).encode() + b"\n" + buffer.getvalue())
        os.replace(tmp, path)

    @staticmethod
    def read_meta(path: Path) -> dict:
        """The saved head's metadata line (labels, config, digest, report) without its weights or torch."""
        with Path(path).open("rb") as fh:
            return json.loads(fh.readline())

    @classmethod
    def load(cls, path: Path) -> Tagger:
        import torch

        raw = path.read_bytes()
        head, _, weights = raw.partition(b"\n")
        meta = json.loads(head)
        state = torch.load(io.BytesIO(weights), weights_only=True)
        return cls(meta["labels"], TaggerConfig(**meta["config"]), state, meta["dim"], meta["digest"], meta["report"])


def all_labels(items: Sequence[TaggedText]) -> list[str]:
    return [OUTSIDE, *sorted({s.label for it in items for s in it.gold})]


def train_tagger(
    items: Sequence[TaggedText],
    model_key: str,
    config: TaggerConfig | None = None,
    progress=None,
    labels: Sequence[str] | None = None,
) -> Tagger:
    """Train the head on texts with gold spans (token classification, O + the labels seen)."""
    import torch

    config = config or TaggerConfig()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # measured: a small head trains faster on one thread of a shared CPU
    try:
        return _train(items, model_key, config, progress, labels)
    finally:
        torch.set_num_threads(threads)


def _train(items, model_key: str, config: TaggerConfig, progress, labels) -> Tagger:
    import torch

    if not items:
        raise ValueError("the tagger needs at least one labeled text to train on")
    labels = list(labels) if labels is not None else all_labels(items)
    digest = training_digest(items, model_key, config)
    dim = int(items[0].hidden.shape[1])
    started = time.perf_counter()
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    docs = [(it.hidden, token_targets(it, labels)) for it in items if len(it.char_start)]
    head = _build_head(dim, len(labels), config)
    optimizer = torch.optim.AdamW(head.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    n_tokens = sum(len(y) for _, y in docs)
    steps_per_epoch = max(1, -(-n_tokens // config.batch_tokens))  # batches hold >= batch_tokens but the last
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.learning_rate, total_steps=config.epochs * steps_per_epoch + 1
    )
    head.train()
    last_loss = float("nan")
    for epoch in range(config.epochs):
        pieces = [  # long texts cut at a fresh random offset each epoch, so no cut is always in one place
            (h[a:b], y[a:b])
            for h, y in docs
            for a, b in segment_bounds(len(y), config.segment, int(rng.integers(1, config.segment + 1)))
        ]
        batches, current, size = [], [], 0
        for i in rng.permutation(len(pieces)):
            current.append(pieces[i])
            size += len(pieces[i][1])
            if size >= config.batch_tokens:
                batches.append(current)
                current, size = [], 0
        if current:
            batches.append(current)
        for batch in batches:
            states, lengths = _padded([h for h, _ in batch], dim)
            targets = torch.full(states.shape[:2], IGNORED, dtype=torch.long)
            for i, (_, y) in enumerate(batch):
                targets[i, : len(y)] = torch.from_numpy(y)
            if not bool((targets != IGNORED).any()):  # pseudo-labeled segments with no confident token: no loss
                continue
            logits = head(states, lengths)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(labels)), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if scheduler.last_epoch < scheduler.total_steps - 1:
                scheduler.step()
            last_loss = loss.item()
        if progress and ((epoch + 1) % 4 == 0 or epoch + 1 == config.epochs):
            progress(f"tagger epoch {epoch + 1}/{config.epochs}: loss {last_loss:.4f}")
    head.eval()
    state = {k: v.detach().clone() for k, v in head.state_dict().items()}
    report = {
        "training_texts": len(items),
        "training_tokens": n_tokens,
        "labels": labels,
        "final_loss": round(last_loss, 5),
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    tagger = Tagger(labels, config, state, dim, digest, report)
    tagger._module = head
    return tagger


# -- from token probabilities to character scores and spans ------------------------------------
def char_private_scores(text: str, char_start: np.ndarray, char_end: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per character: the highest P(not O) of a token covering it, raised to the word's maximum so a
    threshold never cuts a word in half; whitespace scores 0, except a single space or hyphen between
    two scored characters, which takes the lower of its neighbours (so a name is masked whole)."""
    return char_scores_and_labels(text, char_start, char_end, probs, with_labels=False)[0]


def char_scores_and_labels(
    text: str, char_start: np.ndarray, char_end: np.ndarray, probs: np.ndarray, with_labels: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`char_private_scores` and, per character, the index (1..) of the most probable label of the
    token its score came from (0 for whitespace): which label's threshold applies to it. ``with_labels``
    False skips the labels (None): decoding without per-label thresholds, the hot path, needs none."""
    n = len(text)
    scores = np.zeros(n, dtype=np.float64)
    label_of = np.zeros(n, dtype=np.int64) if with_labels else None
    if n == 0 or len(probs) == 0:
        return scores, label_of
    private = 1.0 - probs[:, 0]
    token_label = 1 + np.argmax(probs[:, 1:], axis=1) if with_labels and probs.shape[1] > 1 else None
    for t in range(len(private)):
        a, b = int(char_start[t]), int(char_end[t])
        if b > a:
            if label_of is not None:
                label = token_label[t] if token_label is not None else 0
                label_of[a:b] = np.where(private[t] > scores[a:b], label, label_of[a:b])
            np.maximum(scores[a:b], private[t], out=scores[a:b])
    for match in WORD.finditer(text):
        a, b = match.span()
        top = a + int(np.argmax(scores[a:b]))
        scores[a:b] = scores[top]
        if label_of is not None:
            label_of[a:b] = label_of[top]
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    space = np.isin(codes, [9, 10, 13, 32])
    scores[space] = 0.0
    if label_of is not None:
        label_of[space] = 0
    if n > 2:  # one entity across a single space or hyphen ("Dana Whitfield", "Vasquez-Ardent")
        joiner = np.isin(codes[1:-1], [32, 45])
        if label_of is not None:  # the joiner takes the label of the neighbour its (lower) score comes from
            from_left = scores[:-2] <= scores[2:]
            label_of[1:-1] = np.where(joiner, np.where(from_left, label_of[:-2], label_of[2:]), label_of[1:-1])
        scores[1:-1] = np.where(joiner, np.minimum(scores[:-2], scores[2:]), scores[1:-1])
    return scores, label_of


def char_thresholds(
    label_of: np.ndarray | None, labels: Sequence[str], threshold: float, label_thresholds: Mapping[str, float] | None
) -> np.ndarray | float:
    """The threshold each character is held to: its label's own where calibration chose one, else the
    domain's (a plain float when no label has its own: the decoding of before, bit for bit)."""
    if not label_thresholds:
        return threshold
    lookup = np.array([label_thresholds.get(label, threshold) for label in labels], dtype=np.float64)
    lookup[0] = threshold
    return lookup[label_of]


def decode_spans(
    text: str,
    char_start: np.ndarray,
    char_end: np.ndarray,
    probs: np.ndarray,
    labels: Sequence[str],
    threshold: float,
    label_thresholds: Mapping[str, float] | None = None,
) -> list[Span]:
    """Character spans where P(not O) >= threshold, snapped to word edges, joined across single
    spaces or hyphens inside one entity; each span takes the label with most probability mass.
    ``label_thresholds``: a label's own threshold for the characters whose token it is the likeliest for."""
    scores, label_of = char_scores_and_labels(text, char_start, char_end, probs, with_labels=bool(label_thresholds))
    masked = scores >= char_thresholds(label_of, labels, threshold, label_thresholds)
    raw = _runs(masked)
    spans: list[Span] = []
    for a, b in raw:
        while a < b and text[a] in " \t\r\n":
            a += 1
        while b > a and text[b - 1] in " \t\r\n":
            b -= 1
        if b <= a:
            continue
        lo = int(np.searchsorted(char_end, a, side="right"))
        hi = max(lo + 1, int(np.searchsorted(char_start, b, side="left")))
        mass = probs[lo:hi, 1:].sum(axis=0) if hi > lo else np.zeros(len(labels) - 1)
        label = labels[1 + int(np.argmax(mass))] if len(labels) > 1 and mass.size else SURPRISE
        spans.append(Span(a, b, label, float(scores[a:b].max()), "tagger"))
    return spans


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    if not mask.any():
        return []
    padded = np.r_[False, mask, False].astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


THRESHOLD_GRID = np.round(np.arange(0.05, 0.9501, 0.01), 2)  # the tagger thresholds calibration considers
THRESHOLD_SMOOTHING = 0.05  # F1 averaged over grid thresholds this far either side


def choose_threshold(
    items: Sequence[TaggedText], probs: Sequence[np.ndarray], collateral_budget: float = 1.0
) -> tuple[float, dict]:
    """The P(not O) threshold in the middle of the best pooled character F1 on labeled texts (FPR within
    the budget): the argmax of F1 averaged over thresholds ``THRESHOLD_SMOOTHING`` either side.

    Out-of-fold F1 over a domain's few hundred texts is flat over a wide range and its argmax is a spike of
    noise at the range's edge (social_dev's calibration half: 0.617-0.631 from 0.41 to 0.77, argmax 0.781),
    so the plain argmax swings with any change of the hidden states; the plateau's middle does not.
    """
    from curation.policy.calibration import Metrics, sweep

    scores = np.concatenate(
        [char_private_scores(it.text, it.char_start, it.char_end, p) for it, p in zip(items, probs, strict=True)]
        or [np.zeros(0)]
    )
    gold = np.concatenate(
        [np.array(char_mask(it.gold, len(it.text)), dtype=bool) for it in items] or [np.zeros(0, dtype=bool)]
    )
    result = sweep(np.round(scores, 3), gold)
    # metrics of masking every character scoring >= each grid value (descending sweep: last index >= it)
    at = np.searchsorted(-result.thresholds, -THRESHOLD_GRID, side="right") - 1
    points = [
        result.metrics_at(int(i)) if i >= 0 else Metrics.from_counts(0, 0, result.positives, result.negatives)
        for i in at
    ]
    fpr = np.array([m.fpr for m in points])
    smoothed = smoothed_f1(np.array([m.f1 for m in points]), round(THRESHOLD_SMOOTHING / 0.01))
    within = fpr <= collateral_budget
    candidates = np.flatnonzero(within) if within.any() else np.array([int(np.argmin(fpr))])
    best = int(candidates[np.argmax(smoothed[candidates])])
    return float(THRESHOLD_GRID[best]), {**points[best].to_dict(), "f1_smoothed": round(float(smoothed[best]), 6)}


MIN_LABEL_SPANS = 30  # gold spans of a label in a domain's calibration data before it may get its own threshold
MIN_LABEL_GAIN = 0.002  # smoothed pooled F1 a label's own threshold must add over the domain's


def choose_label_thresholds(
    items: Sequence[TaggedText],
    probs: Sequence[np.ndarray],
    labels: Sequence[str],
    threshold: float,
    collateral_budget: float = 1.0,
    min_spans: int = MIN_LABEL_SPANS,
) -> tuple[dict[str, float], dict]:
    """Per-label thresholds where a label has the support: for each label with at least ``min_spans``
    gold spans (most first), the grid threshold for the characters whose token it is likeliest for that
    maximises the pooled character F1 (smoothed as :func:`choose_threshold`'s, the other labels at their
    current thresholds, FPR within the budget); kept only when it adds ``MIN_LABEL_GAIN``. Labels below
    the support, or that gain nothing, keep the domain's ``threshold``. Returns (thresholds, report)."""
    support: dict[str, int] = {}
    for it in items:
        for span in it.gold:
            support[span.label] = support.get(span.label, 0) + 1
    eligible = [label for label in labels[1:] if support.get(label, 0) >= min_spans]
    report: dict = {"support": {label: support.get(label, 0) for label in labels[1:]}, "min_spans": min_spans}
    if not eligible or not items:
        return {}, report
    scores, label_of, gold = [], [], []
    for it, p in zip(items, probs, strict=True):
        sc, lab = char_scores_and_labels(it.text, it.char_start, it.char_end, p)
        scores.append(np.round(sc, 3))
        label_of.append(lab)
        gold.append(np.array(char_mask(it.gold, len(it.text)), dtype=bool))
    score, label_of, gold = np.concatenate(scores), np.concatenate(label_of), np.concatenate(gold)
    positives, negatives = int(gold.sum()), int((~gold).sum())
    current = np.full(len(labels), threshold)
    chosen: dict[str, float] = {}
    half_width = round(THRESHOLD_SMOOTHING / 0.01)
    for label in sorted(eligible, key=lambda lab: -support[lab]):
        index = labels.index(label)
        mine = label_of == index
        masked_others = (score >= current[label_of]) & ~mine
        tp_rest, fp_rest = int((masked_others & gold).sum()), int((masked_others & ~gold).sum())
        # characters of this label scoring >= each grid value: a count from the sorted scores
        target, other = np.sort(score[mine & gold]), np.sort(score[mine & ~gold])
        tp = len(target) - np.searchsorted(target, THRESHOLD_GRID, side="left") + tp_rest
        fp = len(other) - np.searchsorted(other, THRESHOLD_GRID, side="left") + fp_rest
        f1 = np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + (positives - tp), 1), 0.0)
        smoothed = smoothed_f1(f1, half_width)
        fpr = fp / max(negatives, 1)
        within = np.flatnonzero(fpr <= collateral_budget)
        at_domain = int(np.argmin(np.abs(THRESHOLD_GRID - current[index])))
        if not within.size:
            continue
        best = int(within[np.argmax(smoothed[within])])
        gain = float(smoothed[best] - smoothed[at_domain])
        report.setdefault("gain", {})[label] = round(gain, 5)
        if gain >= MIN_LABEL_GAIN and THRESHOLD_GRID[best] != current[index]:
            chosen[label] = current[index] = float(THRESHOLD_GRID[best])
    return chosen, report


def smoothed_f1(f1: np.ndarray, half_width: int) -> np.ndarray:
    """Each point's F1 averaged with its ``half_width`` neighbours either side (fewer at the ends)."""
    kernel = np.ones(2 * half_width + 1)
    return np.convolve(f1, kernel, "same") / np.convolve(np.ones_like(f1), kernel, "same")


def out_of_fold_probs(
    items: Sequence[TaggedText],
    model_key: str,
    config: TaggerConfig,
    folds: int = 2,
    progress=None,
    parents: Sequence[int | None] | None = None,
    extra: Callable[[Tagger], list[TaggedText]] | None = None,
) -> list[np.ndarray]:
    """Each text's probabilities from a head that did not train on it (for honest calibration).
    ``parents[i]``: the index of the text item i was derived from (an augmented variant), which keeps it in
    its source's fold, so no source is judged by a head that trained on its own variant. ``extra``: texts
    a fold's head yields (self-training's pseudo-labels) that a second head of that fold trains on too."""
    parents = list(parents) if parents is not None else [None] * len(items)
    originals = [i for i in range(len(items)) if parents[i] is None]
    order = sorted(originals, key=lambda i: hashlib.sha256(f"{config.seed}|{i}|{items[i].text}".encode()).hexdigest())
    fold_of = {i: rank % folds for rank, i in enumerate(order)}
    for i, parent in enumerate(parents):
        if parent is not None:
            fold_of[i] = fold_of[parent]
    labels = all_labels(items)
    out: list[np.ndarray | None] = [None] * len(items)
    for fold in range(folds):
        train = [items[i] for i in range(len(items)) if fold_of[i] != fold]
        if not train:
            continue
        head = train_tagger(train, model_key, config, progress, labels)
        if extra is not None:
            head = train_tagger(train + extra(head), model_key, config, progress, labels)
        held = [i for i in range(len(items)) if fold_of[i] == fold]
        for i, probs in zip(held, head.predict_many([items[i].hidden for i in held]), strict=True):
            out[i] = probs
    return [
        p if p is not None else np.zeros((len(items[i].char_start), len(labels)), np.float32) for i, p in enumerate(out)
    ]


def entity_recall(
    docs: Sequence[tuple[str, Sequence[Span], Sequence[Span]]], by: str = "label"
) -> dict[str, dict[str, float | int]]:
    """TAB's entity-level recall: a gold mention counts as protected only when every one of its
    characters is masked. ``docs`` are (text, gold, predicted); grouped by label or identifier."""
    total: dict[str, int] = {}
    hit: dict[str, int] = {}
    for text, gold, predicted in docs:
        mask = np.array(char_mask(predicted, len(text)), dtype=bool)
        for span in gold:
            if by == "identifier":
                group = span.source.split(":", 1)[1] if span.source.startswith("gold:") else "ANY"
            else:
                group = span.label
            total[group] = total.get(group, 0) + 1
            inner = [i for i in range(span.start, span.end) if not text[i].isspace()]
            if all(mask[i] for i in inner):
                hit[group] = hit.get(group, 0) + 1
    return {g: {"mentions": n, "fully_masked": round(hit.get(g, 0) / n, 4)} for g, n in sorted(total.items())}
