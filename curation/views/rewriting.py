"""Optional LM privacy-aware rewriting: rewrite flagged chunks with a local instruct model, verify, fall back.

Why chunks: a small instruct model copies or drifts on long inputs, and a bad rewrite should cost one
chunk, not a whole document. Records are split into chunks of at most ``max_chars`` characters at the
most natural boundary available (blank line > line end > sentence end > whitespace). Only chunks that
hold a flagged span are sent to the model; the others are kept byte-identical.

Why verification: a language model gives no guarantee. Every output is checked (see
:func:`verify_rewrite`): no original target value survives (case- and whitespace-insensitive), the
content outside flagged spans is retained (all numbers, and a minimum fraction of the words), the
length is sane, the output is non-empty and carries no chat-template artifacts. A chunk that fails is
rewritten by the deterministic fallback (the HMAC surrogate engine, see :func:`surrogate_fallback`), and
every chunk is recorded with its action and a value-free reason.

Nothing recorded here (records, reasons, reprs, log lines) contains an original value. The model is
local, so the prompt may show it the values it must replace (``prompt_style="inline"``); with
``prompt_style="tagged"`` it only ever sees typed tags such as ``[PERSON]``.

torch and transformers are imported inside functions so importing this module stays cheap.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.core import spans as S

log = logging.getLogger(__name__)

ACTIONS = ("kept", "rewritten", "fallback")

SYSTEM_PROMPT = (
    "You rewrite text for a privacy-safe training dataset. Replace the rare or identifying details listed "
    "by the user (names, contact details, account numbers, dates, secrets) with plausible fictional ones "
    "of the same kind and format. Keep all common content exactly as it is: every other word, number, "
    "line break and the overall layout. Output only the rewritten text, nothing else."
)
TAGGED_SYSTEM_PROMPT = (
    "You rewrite text for a privacy-safe training dataset. Replace every placeholder in square brackets, "
    "such as [PERSON] or [PHONE_NUMBER], with a plausible fictional value of that kind. Keep all other "
    "content exactly as it is: every word, number, line break and the overall layout. Output only the "
    "rewritten text, nothing else."
)

# Chat-template or role debris that must never reach a dataset.
_ARTIFACT_RE = re.compile(
    r"<\|[^|<>\n]{1,40}\|>|</?s>|\[/?INST\]|<<SYS>>|^\s*(?:system|user|assistant)\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_TAG_RE = re.compile(r"\[[A-Z][A-Z_]{2,}(?:_\d+)?\]")
# A chatty lead-in line ("Sure! Here is the rewritten text:") is removed before verification.
_LEAD_IN_RE = re.compile(
    r"\A\s*(?:sure|okay|ok|certainly|of course|here(?: is|'s| are)|rewritten(?: text)?)\b[^\n]{0,80}:[ \t]*\n",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"\A\s*```[\w-]*[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)
_WORD_RE = re.compile(r"[^\W_]+")
_NUMBER_RE = re.compile(r"\d+")


# --------------------------------------------------------------------------------------------
# Configuration, requests and results


@dataclass(frozen=True)
class RewriteConfig:
    """How the optional rewriting stage runs (off by default: it is slow and the fallback is exact).

    ``model`` None means the embedded SmolLM2-135M-Instruct (the reference model's weights); otherwise a
    local folder (or hub id already in the offline cache) of an instruct model with a chat template.
    """

    enabled: bool = False
    model: str | None = None
    revision: str = ""
    device: str = "auto"  # auto | cpu | cuda | mps
    dtype: str = "auto"  # auto | bfloat16 | float32
    max_chars: int = 512  # chunk size limit, characters
    prompt_style: str = "inline"  # inline: model sees originals + the list to replace; tagged: typed tags
    min_length_ratio: float = 0.5  # len(output) / len(chunk), whitespace-trimmed
    max_length_ratio: float = 1.6
    min_word_retention: float = 0.8  # distinct words (>= 3 chars) outside flagged spans that must survive
    keep_numbers: bool = True  # every number outside flagged spans must survive
    max_new_tokens_ratio: float = 1.5  # generation budget relative to the chunk's token count
    max_new_tokens: int = 768  # hard cap per chunk
    batch_size: int = 4  # chunks per generate() call
    propagate_min_chars: int = 4  # other occurrences of a flagged value this long become targets too

    def __post_init__(self) -> None:
        if self.max_chars < 16:
            raise ValueError("rewriting.max_chars must be at least 16")
        if self.prompt_style not in ("inline", "tagged"):
            raise ValueError("rewriting.prompt_style must be 'inline' or 'tagged'")
        if not 0 < self.min_length_ratio <= 1 <= self.max_length_ratio:
            raise ValueError("rewriting needs 0 < min_length_ratio <= 1 <= max_length_ratio")
        if not 0 <= self.min_word_retention <= 1:
            raise ValueError("rewriting.min_word_retention must be in [0, 1]")
        if self.batch_size < 1 or self.max_new_tokens < 1:
            raise ValueError("rewriting.batch_size and max_new_tokens must be positive")


@dataclass(frozen=True)
class RewriteRequest:
    """One chunk for the generator: the text it sees and the (label, value) targets to replace.

    Holds private values in memory only; the repr never shows them.
    """

    text: str
    targets: tuple[tuple[str, str], ...]
    prompt_style: str = "inline"

    def __repr__(self) -> str:
        return f"RewriteRequest(<redacted>, chars={len(self.text)}, targets={len(self.targets)})"

    def messages(self) -> list[dict[str, str]]:
        """Chat messages for an instruct model (system instruction + the chunk)."""
        if self.prompt_style == "tagged":
            return [
                {"role": "system", "content": TAGGED_SYSTEM_PROMPT},
                {"role": "user", "content": f"Text:\n{self.text}"},
            ]
        listed = "\n".join(f"- {label}: {value}" for label, value in self.targets)
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Details to replace:\n{listed}\n\nText:\n{self.text}"},
        ]


GenerateFn = Callable[[Sequence[RewriteRequest]], list[str]]
# Deterministic replacement of one chunk: (chunk text, spans relative to the chunk) -> new chunk text.
Fallback = Callable[[str, Sequence[S.Span]], str]


@dataclass(frozen=True)
class ChunkRecord:
    """What happened to one chunk; offsets and labels only, never values.

    ``start``/``end`` index the original text, ``new_start``/``new_end`` the rewritten text.
    """

    index: int
    start: int
    end: int
    new_start: int
    new_end: int
    action: str  # kept | rewritten | fallback
    reason: str = ""  # why the model output was rejected (fallback only)
    labels: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "new_start": self.new_start,
            "new_end": self.new_end,
            "action": self.action,
            "reason": self.reason,
            "labels": list(self.labels),
        }


@dataclass(frozen=True)
class RewriteResult:
    """The rewritten document and one record per chunk."""

    text: str
    chunks: list[ChunkRecord]

    @property
    def changed_ranges(self) -> list[tuple[int, int]]:
        """Ranges of the new text written by the model or the fallback (audits may treat them as ours)."""
        return [(c.new_start, c.new_end) for c in self.chunks if c.action != "kept"]

    def counts(self) -> dict[str, int]:
        return {action: sum(c.action == action for c in self.chunks) for action in ACTIONS}


@dataclass
class RewriterStats:
    """Counters for asset metadata and benchmarks."""

    chunks: int = 0
    kept: int = 0
    rewritten: int = 0
    fallback: int = 0
    generated: int = 0
    generate_seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def pass_rate(self) -> float | None:
        """Share of model outputs that passed verification (None before any generation)."""
        return self.rewritten / self.generated if self.generated else None


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""


# --------------------------------------------------------------------------------------------
# Chunking

_LEVELS = (
    re.compile(r"\n[ \t\r\f\v]*\n\s*"),  # paragraph: after a blank-line run
    re.compile(r"\n"),  # line end
    re.compile(r"(?<=[.!?;])[\"')\]]*\s+"),  # sentence end (split after the whitespace)
    re.compile(r"\s+"),  # any whitespace
)


def split_chunks(text: str, max_chars: int = 512, protect: Sequence[S.Span] = ()) -> list[tuple[int, int]]:
    """Cut ``text`` into contiguous ranges ``[start, end)`` of at most ``max_chars`` characters.

    Boundaries are taken from the coarsest level that yields pieces small enough (paragraph > line >
    sentence > whitespace); small neighbouring pieces are merged back up to ``max_chars``. No boundary
    falls strictly inside a ``protect`` span unless the span itself is longer than ``max_chars``. Only a
    run without any boundary is cut hard. The ranges cover the text exactly; empty text gives ``[]``.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    blocked = [(s.start, s.end) for s in S.merge(protect) if s.length > 1]
    pieces = _split_range(text, 0, len(text), 0, max_chars, blocked)
    return _merge_pieces(pieces, max_chars)


def _inside(position: int, blocked: Sequence[tuple[int, int]]) -> bool:
    """Strictly inside one of the sorted, disjoint ``blocked`` ranges (binary search: code files are long)."""
    i = bisect.bisect_right(blocked, (position, math.inf)) - 1
    return i >= 0 and blocked[i][0] < position < blocked[i][1]


def _split_range(
    text: str, a: int, b: int, level: int, max_chars: int, blocked: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    if b - a <= max_chars:
        return [(a, b)] if b > a else []
    if level == len(_LEVELS):
        return _hard_split(a, b, max_chars, blocked)
    cuts = [m.end() for m in _LEVELS[level].finditer(text, a, b) if a < m.end() < b and not _inside(m.end(), blocked)]
    if not cuts:
        return _split_range(text, a, b, level + 1, max_chars, blocked)
    out: list[tuple[int, int]] = []
    for lo, hi in zip([a, *cuts], [*cuts, b], strict=True):
        out.extend(_split_range(text, lo, hi, level + 1, max_chars, blocked))
    return out


def _hard_split(a: int, b: int, max_chars: int, blocked: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """No natural boundary: cut at ``max_chars``, moved back to a protected span's start when possible."""
    out = []
    while b - a > max_chars:
        cut = a + max_chars
        for lo, hi in blocked:
            if lo < cut < hi and lo > a:
                cut = lo
        out.append((a, cut))
        a = cut
    out.append((a, b))
    return out


def _merge_pieces(pieces: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        if out and b - out[-1][0] <= max_chars:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


# --------------------------------------------------------------------------------------------
# Targets and verification


def _squash(text: str) -> str:
    """Comparison form: casefolded, all whitespace removed."""
    return "".join(text.casefold().split())


def contains_value(output: str, value: str) -> bool:
    """True when ``value`` occurs in ``output`` ignoring case and whitespace.

    Values shorter than 4 significant characters must match whole tokens (a bare substring test
    would reject almost every output for a value such as "Al").
    """
    squashed = _squash(value)
    if not squashed:
        return False
    if len(squashed) >= 4:
        return squashed in _squash(output)
    parts = [re.escape(p) for p in value.casefold().split()]
    pattern = r"(?<![^\W_])" + r"\s*".join(parts) + r"(?![^\W_])"
    return re.search(pattern, output.casefold()) is not None


def propagate(text: str, spans: Sequence[S.Span], min_chars: int = 4) -> list[S.Span]:
    """Spans plus every other occurrence (case/space-insensitive) of a flagged value of >= ``min_chars``.

    Why: a name flagged once but repeated unflagged would survive in a chunk that is otherwise kept,
    and would make the model output of a flagged chunk fail verification for the wrong reason.
    """
    out = list(spans)
    seen: set[str] = set()
    for span in spans:
        value = span.text_of(text)
        key = _squash(value)
        if len(key) < min_chars or key in seen:
            continue
        seen.add(key)
        pattern = r"\s*".join(re.escape(ch) for ch in key)
        for match in re.finditer(pattern, text, re.IGNORECASE):
            if match.end() > match.start():
                out.append(S.Span(match.start(), match.end(), span.label, span.score, span.source or "propagated"))
    return S.merge(out)


def _outside_words(chunk: str, spans: Sequence[S.Span]) -> tuple[set[str], set[str]]:
    """Distinct words (>= 3 chars, casefolded) and numbers of ``chunk`` outside the flagged spans."""
    words: set[str] = set()
    numbers: set[str] = set()
    cursor = 0
    for piece_end, next_start in [*((s.start, s.end) for s in S.merge(spans)), (len(chunk), len(chunk))]:
        piece = chunk[cursor:piece_end]
        words.update(w.casefold() for w in _WORD_RE.findall(piece) if len(w) >= 3 and not w.isdigit())
        numbers.update(_NUMBER_RE.findall(piece))
        cursor = next_start
    return words, numbers


def verify_rewrite(
    chunk: str,
    output: str,
    spans: Sequence[S.Span],
    config: RewriteConfig,
    extra_artifacts: Sequence[str] = (),
) -> Verdict:
    """Check one model output against its chunk; the reason names the failed check, never a value.

    * ``empty``: nothing but whitespace came back;
    * ``artifact``: chat-template tokens, role lines or leftover typed tags;
    * ``leak``: an original flagged value survives (case/space-insensitive, see :func:`contains_value`);
    * ``length``: ``len(output) / len(chunk)`` (trimmed) outside ``[min_length_ratio, max_length_ratio]``;
    * ``numbers``: a number outside the flagged spans was dropped or changed (``keep_numbers``);
    * ``retention``: fewer than ``min_word_retention`` of the distinct words (>= 3 letters) outside the
      flagged spans survive; this is how "keep common content" is enforced.
    """
    if not output.strip():
        return Verdict(False, "empty")
    if _ARTIFACT_RE.search(output) or any(tok and tok in output for tok in extra_artifacts):
        return Verdict(False, "artifact")
    if set(_TAG_RE.findall(output)) - set(_TAG_RE.findall(chunk)):
        return Verdict(False, "artifact")
    for span in spans:
        if contains_value(output, span.text_of(chunk)):
            return Verdict(False, "leak")
    ratio = len(output.strip()) / max(1, len(chunk.strip()))
    if not config.min_length_ratio <= ratio <= config.max_length_ratio:
        return Verdict(False, f"length {ratio:.2f}")
    words, numbers = _outside_words(chunk, spans)
    out_words = {w.casefold() for w in _WORD_RE.findall(output)}
    if config.keep_numbers and not numbers <= set(_NUMBER_RE.findall(output)):
        return Verdict(False, "numbers")
    if words:
        kept = len(words & out_words) / len(words)
        if kept < config.min_word_retention:
            return Verdict(False, f"retention {kept:.2f}")
    return Verdict(True)


def clean_output(raw: str, chunk: str) -> str:
    """Drop a chatty lead-in line and a wrapping code fence, then restore the chunk's outer whitespace.

    Why the whitespace: chunks are joined back verbatim, so their blank lines and indentation belong
    to the document, not to the model.
    """
    text = _LEAD_IN_RE.sub("", raw, count=1)
    if not chunk.lstrip().startswith("```"):
        fenced = _FENCE_RE.match(text)
        if fenced:
            text = fenced.group(1)
    body = text.strip()
    if not body:
        return ""
    lead = chunk[: len(chunk) - len(chunk.lstrip())]
    trail = chunk[len(chunk.rstrip()) :]
    return lead + body + trail


# --------------------------------------------------------------------------------------------
# Fallbacks


def typed_tag_fallback(chunk: str, spans: Sequence[S.Span]) -> str:
    """Every span replaced by ``[LABEL]``: the fallback of last resort (no key, no engine)."""
    out, cursor = [], 0
    for span in S.merge(spans):
        out.append(chunk[cursor : span.start])
        out.append(f"[{span.label}]")
        cursor = span.end
    out.append(chunk[cursor:])
    return "".join(out)


def surrogate_fallback(engine: Any, scope_id: Any, text: str, spans: Sequence[S.Span]) -> Fallback:
    """A per-chunk fallback over :class:`curation.views.surrogates.SurrogateEngine` for one document.

    Feeds the engine every (label, value) of the whole document first, so name variants split over
    chunks still resolve to one identity, then rewrites each chunk with ``engine.apply`` under the same
    scope (the engine is deterministic per scope, so a value gets the same surrogate in every chunk and
    in the ``surrogate_view``). Call ``engine.register_originals`` over the batch first, as
    ``surrogate_stage`` does, and store ``engine.records()`` in the vault afterwards.
    """
    engine.prepare(scope_id, [(s.label, s.text_of(text)) for s in S.merge(spans)])

    def fallback(chunk: str, chunk_spans: Sequence[S.Span]) -> str:
        return engine.apply(chunk, chunk_spans, scope_id).text

    return fallback


def _scrub(chunk: str, output: str, spans: Sequence[S.Span]) -> str:
    """Typed tags for any original value still present in a fallback output (belt and braces)."""
    for span in spans:
        value = span.text_of(chunk)
        if contains_value(output, value):
            pattern = r"\s*".join(re.escape(ch) for ch in _squash(value))
            output = re.sub(pattern, f"[{span.label}]", output, flags=re.IGNORECASE)
    return output


# --------------------------------------------------------------------------------------------
# The local instruct model


class LocalInstructGenerator:
    """Greedy, bounded generation with a local instruct model (default: the embedded SmolLM2 instruct).

    The embedded model is loaded through :class:`curation.score.scorer.ReferenceScorer`, so the GGUF is
    converted once and shared with scoring; pass ``scorer`` to reuse an already loaded one.
    """

    def __init__(self, config: RewriteConfig | None = None, scorer: Any = None) -> None:
        self.config = config or RewriteConfig()
        self._scorer = scorer
        self._model: Any = None
        self._tokenizer: Any = None
        self._device = "cpu"

    def _reference(self) -> Any:
        if self._scorer is None:
            from curation.score.scorer import EMBEDDED_MODEL, ReferenceScorer, ScoringConfig

            self._scorer = ReferenceScorer(
                ScoringConfig(
                    model=self.config.model or EMBEDDED_MODEL,
                    revision=self.config.revision,
                    device=self.config.device,
                    dtype=self.config.dtype,
                )
            )
        return self._scorer

    def load(self) -> None:
        if self._model is not None:
            return
        scorer = self._reference()
        scorer.load()
        # ReferenceScorer keeps the loaded weights private; reuse them rather than loading twice.
        self._model = scorer._model
        self._tokenizer = scorer._tokenizer
        self._device = str(next(self._model.parameters()).device)
        if getattr(self._tokenizer, "chat_template", None) is None:
            raise RuntimeError("the rewriting model's tokenizer has no chat template; use an instruct model")

    @property
    def model_id(self) -> str:
        return self._reference().description["model_id"]

    @property
    def special_tokens(self) -> list[str]:
        self.load()
        return [t for t in self._tokenizer.all_special_tokens if t]

    def n_tokens(self, text: str) -> int:
        self.load()
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def __call__(self, requests: Sequence[RewriteRequest]) -> list[str]:
        """Outputs for one batch, in order (left-padded, greedy, stops at end of turn)."""
        if not requests:
            return []
        import torch

        self.load()
        tok = self._tokenizer
        prompts = [tok.apply_chat_template(r.messages(), tokenize=False, add_generation_prompt=True) for r in requests]
        budget = max(self.n_tokens(r.text) for r in requests)
        max_new = min(self.config.max_new_tokens, math.ceil(budget * self.config.max_new_tokens_ratio) + 16)
        side = tok.padding_side
        tok.padding_side = "left"
        try:
            enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            tok.padding_side = side
        enc = {k: v.to(self._device) for k, v in enc.items()}
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with torch.inference_mode():
            out = self._model.generate(
                **enc, max_new_tokens=max_new, do_sample=False, pad_token_id=pad, eos_token_id=tok.eos_token_id
            )
        width = enc["input_ids"].shape[1]
        return [tok.decode(row[width:], skip_special_tokens=True) for row in out]


# --------------------------------------------------------------------------------------------
# The rewriter


@dataclass
class _Pending:
    doc: int
    index: int
    start: int
    end: int
    spans: list[S.Span]  # relative to the chunk
    request: RewriteRequest


class Rewriter:
    """Chunks documents, rewrites flagged chunks with ``generate``, verifies, and falls back.

    ``generate`` maps a batch of :class:`RewriteRequest` to raw outputs; default is the local instruct
    model of the config (loaded on first use). Tests pass deterministic generators.
    """

    def __init__(self, config: RewriteConfig | None = None, generate: GenerateFn | None = None) -> None:
        self.config = config or RewriteConfig()
        self._generate = generate
        self.stats = RewriterStats()

    @property
    def generate(self) -> GenerateFn:
        if self._generate is None:
            self._generate = LocalInstructGenerator(self.config)
        return self._generate

    @property
    def model_id(self) -> str:
        """Identity of the rewriting model for the dataset card ("custom" for an injected generator)."""
        gen = self.generate
        return gen.model_id if isinstance(gen, LocalInstructGenerator) else "custom"

    def _artifacts(self) -> list[str]:
        gen = self._generate
        return gen.special_tokens if isinstance(gen, LocalInstructGenerator) else []

    def rewrite_document(self, text: str, spans: Sequence[S.Span], fallback: Fallback | None = None) -> RewriteResult:
        """Rewrite one document (see :meth:`rewrite_documents`)."""
        return self.rewrite_documents([(text, spans, fallback)])[0]

    def rewrite_documents(self, docs: Sequence[tuple[str, Sequence[S.Span], Fallback | None]]) -> list[RewriteResult]:
        """Rewrite several documents, batching model calls across them.

        Per document: spans are checked against the text, merged and propagated to other occurrences of
        the same values; chunks without a span are kept byte-identical; a flagged chunk's model output
        is kept if :func:`verify_rewrite` passes, else the chunk goes to ``fallback(chunk, spans)``
        (typed tags when None). A fallback output that still contains an original is scrubbed to tags.
        """
        cfg = self.config
        plans: list[list[tuple[int, int, list[S.Span]]]] = []
        pending: list[_Pending] = []
        for d, (text, spans, _) in enumerate(docs):
            problems = S.validate_spans(spans, len(text))
            if problems:
                raise ValueError(f"document {d}: " + "; ".join(problems))
            flagged = propagate(text, S.merge(spans), cfg.propagate_min_chars)
            plan = []
            for i, (a, b) in enumerate(split_chunks(text, cfg.max_chars, flagged)):
                local = [
                    S.Span(max(a, s.start) - a, min(b, s.end) - a, s.label) for s in flagged if s.overlaps(S.Span(a, b))
                ]
                plan.append((a, b, local))
                if local:
                    chunk = text[a:b]
                    targets = tuple(dict.fromkeys((s.label, s.text_of(chunk)) for s in local))
                    shown = typed_tag_fallback(chunk, local) if cfg.prompt_style == "tagged" else chunk
                    pending.append(_Pending(d, i, a, b, local, RewriteRequest(shown, targets, cfg.prompt_style)))
            plans.append(plan)

        outputs = self._run(pending)
        verdicts: dict[tuple[int, int], tuple[str, str]] = {}
        artifacts = self._artifacts() if pending else []
        for item, raw in zip(pending, outputs, strict=True):
            chunk = docs[item.doc][0][item.start : item.end]
            if raw is None:
                verdicts[(item.doc, item.index)] = ("fallback", "generation error")
                continue
            cleaned = clean_output(raw, chunk)
            verdict = verify_rewrite(chunk, cleaned, item.spans, cfg, artifacts)
            if verdict.ok:
                verdicts[(item.doc, item.index)] = ("rewritten", cleaned)
            else:
                verdicts[(item.doc, item.index)] = ("fallback", verdict.reason)

        results = []
        for d, ((text, _, fallback), plan) in enumerate(zip(docs, plans, strict=True)):
            pieces: list[str] = []
            records: list[ChunkRecord] = []
            position = 0
            for i, (a, b, local) in enumerate(plan):
                chunk = text[a:b]
                action, payload = verdicts.get((d, i), ("kept", ""))
                reason = ""
                if action == "kept":
                    new = chunk
                elif action == "rewritten":
                    new = payload
                else:
                    reason = payload
                    new = (fallback or typed_tag_fallback)(chunk, local)
                    scrubbed = _scrub(chunk, new, local)
                    if scrubbed != new:
                        reason += "; fallback scrubbed"
                        new = scrubbed
                    kind = re.sub(r"\s*\d[\d.]*", "", reason)  # "retention 0.62" -> "retention"
                    self.stats.reasons[kind] = self.stats.reasons.get(kind, 0) + 1
                labels = tuple(sorted({s.label for s in local}))
                records.append(ChunkRecord(i, a, b, position, position + len(new), action, reason, labels))
                pieces.append(new)
                position += len(new)
                self.stats.chunks += 1
                setattr(self.stats, action, getattr(self.stats, action) + 1)
            results.append(RewriteResult("".join(pieces), records))
        return results

    def _run(self, pending: list[_Pending]) -> list[str | None]:
        """Model outputs for every pending chunk, in order; None where generation raised."""
        outputs: list[str | None] = [None] * len(pending)
        order = sorted(range(len(pending)), key=lambda k: len(pending[k].request.text))
        size = self.config.batch_size
        for lo in range(0, len(order), size):
            batch = order[lo : lo + size]
            started = time.perf_counter()
            try:
                produced = self.generate([pending[k].request for k in batch])
            except Exception as exc:  # a model failure must not stop the stage: fall back
                log.warning(
                    "rewriting model failed on a batch of %d chunks (%s); falling back", len(batch), type(exc).__name__
                )
                continue
            finally:
                self.stats.generate_seconds += time.perf_counter() - started
            if len(produced) != len(batch):
                log.warning("generator returned %d outputs for %d chunks; falling back", len(produced), len(batch))
                continue
            self.stats.generated += len(batch)
            for k, text in zip(batch, produced, strict=True):
                outputs[k] = text
        return outputs
