"""Canary memorization probe: does a model fine-tuned on a view of the data memorize what was planted in it?

After the privacy-aware rewriting paper (seed 002) and the Secret Sharer (Carlini et al., 2019):
fabricated, format-valid, random canaries (access keys, names with phone numbers, account ids) are
planted at several duplication counts into host documents cut from the bundled sample; the real pipeline
makes its views; the embedded model is fine-tuned on (a) the raw text, (b) the training view with its
loss mask (masked tokens stay in context, carry no loss) and (c) the surrogate view. Per variant and
duplication count we measure

- exposure in bits: log2(N + 1) - log2(rank) of the canary among N random candidates of the same format,
  each scored by its log-likelihood given the canary's own prefix. A canary that outranks every candidate
  is past what N candidates can resolve; there the exposure comes from Carlini et al.'s extrapolation (a
  skew-normal fit of the candidates' log-likelihoods), capped at log2 of the format's size;
- prefix extraction: greedy decoding from the prefix reproduces the canary value exactly;
- held-out perplexity on sample records no variant trained on (utility).

The canaries are fabricated, so they may sit in the warehouse; only rates and counts leave it.
torch and transformers are imported inside functions so importing this module stays cheap.
"""

from __future__ import annotations

import json
import math
import random
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

CANARY_KINDS = ("secret", "name_phone", "account_id")
DUPLICATES = (1, 4, 16)
VARIANTS = ("raw", "training_view", "surrogate")
_BASE32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Canary:
    """One planted value: ``prefix + value`` is the sentence planted ``duplicates`` times."""

    canary_id: str
    kind: str
    duplicates: int
    prefix: str
    value: str  # starts with a space: its tokens follow the prefix's tokens unchanged

    @property
    def sentence(self) -> str:
        return f"{self.prefix}{self.value}."


@dataclass(frozen=True)
class ProbeSettings:
    """Everything that changes the probe's numbers (seeded: the same settings give the same canaries)."""

    seed: int = 12
    # Sized for a shared 2-core CPU (the probe must finish within ~30 min there); raise on a real machine.
    canaries_per_cell: int = 1  # canaries per (kind, duplication count)
    duplicates: tuple[int, ...] = DUPLICATES
    host_docs: int = 20  # sample records that carry the canaries and form the training corpus
    heldout_docs: int = 12  # other sample records: held-out perplexity (never trained on)
    candidates: int = 31  # random same-format candidates per canary for exposure
    steps: int = 14  # optimizer steps per variant (about 1.5 passes over the corpus)
    batch_size: int = 4
    seq_len: int = 128
    learning_rate: float = 7e-4
    warmup_steps: int = 2
    # Blocks that train, counted from the top (0 = all). The tied input/output embeddings stay fixed either
    # way; training the top blocks only halves the backward pass on CPU and still memorizes.
    trainable_layers: int = 10
    eval_dtype: str = "auto"  # forward passes for measurement: bf16 where the CPU has it natively
    device: str = "auto"
    # CPU threads: 0 = auto (1 when the machine is oversubscribed: measured here under a load of ~12 per core,
    # one thread scored 5x faster than two, which spin-wait on each other; else every core)
    threads: int = 0
    model: str = "embedded:SmolLM2-135M-Instruct"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["duplicates"] = list(self.duplicates)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> ProbeSettings:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "duplicates" in known:
            known["duplicates"] = tuple(int(d) for d in known["duplicates"])
        return cls(**known)


# --------------------------------------------------------------------------------------------
# Canaries: random, format-valid values


def draw_value(kind: str, rng: random.Random) -> str:
    """A fresh random value of the kind's format (with its leading space)."""
    if kind == "secret":  # AWS access key id layout: AKIA + 16 base32 characters
        return " AKIA" + "".join(rng.choice(_BASE32) for _ in range(16))
    if kind == "name_phone":  # NANP: area code and exchange start with 2-9
        area = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
        exchange = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
        return f" ({area}) {exchange}-{rng.randint(0, 9999):04d}"
    if kind == "account_id":
        return f" ACCT-{rng.randint(0, 99_999_999):08d}"
    raise ValueError(f"unknown canary kind {kind!r}; expected one of {CANARY_KINDS}")


def format_bits(kind: str) -> float:
    """log2 of the number of values the kind's format allows (the ceiling of exposure)."""
    return {"secret": 16 * math.log2(32), "name_phone": math.log2(800 * 800 * 10_000), "account_id": math.log2(1e8)}[
        kind
    ]


_SERVICES = ("billing", "payments", "search", "reporting", "ledger", "ingest", "exports", "mailer", "backup")


def _prefix(kind: str, first: str, last: str, rng: random.Random) -> str:
    if kind == "secret":
        return f"The {rng.choice(_SERVICES)} access key id for {first} {last} is"
    if kind == "name_phone":
        return f"You can reach {first} {last} on"
    return f"The account number of {first} {last} is"


def make_canaries(settings: ProbeSettings) -> list[Canary]:
    """``canaries_per_cell`` canaries per (kind, duplication count), each with its own fabricated person."""
    from faker import Faker

    rng = random.Random(settings.seed)
    fake = Faker("en_US")
    fake.seed_instance(settings.seed)
    out, seen = [], set()
    for duplicates in settings.duplicates:
        for kind in CANARY_KINDS:
            for i in range(settings.canaries_per_cell):
                value = draw_value(kind, rng)
                while value in seen:
                    value = draw_value(kind, rng)
                seen.add(value)
                prefix = _prefix(kind, fake.first_name(), fake.last_name(), rng)
                out.append(Canary(f"canary-{kind}-x{duplicates}-{i}", kind, duplicates, prefix, value))
    return out


def candidate_values(canary: Canary, n: int, seed: int, exclude: set[str]) -> list[str]:
    """``n`` distinct random values of the canary's format, none of them a planted value."""
    rng = random.Random(f"{seed}|{canary.canary_id}")
    out: set[str] = set()
    while len(out) < n:
        value = draw_value(canary.kind, rng)
        if value not in exclude:
            out.add(value)
    return sorted(out)


@dataclass
class CanaryCorpus:
    """The probe's corpus: host records with canaries planted, held-out records, and where each canary went."""

    records: list[dict]
    heldout: list[dict]
    canaries: list[Canary]
    placements: dict[str, list[str]] = field(default_factory=dict)  # canary_id -> host record ids


def build_canary_corpus(sample: Sequence[dict], settings: ProbeSettings) -> CanaryCorpus:
    """Split the sample into hosts and held-out records (seeded) and append each canary's sentence, as a
    new line, to ``duplicates`` distinct hosts. Hosts keep their supplied labels; canaries get none, so the
    pipeline has to find them on its own."""
    need = settings.host_docs + settings.heldout_docs
    if len(sample) < need or settings.host_docs < max(settings.duplicates):
        raise ValueError(
            f"the sample has {len(sample)} records; the probe needs host_docs + heldout_docs = {need} and at "
            f"least {max(settings.duplicates)} hosts (the largest duplication count)"
        )
    order = list(range(len(sample)))
    random.Random(settings.seed).shuffle(order)
    hosts = [json.loads(json.dumps(sample[i])) for i in order[: settings.host_docs]]
    heldout = [sample[i] for i in order[settings.host_docs : need]]
    canaries = make_canaries(settings)
    rng = random.Random(settings.seed + 1)
    placements: dict[str, list[str]] = {}
    load = [0] * len(hosts)
    for canary in sorted(canaries, key=lambda c: -c.duplicates):
        # the least-loaded hosts first (ties at random), so canaries spread over the corpus
        picks = sorted(range(len(hosts)), key=lambda i: (load[i], rng.random()))[: canary.duplicates]
        for i in picks:
            load[i] += 1
            hosts[i]["text"] = hosts[i]["text"].rstrip("\n") + "\n" + canary.sentence
        placements[canary.canary_id] = sorted(hosts[i]["id"] for i in picks)
    for host in hosts:  # ids and scopes of their own: this is a different corpus from the sample
        host["id"] = f"probe-{host['id']}"
    placements = {cid: [f"probe-{h}" for h in ids] for cid, ids in placements.items()}
    return CanaryCorpus(hosts, heldout, canaries, placements)


def write_jsonl(path: Path, records: Sequence[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# The model


def model_folder(model: str) -> str:
    """A local folder of transformers weights: the cached safetensors copy of the embedded GGUF, or a path."""
    from curation.score.scorer import ReferenceScorer, ScoringConfig

    return ReferenceScorer(ScoringConfig(model=model, device="cpu"))._resolve()


def load_model(settings: ProbeSettings, dtype: str = "float32"):
    """(model, tokenizer, device) with fresh weights from the reference model's folder."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from curation.score.scorer import resolve_device

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.set_num_threads(cpu_threads(settings.threads))
    folder = model_folder(settings.model)
    device = resolve_device(settings.device)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype)).to(device)
    return model, tokenizer, device


def cpu_threads(configured: int) -> int:
    """Threads for torch on CPU: the configured number, else 1 on an oversubscribed machine, else all cores."""
    import os

    if configured > 0:
        return configured
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busy = hasattr(os, "getloadavg") and os.getloadavg()[0] > 2 * cores
    return 1 if busy else max(1, cores)


def measurement_dtype(settings: ProbeSettings, device: str) -> str:
    from curation.score.scorer import resolve_dtype

    return resolve_dtype(settings.eval_dtype, device)


# --------------------------------------------------------------------------------------------
# Fine-tuning


@dataclass
class TrainingDoc:
    """One document as a training example: text plus character spans that carry no loss."""

    text: str
    no_loss_spans: list[tuple[int, int]] = field(default_factory=list)


def training_blocks(docs: Sequence[TrainingDoc], tokenizer, seq_len: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents (seeded order, EOS-separated) packed into ``seq_len`` blocks: ids and labels, where a
    token under a no-loss span gets label -100 (it stays in the input as context)."""
    from curation.core.spans import Span
    from curation.policy.masking import loss_mask_for_tokenizer

    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    ids: list[int] = []
    labels: list[int] = []
    eos = tokenizer.eos_token_id
    for i in order:
        doc = docs[i]
        tokens, masked = loss_mask_for_tokenizer(
            doc.text, [Span(a, b, "MASK") for a, b in doc.no_loss_spans], tokenizer
        )
        ids += [*tokens, eos]
        labels += [-100 if m else t for t, m in zip(tokens, masked, strict=True)] + [eos]
    n_blocks = max(1, len(ids) // seq_len)
    pad = n_blocks * seq_len - len(ids)
    if pad > 0:  # shorter than one block: pad the only block, padding carries no loss
        ids += [eos] * pad
        labels += [-100] * pad
    shape = (n_blocks, seq_len)
    return np.array(ids[: n_blocks * seq_len]).reshape(shape), np.array(labels[: n_blocks * seq_len]).reshape(shape)


def freeze_for_probe(model, trainable_layers: int) -> None:
    """Freeze the tied embeddings, and every decoder block below the top ``trainable_layers`` (0 = none)."""
    model.get_input_embeddings().weight.requires_grad_(False)
    layers = model.model.layers
    if trainable_layers <= 0 or trainable_layers >= len(layers):
        return
    for layer in layers[: len(layers) - trainable_layers]:
        layer.requires_grad_(False)


def fine_tune(
    docs: Sequence[TrainingDoc],
    settings: ProbeSettings,
    *,
    label: str = "",
    progress: bool = True,
) -> tuple[object, object, dict]:
    """Fine-tune fresh weights on ``docs`` for ``settings.steps`` AdamW steps (fp32, seeded); returns the
    model, its tokenizer and training stats (loss tokens, first/last loss, seconds)."""
    import torch
    from tqdm.auto import tqdm

    torch.manual_seed(settings.seed)
    model, tokenizer, device = load_model(settings, "float32")
    freeze_for_probe(model, settings.trainable_layers)
    ids, labels = training_blocks(docs, tokenizer, settings.seq_len, settings.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=settings.learning_rate, weight_decay=0.0)

    def lr_at(step: int) -> float:
        warm = max(1, settings.warmup_steps)
        return min(1.0, (step + 1) / warm)

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    rng = np.random.default_rng(settings.seed)
    order: list[int] = []
    losses: list[float] = []
    loss_tokens = 0
    started = time.perf_counter()
    model.train()
    bar = tqdm(range(settings.steps), desc=f"fine-tune {label}".strip(), disable=not progress, leave=True)
    for _ in bar:
        batch = []
        while len(batch) < settings.batch_size:
            if not order:  # one pass over the blocks in a fresh seeded order, then the next
                order = list(rng.permutation(len(ids)))
            batch.append(order.pop())
        x = torch.tensor(ids[batch], device=device)
        y = torch.tensor(labels[batch], device=device)
        counted = int((y[:, 1:] != -100).sum())
        if counted == 0:
            continue
        loss = model(input_ids=x, labels=y).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        loss_tokens += counted
        losses.append(float(loss.detach()))
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
    model.eval()
    stats = {
        "steps": settings.steps,
        "blocks": int(ids.shape[0]),
        "corpus_tokens": int(ids.size),
        "loss_tokens_per_block": round(float((labels != -100).sum()) / max(1, ids.shape[0]), 1),
        "trained_loss_tokens": loss_tokens,
        "first_loss": round(losses[0], 4) if losses else None,
        "last_loss": round(losses[-1], 4) if losses else None,
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    return model, tokenizer, stats


# --------------------------------------------------------------------------------------------
# Measurements


def _to_measurement_dtype(model, dtype: str):
    import torch

    return model.to(getattr(torch, dtype)).eval()


def continuation_logprobs(model, tokenizer, prefix: str, continuations: Sequence[str], batch: int = 64) -> np.ndarray:
    """Sum of log-probabilities of each continuation's tokens given ``prefix`` (one shared prefix pass; the
    output layer in float32)."""
    return continuation_scores(model, tokenizer, prefix, continuations, batch)[0]


def continuation_scores(
    model, tokenizer, prefix: str, continuations: Sequence[str], batch: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """(log-probability of each continuation given ``prefix``, whether greedy decoding from ``prefix`` emits
    exactly its tokens, i.e. each token is the argmax given the ones before: greedy extraction without a
    decoding loop)."""
    import torch

    device = next(model.parameters()).device
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    prefix_ids = [start, *tokenizer(prefix, add_special_tokens=False)["input_ids"]]
    cont_ids = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in continuations]
    weight = model.lm_head.weight.float()
    out = np.zeros(len(continuations), dtype=np.float64)
    greedy = np.zeros(len(continuations), dtype=bool)
    with torch.inference_mode():
        first = model.model(input_ids=torch.tensor([prefix_ids], device=device), use_cache=True)
        last_hidden = first.last_hidden_state[0, -1].float()
        first_logp = torch.log_softmax(last_hidden @ weight.T, dim=-1)
        for lo in range(0, len(cont_ids), batch):
            group = cont_ids[lo : lo + batch]
            width = max(len(c) for c in group)
            x = torch.full((len(group), width), tokenizer.pad_token_id or 0, dtype=torch.long)
            for b, c in enumerate(group):
                x[b, : len(c)] = torch.tensor(c)
            cache = _expanded_cache(first.cache, len(group))
            attention = torch.ones((len(group), len(prefix_ids) + width), dtype=torch.long)
            hidden = model.model(
                input_ids=x.to(device), cache=cache, attention_mask=attention.to(device), use_cache=True
            ).last_hidden_state
            lengths = torch.tensor([len(c) for c in group])
            totals = first_logp[x[:, 0].to(device)].cpu().double()
            on_path = (first_logp.argmax().cpu() == x[:, 0]).clone()
            if width > 1:
                logp = torch.log_softmax(hidden[:, :-1].float() @ weight.T, dim=-1)
                picked = logp.gather(2, x[:, 1:].to(device)[..., None]).squeeze(-1).cpu().double()
                valid = torch.arange(width - 1)[None, :] < (lengths[:, None] - 1)
                totals += (picked * valid).sum(1)
                argmax_ok = (logp.argmax(-1).cpu() == x[:, 1:]) | ~valid
                on_path &= argmax_ok.all(1)
            out[lo : lo + len(group)] = totals.numpy()
            greedy[lo : lo + len(group)] = on_path.numpy()
    return out, greedy


def _expanded_cache(cache, n: int):
    """A copy of a batch-1 KV cache repeated ``n`` times along the batch (the shared prefix)."""
    import copy

    expanded = copy.deepcopy(cache)
    expanded.batch_repeat_interleave(n)
    return expanded


def exposure_bits(canary_logp: float, candidate_logps: np.ndarray, ceiling_bits: float) -> tuple[float, float, int]:
    """(exposure, rank-only exposure, rank). Rank 1 = more likely than every candidate; there the estimate
    extrapolates with a skew-normal fit of the candidates (Carlini et al. 2019), capped at the format's size."""
    n = len(candidate_logps)
    rank = 1 + int((candidate_logps >= canary_logp).sum())
    by_rank = math.log2(n + 1) - math.log2(rank)
    if rank > 1:
        return by_rank, by_rank, rank
    from scipy.stats import skewnorm

    # fit on negative log-likelihoods; the share of the format at least as likely is the lower tail
    params = skewnorm.fit(-candidate_logps)
    tail = float(skewnorm.cdf(-canary_logp, *params))
    extrapolated = -math.log2(tail) if tail > 0 else ceiling_bits
    return min(ceiling_bits, max(by_rank, extrapolated)), by_rank, rank


def greedy_extracts(model, tokenizer, canary: Canary) -> bool:
    """Greedy decoding from the canary's prefix reproduces its value exactly."""
    import torch

    device = next(model.parameters()).device
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    prefix_ids = [start, *tokenizer(canary.prefix, add_special_tokens=False)["input_ids"]]
    target = tokenizer(canary.value, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([prefix_ids], device=device),
            attention_mask=torch.ones((1, len(prefix_ids)), dtype=torch.long, device=device),
            max_new_tokens=len(target) + 2,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
        )
    text = tokenizer.decode(out[0, len(prefix_ids) :], skip_special_tokens=True)
    return text.startswith(canary.value) or text.strip().startswith(canary.value.strip())


def heldout_perplexity(
    model, tokenizer, texts: Sequence[str], max_tokens: int = 256, targets: Sequence[Sequence] | None = None
) -> float:
    """exp(mean token NLL) over held-out texts (each truncated to ``max_tokens``), output layer in fp32."""
    return heldout_perplexities(model, tokenizer, texts, max_tokens, targets)[0]


def heldout_perplexities(
    model, tokenizer, texts: Sequence[str], max_tokens: int = 256, targets: Sequence[Sequence] | None = None
) -> tuple[float, float]:
    """(perplexity over every held-out token, over the tokens outside the records' labeled private spans):
    the second is the utility a sanitized training set is meant to keep."""
    import torch

    device = next(model.parameters()).device
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    weight = model.lm_head.weight.float()
    total = count = kept_total = kept_count = 0.0
    with torch.inference_mode():
        for i, text in enumerate(texts):
            enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            ids = [start, *enc["input_ids"][: max_tokens - 1]]
            if len(ids) < 2:
                continue
            offsets = enc["offset_mapping"][: len(ids) - 1]
            spans = list(targets[i]) if targets else []
            private = np.array([any(a < e and b > s for s, e in spans) for a, b in offsets], dtype=bool)
            x = torch.tensor([ids], device=device)
            hidden = model.model(input_ids=x).last_hidden_state[0, :-1].float()
            logp = torch.log_softmax(hidden @ weight.T, dim=-1)
            nll = -logp.gather(1, x[0, 1:, None]).squeeze(1).double().cpu().numpy()
            total += float(nll.sum())
            count += len(nll)
            kept_total += float(nll[~private].sum())
            kept_count += int((~private).sum())
    ppl = math.exp(total / count) if count else float("nan")
    return ppl, (math.exp(kept_total / kept_count) if kept_count else float("nan"))


@dataclass
class CanaryMeasurement:
    canary_id: str
    kind: str
    duplicates: int
    exposure_bits: float
    exposure_rank_bits: float
    rank: int
    extracted: bool
    value_logprob: float


def measure_model(
    model,
    tokenizer,
    canaries: Sequence[Canary],
    heldout_texts: Sequence[str],
    settings: ProbeSettings,
    *,
    label: str = "",
    progress: bool = True,
    heldout_targets: Sequence[Sequence] | None = None,
) -> tuple[list[CanaryMeasurement], float]:
    """Exposure and extraction of every canary, and held-out perplexity, for one model."""
    from tqdm.auto import tqdm

    planted = {c.value for c in canaries}
    rows = []
    for canary in tqdm(canaries, desc=f"measure {label}".strip(), disable=not progress, leave=True):
        candidates = candidate_values(canary, settings.candidates, settings.seed, planted)
        logps, greedy = continuation_scores(model, tokenizer, canary.prefix, [canary.value, *candidates])
        exposure, by_rank, rank = exposure_bits(float(logps[0]), logps[1:], format_bits(canary.kind))
        rows.append(
            CanaryMeasurement(
                canary.canary_id,
                canary.kind,
                canary.duplicates,
                round(exposure, 3),
                round(by_rank, 3),
                rank,
                bool(greedy[0]),
                round(float(logps[0]), 3),
            )
        )
    if heldout_targets is not None:
        return rows, heldout_perplexities(model, tokenizer, heldout_texts, targets=heldout_targets)
    return rows, heldout_perplexity(model, tokenizer, heldout_texts)


# --------------------------------------------------------------------------------------------
# The whole probe over the pipeline's views


@dataclass
class ProbeInputs:
    """What the probe trains on, per variant, plus which canaries detection masked (for the report)."""

    variants: dict[str, list[TrainingDoc]]
    heldout_texts: list[str]
    canaries: list[Canary]
    canary_masked: dict[str, float] = field(default_factory=dict)  # canary_id -> share of its occurrences masked
    heldout_targets: list[list[tuple[int, int]]] = field(default_factory=list)  # labeled private spans per text


def canary_mask_coverage(
    canaries: Sequence[Canary], texts: dict[str, str], spans: dict[str, list[tuple[int, int]]]
) -> dict[str, float]:
    """Per canary: the share of its planted occurrences whose value characters are all under a mask span."""
    out = {}
    for canary in canaries:
        value = canary.value.strip()
        found = covered = 0
        for doc_id, text in texts.items():
            start = text.find(canary.prefix + canary.value)
            while start >= 0:
                a = start + len(canary.prefix) + (len(canary.value) - len(canary.value.lstrip()))
                b = a + len(value)
                found += 1
                mask = np.zeros(len(text), dtype=bool)
                for s, e in spans.get(doc_id, []):
                    mask[s:e] = True
                covered += bool(mask[a:b].all())
                start = text.find(canary.prefix + canary.value, start + 1)
        out[canary.canary_id] = covered / found if found else float("nan")
    return out


def run_probe(
    inputs: ProbeInputs,
    settings: ProbeSettings,
    *,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> dict:
    """Untrained baseline, then one fine-tune per variant; returns per-canary rows and the summary."""
    started = time.perf_counter()
    from curation.score.scorer import resolve_device

    device = resolve_device(settings.device)
    base, tokenizer, _ = load_model(settings, measurement_dtype(settings, device))
    base.eval()
    rows: dict[str, list[CanaryMeasurement]] = {}
    ppl: dict[str, float] = {}
    training: dict[str, dict] = {}
    targets = inputs.heldout_targets or [[] for _ in inputs.heldout_texts]
    nontarget: dict[str, float] = {}
    rows["untrained"], (ppl["untrained"], nontarget["untrained"]) = measure_model(
        base, tokenizer, inputs.canaries, inputs.heldout_texts, settings, label="untrained", progress=progress,
        heldout_targets=targets,
    )  # fmt: skip
    del base
    for variant in VARIANTS:
        docs = inputs.variants[variant]
        model, tokenizer, stats = fine_tune(docs, settings, label=variant, progress=progress)
        training[variant] = stats
        model = _to_measurement_dtype(model, measurement_dtype(settings, device))
        rows[variant], (ppl[variant], nontarget[variant]) = measure_model(
            model, tokenizer, inputs.canaries, inputs.heldout_texts, settings, label=variant, progress=progress,
            heldout_targets=targets,
        )  # fmt: skip
        log(f"{variant}: trained {stats['steps']} steps in {stats['train_seconds']}s, held-out ppl {ppl[variant]:.3f}")
        del model
    summary = summarize(rows, ppl, inputs, settings)
    for variant, value in nontarget.items():
        summary["metrics"][f"{variant}_heldout_ppl_nontarget"] = round(value, 4)
    summary["metrics"]["ppl_ratio_training_vs_raw_nontarget"] = round(nontarget["training_view"] / nontarget["raw"], 4)
    summary["training"] = training
    summary["seconds"] = round(time.perf_counter() - started, 1)
    summary["device"] = device
    summary["measurement_dtype"] = measurement_dtype(settings, device)
    return {"summary": summary, "rows": {k: [asdict(r) for r in v] for k, v in rows.items()}}


def summarize(
    rows: dict[str, list[CanaryMeasurement]], ppl: dict[str, float], inputs: ProbeInputs, settings: ProbeSettings
) -> dict:
    """Mean exposure and extraction rate per (variant, duplication count), perplexities and their ratio."""
    table = []
    flat: dict[str, float | int | None] = {}
    for variant, measured in rows.items():
        for d in settings.duplicates:
            cell = [r for r in measured if r.duplicates == d]
            exposure = float(np.mean([r.exposure_bits for r in cell])) if cell else float("nan")
            by_rank = float(np.mean([r.exposure_rank_bits for r in cell])) if cell else float("nan")
            extraction = float(np.mean([r.extracted for r in cell])) if cell else float("nan")
            table.append(
                {
                    "variant": variant,
                    "duplicates": d,
                    "canaries": len(cell),
                    "exposure_bits": round(exposure, 3),
                    "exposure_rank_bits": round(by_rank, 3),
                    "extraction_rate": round(extraction, 4),
                    "heldout_ppl": round(ppl[variant], 4),
                }
            )
            flat[f"{variant}_exposure_bits_{d}"] = round(exposure, 3)
            flat[f"{variant}_exposure_rank_bits_{d}"] = round(by_rank, 3)
            flat[f"{variant}_extraction_{d}"] = round(extraction, 4)
    for variant, value in ppl.items():
        flat[f"{variant}_heldout_ppl"] = round(value, 4)
    flat["ppl_ratio_training_vs_raw"] = round(ppl["training_view"] / ppl["raw"], 4)
    masked = inputs.canary_masked
    missed = sorted(cid for cid, share in masked.items() if not share == 1.0)
    return {
        "table": table,
        "metrics": flat,
        "settings": settings.to_dict(),
        "canaries": len(inputs.canaries),
        "canaries_fully_masked": len(masked) - len(missed),
        "canaries_missed_by_detection": len(missed),
        "missed_by_kind": {k: sum(1 for cid in missed if f"-{k}-" in cid) for k in CANARY_KINDS},
        "max_rank_exposure_bits": round(math.log2(settings.candidates + 1), 3),
    }


def save_exposure_plot(summary: dict, path: Path) -> Path:
    """Exposure (bits) against duplication count, one line per variant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5, 4))
    variants = list(dict.fromkeys(row["variant"] for row in summary["table"]))
    for variant in variants:
        cells = [r for r in summary["table"] if r["variant"] == variant]
        ax.plot([r["duplicates"] for r in cells], [r["exposure_bits"] for r in cells], marker="o", label=variant)
    ax.set_xscale("log", base=2)
    ax.set_xticks(summary["settings"]["duplicates"], [str(d) for d in summary["settings"]["duplicates"]])
    ax.axhline(summary["max_rank_exposure_bits"], color="grey", linestyle=":", linewidth=1)
    ax.set(xlabel="canary duplication count", ylabel="exposure (bits)", title="Canary exposure by training view")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def format_table(summary: dict) -> str:
    """A plain-text table of the probe for the terminal."""
    head = f"{'variant':<14} {'dup':>4} {'n':>3} {'exposure':>9} {'rank-bits':>9} {'extracted':>9} {'ppl':>8}"
    lines = [head, "-" * len(head)]
    for r in summary["table"]:
        lines.append(
            f"{r['variant']:<14} {r['duplicates']:>4} {r['canaries']:>3} {r['exposure_bits']:>9.2f} "
            f"{r['exposure_rank_bits']:>9.2f} {r['extraction_rate']:>9.2f} {r['heldout_ppl']:>8.3f}"
        )
    return "\n".join(lines)


PROBE_STAGE = "canary_probe"


def plot_file(batch_id: str) -> str:
    """Where the exposure plot of a batch's probe goes (relative to the base dir)."""
    return f".curation/policy/plots/canary/{batch_id}/canary_exposure.png"


def markdown_table(summary: dict) -> str:
    """The probe's table in Markdown (card and asset metadata)."""
    rows = [
        "| variant | duplicates | canaries | exposure (bits) | rank-only exposure (bits) | extraction | held-out ppl |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary["table"]:
        rows.append(
            f"| {r['variant']} | {r['duplicates']} | {r['canaries']} | {r['exposure_bits']:.2f} | "
            f"{r['exposure_rank_bits']:.2f} | {r['extraction_rate']:.2f} | {r['heldout_ppl']:.3f} |"
        )
    return "\n".join(rows) + "\n"
