"""The tagger's stored facts: training the head on the labeled sets (out-of-fold predictions for
calibration), and tagging a batch: per-token probabilities into ``token_tags``, decoded tagger and
CredSweeper spans into ``detector_spans``; corpus hidden states pruned once tagged."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from curation.core.config import CurationConfig
from curation.core.spans import Span, char_mask
from curation.core.warehouse import CALIBRATION_BATCH, Warehouse, insert_frame, load_token_scores, stage_summary
from curation.detect.combination import CREDSWEEPER, TAGGER, rounded_metrics
from curation.detect.credsweeper import credsweeper_spans, credsweeper_version
from curation.policy.calibration import char_metrics
from curation.tagger.model import (
    HiddenStateCache,
    TaggedText,
    Tagger,
    TaggerConfig,
    choose_threshold,
    decode_spans,
    entity_recall,
    out_of_fold_probs,
    train_tagger,
    training_digest,
)


def tagger_config(config: CurationConfig):
    from curation.tagger.model import TaggerConfig

    return TaggerConfig(encoder=config.tagger.encoder, hidden=config.tagger.hidden, epochs=config.tagger.epochs)


def augment_config(config: CurationConfig):
    from curation.labels.augment import AugmentConfig

    return AugmentConfig(variants=config.tagger.augment_variants)


def gold_spans(warehouse: Warehouse, datasets: Sequence[str]) -> dict[tuple[str, str], list[Span]]:
    """(dataset, doc_id) -> the document's gold spans, in order."""
    gold = warehouse.query(
        'SELECT dataset, doc_id, "start", "end", label FROM gold_spans '
        f'WHERE dataset IN ({", ".join("?" for _ in datasets)}) ORDER BY dataset, doc_id, "start"',
        list(datasets),
    )
    spans: dict[tuple[str, str], list[Span]] = {}
    for dataset, doc_id, start, end, label in gold.iter_rows():
        spans.setdefault((dataset, doc_id), []).append(Span(start, end, label, source="gold"))
    return spans


def calibration_records(warehouse: Warehouse, datasets: Sequence[str]) -> list:
    """The calibration split's labeled documents as records (text and gold), in ``labeled_items``' order:
    what augmentation derives its variants from, in the scoring step and in training alike."""
    from curation.labels.sets import LabeledRecord

    docs = warehouse.query(
        "SELECT dataset, doc_id, kind, text FROM validation_docs "
        f"WHERE dataset IN ({', '.join('?' for _ in datasets)}) AND split = 'calibration' ORDER BY dataset, doc_id",
        list(datasets),
    )
    spans = gold_spans(warehouse, datasets)
    return [
        LabeledRecord(doc_id, text, spans.get((dataset, doc_id), []), kind)
        for dataset, doc_id, kind, text in docs.iter_rows()
    ]


def labeled_variants(warehouse: Warehouse, datasets: Sequence[str], augment) -> list:
    """(index of the source calibration record, variant record) for ``augment`` (none when it is off)."""
    if augment is None or augment.variants <= 0:
        return []
    from curation.labels.augment import augmented

    return augmented(calibration_records(warehouse, datasets), augment)


def _variant_items(warehouse, model_key: str, cache: HiddenStateCache, variants) -> list[TaggedText]:
    from curation.core.warehouse import sha256_text

    shas = [sha256_text(v.text) for _, v in variants]
    scores = load_token_scores(warehouse, model_key, shas)
    missing = sum(1 for sha in shas if sha not in scores or not cache.has(sha))
    if missing:
        raise RuntimeError(
            f"{missing} mention-swap variant(s) of the labeled documents have no token scores/hidden states for "
            f"{model_key}; materialize validation_scores first (it scores them when tagger.augment_variants > 0)"
        )
    return [
        TaggedText(v.text, scores[sha].char_start, scores[sha].char_end, cache.get(sha), v.spans)
        for sha, (_, v) in zip(shas, variants, strict=True)
    ]


def current_tagger_path(warehouse: Warehouse) -> Path | None:
    """The saved head the last pii_tagger materialization trained (None when the tagger is off); raises
    RuntimeError when it is not in the local cache."""
    from curation.score.scorer import cache_root

    summary = stage_summary(warehouse, CALIBRATION_BATCH, "pii_tagger")
    if not summary.get("enabled"):
        return None
    path = tagger_path(cache_root(), summary["digest"])
    if not path.exists():
        raise RuntimeError(
            f"tagger {summary['tagger_key']} is not in the local cache ({path}); rematerialize pii_tagger"
        )
    return path


def current_tagger(warehouse: Warehouse):
    """The tagger the last pii_tagger materialization trained (None when the tagger is off)."""
    from curation.tagger.model import Tagger

    path = current_tagger_path(warehouse)
    return None if path is None else Tagger.load(path)


TAG_CHUNK_DOCS = 512  # documents whose hidden states the tagger reads at once


# -- training the tagger --------------------------------------------------------------------
def labeled_items(warehouse: Warehouse, model_key: str, cache: HiddenStateCache, datasets: Sequence[str], split: str):
    """(doc row, TaggedText) for validation_docs of the datasets and split, with hidden states."""
    docs = warehouse.query(
        "SELECT dataset, doc_id, kind, text, sha256, coalesce(domain, '') AS domain FROM validation_docs "
        f"WHERE dataset IN ({', '.join('?' for _ in datasets)}) AND split = ? ORDER BY dataset, doc_id",
        [*datasets, split],
    )
    scores = load_token_scores(warehouse, model_key, docs["sha256"].to_list())
    spans = gold_spans(warehouse, datasets)
    out = []
    for row in docs.iter_rows(named=True):
        sha = row["sha256"]
        if sha not in scores or not cache.has(sha):
            raise RuntimeError(
                f"labeled document {row['doc_id']} has no token scores/hidden states for {model_key}; "
                "materialize validation_scores first"
            )
        s = scores[sha]
        item = TaggedText(
            row["text"], s.char_start, s.char_end, cache.get(sha), spans.get((row["dataset"], row["doc_id"]), [])
        )
        out.append((row, item))
    return out


def tagger_path(root: Path, digest: str) -> Path:
    return Path(root) / "taggers" / f"tagger-{digest}.pt"


def train_on_labeled(
    warehouse: Warehouse,
    model_key: str,
    cache: HiddenStateCache,
    datasets: Sequence[str],
    config: TaggerConfig,
    cache_root: Path,
    collateral_budget: float = 1.0,
    progress=None,
    augment=None,
    label_thresholds: bool = False,
) -> tuple[Tagger, dict]:
    """Train (or load the cached) head on the calibration split of the labeled datasets; choose a
    threshold per domain on out-of-fold predictions; store every labeled doc's token probabilities
    (out of fold for training docs) and decoded tagger spans; report training and held-out metrics
    per domain and label."""
    started = time.perf_counter()
    train_rows = labeled_items(warehouse, model_key, cache, datasets, "calibration")
    held_rows = labeled_items(warehouse, model_key, cache, datasets, "heldout")
    items = [item for _, item in train_rows]
    variants = labeled_variants(warehouse, datasets, augment)
    train_items = items + _variant_items(warehouse, model_key, cache, variants)  # variants after their sources
    parents = [None] * len(items) + [source for source, _ in variants]
    digest = training_digest(train_items, model_key, config)
    path = tagger_path(cache_root, digest)
    key = f"tagger-{digest}"
    stored = warehouse.query("SELECT count(*) AS n FROM token_tags WHERE tagger_key = ?", [key])["n"][0]
    if path.exists() and stored:
        tagger = Tagger.load(path)
        if progress:
            progress(f"tagger {key}: cached (trained on the same data, model and config)")
        report = _per_label(warehouse, tagger, train_rows, held_rows, collateral_budget) if label_thresholds else {}
        write_labeled_spans(warehouse, key, tagger, train_rows + held_rows, report.get("label_thresholds"))
        return tagger, {**tagger.report, **report, "cached": True}
    if progress:
        progress(f"training tagger on {len(items)} labeled texts ({sum(len(i.char_start) for i in items)} tokens)")
    oof = out_of_fold_probs(train_items, model_key, config, progress=progress, parents=parents)[: len(items)]
    tagger = train_tagger(train_items, model_key, config, progress)
    labels = tagger.labels
    thresholds, training = {}, {}
    for domain in sorted({row["domain"] for row, _ in train_rows}):
        idx = [i for i, (row, _) in enumerate(train_rows) if row["domain"] == domain]
        thresholds[domain], _ = choose_threshold([items[i] for i in idx], [oof[i] for i in idx], collateral_budget)
    all_idx = list(range(len(items)))
    thresholds["*"], _ = choose_threshold(items, oof, collateral_budget)
    probs_train = oof
    probs_held = tagger.predict_many([item.hidden for _, item in held_rows])
    for domain in thresholds:
        if domain == "*":
            continue
        idx = [i for i in all_idx if train_rows[i][0]["domain"] == domain]
        training[domain] = domain_metrics(
            [items[i] for i in idx], [probs_train[i] for i in idx], labels, thresholds[domain]
        )
    heldout = {}
    for domain in sorted({row["domain"] for row, _ in held_rows}):
        idx = [i for i, (row, _) in enumerate(held_rows) if row["domain"] == domain]
        heldout[domain] = domain_metrics(
            [held_rows[i][1] for i in idx],
            [probs_held[i] for i in idx],
            labels,
            thresholds.get(domain, thresholds["*"]),
        )
    tagger.report.update(
        {
            "labeled_texts": len(items),
            "augmented_texts": len(variants),
            "augment_variants": augment.variants if augment is not None else 0,
            "thresholds": {k: round(v, 4) for k, v in thresholds.items()},
            "training_metrics_out_of_fold": training,
            "heldout_metrics": heldout,
            "total_seconds": round(time.perf_counter() - started, 1),
        }
    )
    tagger.save(path)
    write_token_tags(warehouse, key, [(r["sha256"], p) for (r, _), p in zip(train_rows, probs_train, strict=True)])
    write_token_tags(warehouse, key, [(r["sha256"], p) for (r, _), p in zip(held_rows, probs_held, strict=True)])
    report = _per_label(warehouse, tagger, train_rows, held_rows, collateral_budget) if label_thresholds else {}
    write_labeled_spans(warehouse, key, tagger, train_rows + held_rows, report.get("label_thresholds"))
    return tagger, {**tagger.report, **report, "cached": False}


def _per_label(warehouse: Warehouse, tagger: Tagger, train_rows, held_rows, collateral_budget: float) -> dict:
    """Per-label thresholds for each domain, chosen on the stored out-of-fold probabilities of its
    calibration texts (policy over stored facts: no retraining), and the metrics they give; the head's saved
    report keeps the domain thresholds alone, so one cached head serves projects with either setting."""
    from curation.tagger.model import choose_label_thresholds

    probs = load_token_tags(warehouse, tagger.key, [r["sha256"] for r, _ in train_rows + held_rows])
    thresholds = tagger.report.get("thresholds", {})
    chosen, choice, training, heldout = {}, {}, {}, {}
    for domain in sorted({row["domain"] for row, _ in train_rows}):
        mine = [(item, probs[row["sha256"]]) for row, item in train_rows if row["domain"] == domain]
        domain_threshold = thresholds.get(domain, thresholds.get("*", 0.5))
        chosen[domain], choice[domain] = choose_label_thresholds(
            [i for i, _ in mine], [p for _, p in mine], tagger.labels, domain_threshold, collateral_budget
        )
        training[domain] = domain_metrics(
            [i for i, _ in mine], [p for _, p in mine], tagger.labels, domain_threshold, chosen[domain]
        )
    for domain in sorted({row["domain"] for row, _ in held_rows}):
        mine = [(item, probs[row["sha256"]]) for row, item in held_rows if row["domain"] == domain]
        heldout[domain] = domain_metrics(
            [i for i, _ in mine], [p for _, p in mine], tagger.labels,
            thresholds.get(domain, thresholds.get("*", 0.5)), chosen.get(domain),
        )  # fmt: skip
    return {
        "label_thresholds": chosen,
        "label_choice": choice,
        "training_metrics_out_of_fold": training,
        "heldout_metrics": heldout,
    }


def domain_metrics(
    items: Sequence[TaggedText], probs: Sequence[np.ndarray], labels, threshold: float, label_thresholds=None
) -> dict:
    """Char P/R/F1, entity-level recall (all characters masked) per label and per DIRECT/QUASI."""
    predicted = [
        decode_spans(it.text, it.char_start, it.char_end, p, labels, threshold, label_thresholds)
        for it, p in zip(items, probs, strict=True)
    ]
    pred = np.concatenate([np.array(char_mask(s, len(it.text)), bool) for it, s in zip(items, predicted, strict=True)])
    gold = np.concatenate([np.array(char_mask(it.gold, len(it.text)), bool) for it in items])
    docs = [(it.text, it.gold, s) for it, s in zip(items, predicted, strict=True)]
    return {
        "documents": len(items),
        **rounded_metrics(char_metrics(pred, gold)),
        "mentions_fully_masked_by_label": {k: v["fully_masked"] for k, v in entity_recall(docs, "label").items()},
    }


def write_token_tags(warehouse: Warehouse, key: str, rows: Sequence[tuple[str, np.ndarray]]) -> None:
    """Per-token P(not O) and the most likely label index: the tagger's stored facts."""
    frames = []
    for sha, probs in dict(rows).items():  # a text labeled twice (two sets, two ids) is stored once
        n = len(probs)
        if n == 0:
            continue
        frames.append(
            pl.DataFrame(
                {
                    "tagger_key": [key] * n,
                    "doc_sha256": [sha] * n,
                    "token_idx": np.arange(n, dtype=np.int32),
                    "p_private": (1.0 - probs[:, 0]).astype(np.float32),
                    "label_idx": (np.argmax(probs[:, 1:], axis=1) + 1).astype(np.int16) if probs.shape[1] > 1 else 0,
                    "probs": [json.dumps(np.round(r, 4).tolist()) for r in probs],
                    # exact: a batch re-tagged by the same head decodes from these, with no hidden states kept
                    "probs_f32": pl.Series(probs.astype(np.float32).tolist(), dtype=pl.List(pl.Float32)),
                }
            )
        )
    if not frames:
        return
    frame = pl.concat(frames)
    with warehouse.transaction() as con:
        con.register("_shas", frame.select("doc_sha256").unique().to_arrow())
        con.execute(
            "DELETE FROM token_tags WHERE tagger_key = ? AND doc_sha256 IN (SELECT doc_sha256 FROM _shas)", [key]
        )
        con.unregister("_shas")
        insert_frame(con, "token_tags", frame)


def load_token_tags(warehouse: Warehouse, key: str, shas: Sequence[str]) -> dict[str, np.ndarray]:
    if not shas:
        return {}
    with warehouse.connect() as con:
        con.register("_wanted", pl.DataFrame({"doc_sha256": list(set(shas))}).to_arrow())
        frame = con.execute(
            "SELECT doc_sha256, token_idx, any_value(probs) AS probs FROM token_tags JOIN _wanted USING (doc_sha256) "
            "WHERE tagger_key = ? GROUP BY ALL ORDER BY doc_sha256, token_idx",
            [key],
        ).pl()
    out = {}
    for (sha,), group in frame.group_by(["doc_sha256"], maintain_order=True):
        out[sha] = np.array([json.loads(p) for p in group["probs"].to_list()], dtype=np.float32)
    return out


def write_labeled_spans(warehouse: Warehouse, key: str, tagger: Tagger, rows, label_thresholds=None) -> None:
    """Tagger spans (from stored probabilities, at the domain's threshold) and CredSweeper spans of
    the labeled documents, as detector facts."""
    probs = load_token_tags(warehouse, key, [r["sha256"] for r, _ in rows])
    thresholds = tagger.report.get("thresholds", {})
    found = credsweeper_spans([item.text for _, item in rows], [r["kind"] for r, _ in rows])
    out = []
    for (row, item), cs in zip(rows, found, strict=True):
        p = probs.get(row["sha256"])
        spans = []
        if p is not None and len(p):
            threshold = thresholds.get(row["domain"], thresholds.get("*", 0.5))
            own = (label_thresholds or {}).get(row["domain"])
            spans = decode_spans(item.text, item.char_start, item.char_end, p, tagger.labels, threshold, own)
        out.append((row["dataset"], row["doc_id"], spans + cs))
    replace_signal_spans(warehouse, out, CALIBRATION_BATCH)


def replace_signal_spans(warehouse: Warehouse, rows: Sequence[tuple[str, str, Sequence[Span]]], batch_id: str) -> None:
    """Replace the tagger and CredSweeper rows of these documents of one batch in ``detector_spans``
    (CALIBRATION_BATCH for labeled sets): per-document facts are keyed by batch, so batches sharing a doc
    id never overwrite each other."""
    frame = pl.DataFrame(
        [(ds, batch_id, doc, s.start, s.end, s.label, s.score, s.source) for ds, doc, spans in rows for s in spans],
        schema=["dataset", "batch_id", "doc_id", "start", "end", "label", "score", "source"],
        orient="row",
    )
    ids = pl.DataFrame([(ds, doc) for ds, doc, _ in rows], schema=["dataset", "doc_id"], orient="row")
    with warehouse.transaction() as con:
        con.register("_ids", ids.to_arrow())
        con.execute(
            "DELETE FROM detector_spans WHERE source IN (?, ?) AND batch_id = ? AND (dataset, doc_id) IN "
            "(SELECT dataset, doc_id FROM _ids)",
            [TAGGER, CREDSWEEPER, batch_id],
        )
        con.unregister("_ids")
        insert_frame(con, "detector_spans", frame)


def load_token_probs(warehouse: Warehouse, tagger_key: str, shas: Sequence[str]) -> dict[str, np.ndarray]:
    """The exact label probabilities a head stored for these texts (texts it never tagged are absent)."""
    if not shas:
        return {}
    with warehouse.connect() as con:
        con.register("_shas", pl.DataFrame({"sha": list(shas)}, schema={"sha": pl.String}).to_arrow())
        frame = con.execute(
            "SELECT doc_sha256, list(probs_f32 ORDER BY token_idx) AS probs, count(*) AS n, max(token_idx) AS last "
            "FROM token_tags WHERE tagger_key = ? AND probs_f32 IS NOT NULL AND doc_sha256 IN (SELECT sha FROM _shas) "
            "GROUP BY doc_sha256",
            [tagger_key],
        ).pl()
        con.unregister("_shas")
    return {
        sha: np.array(probs, dtype=np.float32)
        for sha, probs, n, last in frame.iter_rows()
        if n == last + 1  # complete
    }


def prune_corpus_hidden_states(warehouse: Warehouse, cache: HiddenStateCache, shas: Sequence[str]) -> int:
    """Delete the cached hidden states of these texts unless a labeled set holds them (hidden states can
    be inverted back to text: a corpus text's are kept only from its scoring pass to its tagging)."""
    labeled = set(warehouse.query("SELECT DISTINCT sha256 FROM validation_docs")["sha256"].to_list())
    return sum(cache.delete(sha) for sha in shas if sha not in labeled)


def tagged_shas(warehouse: Warehouse, tagger_key: str | None) -> set[str]:
    """Texts the head ``tagger_key`` has exact probabilities for: their hidden states are not needed."""
    if not tagger_key:
        return set()
    frame = warehouse.query(
        "SELECT DISTINCT doc_sha256 FROM token_tags WHERE tagger_key = ? AND probs_f32 IS NOT NULL", [tagger_key]
    )
    return set(frame["doc_sha256"].to_list())


def tag_corpus(
    warehouse: Warehouse,
    batch_id: str,
    model_key: str,
    cache: HiddenStateCache,
    tagger: Tagger,
    domain: str,
    label_thresholds: Mapping[str, float] | None = None,
) -> dict:
    """Token probabilities and decoded spans of a delivery batch, plus CredSweeper on its code; written as
    facts. Texts this head tagged before (any batch) decode from its stored exact probabilities; the others
    from the hidden states the scoring pass cached, which are deleted once tagged (corpus texts only: the
    labeled sets' states stay, to retrain the head), so no corpus batch leaves hidden states behind."""
    docs = warehouse.query(
        "SELECT doc_id, kind, text, sha256 FROM documents WHERE batch_id = ? ORDER BY doc_id", [batch_id]
    )
    scores = load_token_scores(warehouse, model_key, docs["sha256"].to_list())
    started = time.perf_counter()
    shas = list(dict.fromkeys(docs["sha256"].to_list()))
    by_sha = load_token_probs(warehouse, tagger.key, shas)
    todo = [sha for sha in shas if sha not in by_sha]
    missing = sum(1 for sha in todo if sha not in scores or not cache.has(sha))
    if missing:
        raise RuntimeError(
            f"{missing} documents of batch {batch_id} have no cached hidden states; rerun reference_scores"
        )
    probs = []
    for i in range(0, len(todo), TAG_CHUNK_DOCS):  # bounded memory: hidden states are ~1 KB per token
        chunk = todo[i : i + TAG_CHUNK_DOCS]
        probs += zip(chunk, tagger.predict_many([cache.get(sha) for sha in chunk]), strict=True)
    write_token_tags(warehouse, tagger.key, probs)
    by_sha.update(probs)
    pruned = prune_corpus_hidden_states(warehouse, cache, shas)
    tag_seconds = time.perf_counter() - started
    threshold = tagger.report.get("thresholds", {}).get(domain, tagger.report.get("thresholds", {}).get("*", 0.5))
    cs = credsweeper_spans(docs["text"].to_list(), docs["kind"].to_list())
    rows, n_tagger, n_cs = [], 0, 0
    for (doc_id, _, text, sha), found in zip(docs.iter_rows(), cs, strict=True):
        s = scores[sha]
        spans = decode_spans(text, s.char_start, s.char_end, by_sha[sha], tagger.labels, threshold, label_thresholds)
        n_tagger += len(spans)
        n_cs += len(found)
        rows.append(("corpus", doc_id, spans + found))
    replace_signal_spans(warehouse, rows, batch_id)
    return {
        "tagger_key": tagger.key,
        "domain": domain,
        "threshold": round(threshold, 4),
        **({"label_thresholds": dict(label_thresholds)} if label_thresholds else {}),
        "documents": docs.height,
        "texts_tagged_now": len(todo),
        "hidden_states_deleted": pruned,
        "tagger_spans": n_tagger,
        "credsweeper_spans": n_cs,
        "credsweeper": credsweeper_version(),
        "head_seconds": round(tag_seconds, 3),
    }
