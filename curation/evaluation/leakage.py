"""Leakage report of a release: does private information survive in the views it ships (or trains on)?

After the Privasis evaluation (seed 001), per view and label:

- direct leak: an original value of the batch still appears in the view, verbatim or case/space-
  normalized (surrogate and redacted views; text we inserted, surrogates and tags, is not searched); in
  the training view, an occurrence of an original value with any token that carries loss;
- retention: the share of non-target characters kept unchanged (non-target = outside supplied labels and
  planted canaries), measured by aligning each view with its original; in the training view, the share of
  non-target tokens that still carry loss; for surrogates also the format-kept rate (the replacement has
  the original's shape: digits per digit, letter runs by case, punctuation kept);
- inference leak: with the released text around a masked value as context, does a language model (the
  embedded reference model, or a stronger local one) rank the true value above same-label decoys?

Original values come from the warehouse of the run that made the release (masked spans and supplied
labels, as the residual leak gate uses them). The report holds counts and rates only, never a value.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from curation.core.matching import normalize_for_match
from curation.core.spans import Span, merge
from curation.core.warehouse import Warehouse
from curation.gates.audit import find_known_values

VIEWS = ("surrogate", "redacted", "training_view")
LEAKAGE_STAGE = "leakage_report"


@dataclass(frozen=True)
class LeakageSettings:
    """How the report is measured; the inference probe is sampled to keep it cheap on CPU."""

    inference: bool = True
    inference_model: str = "embedded:SmolLM2-135M-Instruct"  # or a local transformers folder / model id
    values_per_label: int = 1  # masked values probed per label and view (seeded sample)
    decoys: int = 5  # other same-label values (or same-shape random strings) ranked against the true one
    context_chars: int = 160  # released text before the value given as context
    suffix_chars: int = 12  # released text after it, scored with every candidate
    seed: int = 5
    device: str = "auto"
    eval_dtype: str = "auto"


# --------------------------------------------------------------------------------------------
# Inputs from the warehouse


@dataclass
class BatchTexts:
    """Original documents and their views for one batch (doc_id keyed)."""

    originals: dict[str, str]
    masks: dict[str, list[Span]]
    gold: dict[str, list[Span]]
    redacted: dict[str, str]
    surrogate: dict[str, str]
    surrogate_ranges: dict[str, list[tuple[int, int]]]
    training: dict[str, str]
    loss_spans: dict[str, list[tuple[int, int]]]


def load_batch(warehouse: Warehouse, batch_id: str) -> BatchTexts:
    def rows(sql: str) -> list[tuple]:
        return list(warehouse.query(sql, [batch_id]).iter_rows())

    originals = dict(rows("SELECT doc_id, text FROM documents WHERE batch_id = ?"))
    masks: dict[str, list[Span]] = defaultdict(list)
    for doc_id, a, b, label in rows('SELECT doc_id, "start", "end", label FROM mask_spans WHERE batch_id = ?'):
        masks[doc_id].append(Span(a, b, label))
    gold: dict[str, list[Span]] = defaultdict(list)
    for doc_id, a, b, label in rows(
        'SELECT g.doc_id, g."start", g."end", g.label FROM gold_spans g JOIN documents d USING (doc_id) '
        "WHERE g.dataset = 'corpus' AND d.batch_id = ?"
    ):
        gold[doc_id].append(Span(a, b, label))
    surrogate, ranges = {}, {}
    for doc_id, text, replaced in rows("SELECT doc_id, text, replaced_ranges FROM surrogate_view WHERE batch_id = ?"):
        surrogate[doc_id] = text
        ranges[doc_id] = [(int(a), int(b)) for a, b in json.loads(replaced or "[]")]
    training, loss_spans = {}, {}
    for doc_id, text, spans in rows("SELECT doc_id, text, loss_mask_spans FROM training_view WHERE batch_id = ?"):
        training[doc_id] = text
        loss_spans[doc_id] = [(int(s[0]), int(s[1])) for s in json.loads(spans or "[]")]
    redacted = dict(rows("SELECT doc_id, text FROM redacted_view WHERE batch_id = ?"))
    return BatchTexts(originals, dict(masks), dict(gold), redacted, surrogate, ranges, training, loss_spans)


def original_values(batch: BatchTexts) -> list[tuple[str, str, str]]:
    """(label, value, origin) of every distinct detected (masked) value and every supplied label value."""
    out: dict[tuple[str, str], str] = {}
    for origin, table in (("detected", batch.masks), ("supplied", batch.gold)):
        for doc_id, spans in table.items():
            text = batch.originals.get(doc_id, "")
            for s in spans:
                out.setdefault((s.label, text[s.start : s.end]), origin)
    return [(label, value, origin) for (label, value), origin in sorted(out.items())]


# --------------------------------------------------------------------------------------------
# Direct leak


TAG = re.compile(r"\[[A-Z][A-Z_]*(?:_\d+)?\]")


def released_text_only(text: str, ours: Sequence[tuple[int, int]]) -> str:
    """The text with what we wrote (surrogates, typed tags) blanked, offsets kept."""
    chars = list(text)
    for a, b in [*ours, *(m.span() for m in TAG.finditer(text))]:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def direct_leaks(texts: dict[str, str], values: Sequence[tuple[str, str]]) -> dict[str, dict[str, set[str]]]:
    """label -> {"exact": normalized values found verbatim, "normalized": found verbatim or normalized}."""
    found = find_known_values(sorted(texts.items()), values)
    by_digest = {}
    from curation.gates.audit import value_digest

    for _, value in values:
        norm = normalize_for_match(value)
        by_digest[value_digest(norm)] = norm
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"exact": set(), "normalized": set()})
    for f in found:
        norm = by_digest.get(f.value_sha256, f.value_sha256)
        out[f.label]["normalized"].add(norm)
        if f.kind == "exact":
            out[f.label]["exact"].add(norm)
    return out


def value_pattern(value: str) -> re.Pattern:
    """Case-insensitive, whitespace-flexible, word-edged pattern of a value."""
    parts = [re.escape(p) for p in value.split()]
    left = r"(?<!\w)" if value[:1].isalnum() else ""
    right = r"(?!\w)" if value[-1:].isalnum() else ""
    return re.compile(left + r"\s+".join(parts) + right, re.IGNORECASE)


def training_view_leaks(
    batch: BatchTexts, values: Sequence[tuple[str, str]], tokenizer
) -> tuple[dict[str, set[str]], float | None]:
    """(label -> normalized values with an occurrence whose tokens carry loss, share of non-target tokens
    that carry loss). Occurrences are found case/space-insensitively; a token carries loss unless the loss
    mask covers any of its characters (the projection `masking.loss_mask_for_tokenizer` uses)."""
    patterns = [(label, normalize_for_match(v), value_pattern(v)) for label, v in values if len(v.strip()) >= 4]
    leaked: dict[str, set[str]] = defaultdict(set)
    kept = total = 0
    for doc_id, text in batch.training.items():
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = np.array(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        masked_chars = np.zeros(len(text) + 1, dtype=bool)
        for a, b in batch.loss_spans.get(doc_id, []):
            masked_chars[a:b] = True
        prefix = np.concatenate([[0], np.cumsum(masked_chars)])
        token_masked = (prefix[offsets[:, 1]] - prefix[offsets[:, 0]]) > 0
        target = np.zeros(len(text) + 1, dtype=bool)
        for s in batch.gold.get(doc_id, []):
            target[s.start : s.end] = True
        target_prefix = np.concatenate([[0], np.cumsum(target)])
        token_target = (target_prefix[offsets[:, 1]] - target_prefix[offsets[:, 0]]) > 0
        real = offsets[:, 1] > offsets[:, 0]
        total += int((real & ~token_target).sum())
        kept += int((real & ~token_target & ~token_masked).sum())
        folded = normalize_for_match(text)
        for label, norm, pattern in patterns:
            if norm not in folded:  # cheap pre-filter: no normalized occurrence at all
                continue
            for m in pattern.finditer(text):
                overlap = (offsets[:, 0] < m.end()) & (offsets[:, 1] > m.start()) & real
                if (overlap & ~token_masked).any():
                    leaked[label].add(norm)
                    break
    return leaked, (kept / total if total else None)


# --------------------------------------------------------------------------------------------
# Retention and format


def retention(original: str, view: str, targets: Sequence[Span]) -> tuple[int, int]:
    """(non-target characters kept unchanged, non-target characters), from aligning the view with the
    original (difflib matching blocks, no junk heuristic)."""
    kept_mask = np.zeros(len(original), dtype=bool)
    matcher = difflib.SequenceMatcher(None, original, view, autojunk=False)
    for block in matcher.get_matching_blocks():
        kept_mask[block.a : block.a + block.size] = True
    target = np.zeros(len(original), dtype=bool)
    for s in targets:
        target[s.start : s.end] = True
    return int((kept_mask & ~target).sum()), int((~target).sum())


_LETTERS = re.compile(r"[^\W\d_]+")


def shape(value: str) -> str:
    """Format signature: each digit as 9, each letter run by its case (A, a or Aa), everything else kept."""

    def run(m: re.Match) -> str:
        word = m.group()
        if word.isupper():
            return "A"
        if word.islower():
            return "a"
        return "Aa" if word[0].isupper() and word[1:].islower() else "Aa*"

    return re.sub(r"\d", "9", _LETTERS.sub(run, value))


def paired_replacements(original: str, view: str, spans: Sequence[Span], ranges: Sequence[tuple[int, int]]):
    """(original span, view range) pairs when the view is the original with each merged span replaced in
    order (deterministic surrogates); None when the texts do not line up (e.g. LM-rewritten chunks)."""
    merged = merge(spans)
    ordered = sorted(ranges)
    if len(merged) != len(ordered):
        return None
    pairs, cursor_o, cursor_v = [], 0, 0
    for span, (a, b) in zip(merged, ordered, strict=True):
        if original[cursor_o : span.start] != view[cursor_v:a]:
            return None
        pairs.append((span, (a, b)))
        cursor_o, cursor_v = span.end, b
    return pairs if original[cursor_o:] == view[cursor_v:] else None


def redacted_positions(original: str, spans: Sequence[Span]) -> list[tuple[Span, tuple[int, int]]]:
    """Where each merged span's typed tag sits in the redacted view (`masking.redact`)."""
    out, shift = [], 0
    for span in merge(spans):
        tag = f"[{span.label}]"
        out.append((span, (span.start + shift, span.start + shift + len(tag))))
        shift += len(tag) - span.length
    return out


# --------------------------------------------------------------------------------------------
# Inference leak


def shaped_decoy(value: str, rng: random.Random) -> str:
    """A random string with the value's shape (digits for digits, letters of the same case)."""
    out = []
    for ch in value:
        if ch.isdigit():
            out.append(str(rng.randint(0, 9)))
        elif ch.isalpha() and ch.isascii():
            letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
            out.append(letter.upper() if ch.isupper() else letter)
        else:
            out.append(ch)
    return "".join(out)


def decoys_for(value: str, label: str, pool: dict[str, list[str]], k: int, rng: random.Random) -> list[str]:
    """Up to ``k`` other values of the same label from the batch, topped up with same-shape random strings."""
    norm = normalize_for_match(value)
    others = [v for v in pool.get(label, []) if normalize_for_match(v) != norm]
    rng.shuffle(others)
    picked = others[:k]
    tries = 0
    while len(picked) < k and tries < 10 * k:
        tries += 1
        decoy = shaped_decoy(value, rng)
        if normalize_for_match(decoy) != norm and decoy not in picked:
            picked.append(decoy)
    return picked


@dataclass
class InferenceProbe:
    """Masked occurrences probed in one view: per label, how many, and how often the true value won."""

    probed: dict[str, int]
    ranked_first: dict[str, int]
    candidates: int


def inference_probe(
    view_name: str,
    batch: BatchTexts,
    settings: LeakageSettings,
    model,
    tokenizer,
) -> InferenceProbe:
    """For a seeded sample of masked values per label: is the true value the most likely candidate, in
    place of its surrogate / tag, given the released text before it (and with the text after it)?"""
    from curation.evaluation.canary import continuation_logprobs

    rng = random.Random(f"{settings.seed}|{view_name}")
    pool: dict[str, list[str]] = defaultdict(list)
    sites: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)  # label -> (value, before, after, doc)
    for doc_id in sorted(batch.originals):
        original = batch.originals[doc_id]
        spans = batch.masks.get(doc_id, [])
        if not spans:
            continue
        if view_name == "redacted":
            view = batch.redacted.get(doc_id, "")
            pairs = redacted_positions(original, spans)
        else:
            view = batch.surrogate.get(doc_id, "")
            pairs = paired_replacements(original, view, spans, batch.surrogate_ranges.get(doc_id, [])) or []
        for span, (a, b) in pairs:
            value = original[span.start : span.end]
            if value not in pool[span.label]:
                pool[span.label].append(value)
            before = view[max(0, a - settings.context_chars) : a]
            after = view[b : b + settings.suffix_chars]
            sites[span.label].append((value, before, after, doc_id))
    probed: dict[str, int] = {}
    first: dict[str, int] = {}
    for label in sorted(sites):
        picks = rng.sample(sites[label], min(settings.values_per_label, len(sites[label])))
        for value, before, after, _ in picks:
            decoys = decoys_for(value, label, pool, settings.decoys, rng)
            if not decoys:
                continue
            candidates = [value, *decoys]
            scores = continuation_logprobs(
                model, tokenizer, before.rstrip(" "), [_join(before, c) + after for c in candidates]
            )
            probed[label] = probed.get(label, 0) + 1
            first[label] = first.get(label, 0) + int(scores[0] > max(scores[1:]))
    return InferenceProbe(probed, first, settings.decoys + 1)


def _join(before: str, candidate: str) -> str:
    """The candidate as it continues ``before`` (its leading space moves into the candidate's tokens)."""
    return (" " if before.endswith(" ") else "") + candidate


# --------------------------------------------------------------------------------------------
# The report


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def leakage_report(
    warehouse: Warehouse,
    batch_id: str,
    settings: LeakageSettings | None = None,
    *,
    canary_values: Sequence[tuple[str, str]] = (),
    canary_detected: dict[str, bool] | None = None,
) -> dict:
    """Per view and label: direct leak, retention, format kept, inference leak; counts and rates only.

    ``canary_values`` are planted (kind, value) pairs (the canary probe's); their leak rates are reported
    split by whether detection masked every occurrence (``canary_detected``: value -> bool)."""
    from curation.evaluation.canary import model_folder

    settings = settings or LeakageSettings()
    batch = load_batch(warehouse, batch_id)
    if not batch.originals:
        raise ValueError(f"batch {batch_id!r} has no documents in {warehouse.path}: run the pipeline first")
    values = original_values(batch)
    detected = [(label, v) for label, v, origin in values if origin == "detected"]
    supplied_only = [(label, v) for label, v, origin in values if origin == "supplied"]
    distinct = {
        name: _distinct_by_label(group) for name, group in (("detected", detected), ("supplied_only", supplied_only))
    }
    released = {
        "surrogate": {d: released_text_only(t, batch.surrogate_ranges.get(d, [])) for d, t in batch.surrogate.items()},
        "redacted": {d: released_text_only(t, []) for d, t in batch.redacted.items()},
    }
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_folder(settings.inference_model))
    views: dict[str, dict] = {}
    for name in ("surrogate", "redacted"):
        leaks = direct_leaks(released[name], detected)
        gold_leaks = direct_leaks(released[name], supplied_only)
        per_label = {}
        for label, norms in sorted(distinct["detected"].items()):
            per_label[label] = {
                "values": len(norms),
                "direct_leak_exact": _rate(len(leaks[label]["exact"] & norms), len(norms)),
                "direct_leak_normalized": _rate(len(leaks[label]["normalized"] & norms), len(norms)),
            }
        views[name] = {
            "per_label": per_label,
            "direct_leak_rate_detected": _overall(leaks, distinct["detected"]),
            "direct_leak_rate_supplied_not_detected": _overall(gold_leaks, distinct["supplied_only"]),
        }
    views["training_view"] = _training_view_leaks(batch, detected, distinct["detected"], tokenizer)
    _add_retention(views, batch, canary_values)
    if settings.inference:
        _add_inference(views, batch, settings)
    if canary_values:
        views_canary = _canary_leaks(batch, released, canary_values, canary_detected or {}, tokenizer)
    else:
        views_canary = None
    overall = max(
        (v["direct_leak_rate_detected"] for v in views.values() if v["direct_leak_rate_detected"] is not None),
        default=None,
    )
    return {
        "batch_id": batch_id,
        "documents": len(batch.originals),
        "detected_values": sum(len(v) for v in distinct["detected"].values()),
        "supplied_values_not_detected": sum(len(v) for v in distinct["supplied_only"].values()),
        "direct_leak_rate_detected": overall,
        "views": views,
        "canaries": views_canary,
        "settings": asdict(settings),
    }


def _training_view_leaks(batch, detected, distinct: dict[str, set[str]], tokenizer) -> dict:
    """The training view's direct leaks: values whose tokens carry loss (not masked), per label."""
    tv_leaks, tv_retention = training_view_leaks(batch, detected, tokenizer)
    return {
        "per_label": {
            label: {
                "values": len(norms),
                "direct_leak_loss": _rate(len(tv_leaks.get(label, set()) & norms), len(norms)),
            }
            for label, norms in sorted(distinct.items())
        },
        "direct_leak_rate_detected": _overall({k: {"normalized": v} for k, v in tv_leaks.items()}, distinct),
        "retention_loss_tokens": None if tv_retention is None else round(tv_retention, 4),
    }


def _distinct_by_label(values: Sequence[tuple[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for label, value in values:
        norm = normalize_for_match(value)
        if len(norm) >= 4:  # what the known-value scan checks (shorter values match anywhere)
            out[label].add(norm)
    return dict(out)


def _overall(leaks: dict, distinct: dict[str, set[str]]) -> float | None:
    total = sum(len(v) for v in distinct.values())
    hit = sum(len(leaks.get(label, {}).get("normalized", set()) & norms) for label, norms in distinct.items())
    return _rate(hit, total)


def _targets(batch: BatchTexts, doc_id: str, canary_values: Sequence[tuple[str, str]]) -> list[Span]:
    text = batch.originals[doc_id]
    spans = list(batch.gold.get(doc_id, []))
    for _, value in canary_values:
        for m in re.finditer(re.escape(value), text):
            spans.append(Span(m.start(), m.end(), "CANARY"))
    return spans


def _add_retention(views: dict, batch: BatchTexts, canary_values: Sequence[tuple[str, str]]) -> None:
    for name, texts in (("surrogate", batch.surrogate), ("redacted", batch.redacted)):
        kept = total = 0
        for doc_id, original in batch.originals.items():
            k, t = retention(original, texts.get(doc_id, ""), _targets(batch, doc_id, canary_values))
            kept, total = kept + k, total + t
        views[name]["retention"] = _rate(kept, total)
    same: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    unpaired = 0
    for doc_id, original in batch.originals.items():
        spans = batch.masks.get(doc_id, [])
        if not spans:
            continue
        view = batch.surrogate.get(doc_id, "")
        pairs = paired_replacements(original, view, spans, batch.surrogate_ranges.get(doc_id, []))
        if pairs is None:
            unpaired += 1
            continue
        for span, (a, b) in pairs:
            count[span.label] += 1
            same[span.label] += int(shape(original[span.start : span.end]) == shape(view[a:b]))
    for label, row in views["surrogate"]["per_label"].items():
        row["format_kept"] = _rate(same.get(label, 0), count.get(label, 0))
    views["surrogate"]["format_kept"] = _rate(sum(same.values()), sum(count.values()))
    views["surrogate"]["documents_not_aligned"] = unpaired


def _add_inference(views: dict, batch: BatchTexts, settings: LeakageSettings) -> None:
    from curation.evaluation.canary import ProbeSettings, load_model, measurement_dtype
    from curation.score.scorer import resolve_device

    probe_settings = ProbeSettings(
        model=settings.inference_model, device=settings.device, eval_dtype=settings.eval_dtype
    )
    dtype = measurement_dtype(probe_settings, resolve_device(settings.device))
    model, tokenizer, _ = load_model(probe_settings, dtype)
    model.eval()
    for name in ("surrogate", "redacted"):
        probe = inference_probe(name, batch, settings, model, tokenizer)
        for label, row in views[name]["per_label"].items():
            n = probe.probed.get(label, 0)
            row["inference_probed"] = n
            row["inference_leak"] = _rate(probe.ranked_first.get(label, 0), n)
        probed = sum(probe.probed.values())
        views[name]["inference_probed"] = probed
        views[name]["inference_leak_rate"] = _rate(sum(probe.ranked_first.values()), probed)
        views[name]["inference_chance_rate"] = round(1 / probe.candidates, 4)


def _canary_leaks(
    batch: BatchTexts,
    released: dict[str, dict[str, str]],
    canary_values: Sequence[tuple[str, str]],
    detected: dict[str, bool],
    tokenizer,
) -> dict:
    """Leak rates of the planted canaries per view, split by whether detection masked them."""
    values = [(kind, value.strip()) for kind, value in canary_values]
    groups = {
        "all": values,
        "detected": [(k, v) for k, v in values if detected.get(v)],
        "missed": [(k, v) for k, v in values if not detected.get(v)],
    }
    out: dict = {"planted": len(values), "detected": len(groups["detected"]), "missed": len(groups["missed"])}
    for name in ("surrogate", "redacted"):
        leaks = direct_leaks(released[name], values)
        found = {v for label in leaks for v in leaks[label]["normalized"]}
        out[name] = {
            group: _rate(sum(normalize_for_match(v) in found for _, v in items), len(items))
            for group, items in groups.items()
        }
    tv, _ = training_view_leaks(batch, values, tokenizer)
    found = {v for norms in tv.values() for v in norms}
    out["training_view"] = {
        group: _rate(sum(normalize_for_match(v) in found for _, v in items), len(items))
        for group, items in groups.items()
    }
    out["missed_by_kind"] = {
        kind: sum(1 for k, _ in groups["missed"] if k == kind) for kind in sorted({k for k, _ in values})
    }
    return out


def format_report(report: dict) -> str:
    """Terminal table: one row per view and label (rates only)."""
    lines = [
        f"leakage report, batch {report['batch_id']}: {report['documents']} documents, "
        f"{report['detected_values']} detected values; direct leak rate (detected, all views) "
        f"{report['direct_leak_rate_detected']}"
    ]
    head = f"{'view':<14} {'label':<20} {'values':>6} {'leak':>7} {'leak~':>7} {'format':>7} {'infer':>7} {'n_inf':>5}"
    lines += [head, "-" * len(head)]
    for view, data in report["views"].items():
        for label, row in data["per_label"].items():
            leak = row.get("direct_leak_exact", row.get("direct_leak_loss"))
            lines.append(
                f"{view:<14} {label:<20} {row['values']:>6} {_f(leak):>7} {_f(row.get('direct_leak_normalized')):>7} "
                f"{_f(row.get('format_kept')):>7} {_f(row.get('inference_leak')):>7} "
                f"{row.get('inference_probed', ''):>5}"
            )
        extra = {k: v for k, v in data.items() if k != "per_label"}
        lines.append(f"{view:<14} {json.dumps(extra)}")
    if report.get("canaries"):
        lines.append(f"planted canaries: {json.dumps(report['canaries'])}")
    return "\n".join(lines)


def _f(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def card_evidence(warehouse: Warehouse, config) -> tuple[dict, dict[str, object]]:
    """(CardInfo.privacy_evidence, extra release files) from the evaluation results stored for this batch's
    current release text; results recorded for other content are left out."""
    from curation.core.warehouse import stage_summary
    from curation.evaluation import canary
    from curation.gates import release_gates as gates

    batch = config.batch_id
    digest = gates.content_digest(warehouse, batch)
    evidence: dict = {}
    files: dict[str, object] = {}
    for key, stage in (("leakage", LEAKAGE_STAGE), ("canary", canary.PROBE_STAGE)):
        summary = stage_summary(warehouse, batch, stage)
        if summary and summary.get("content_digest") == digest:
            evidence[key] = summary
    plot = config.path(canary.plot_file(batch))
    if "canary" in evidence and plot.is_file():
        evidence["canary_plot"] = "plots/canary_exposure.png"
        files["plots/canary_exposure.png"] = plot
    return evidence, files
