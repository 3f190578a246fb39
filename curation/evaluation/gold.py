"""``curation eval``: calibrate on labeled data, predict spans on a gold set, write metrics.

Token scores are cached in a DuckDB file by (model key, text sha256), so evaluating again (another
policy, another split) does not run the model again.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curation.core.config import MaskingConfig, bundled
from curation.core.languages import DEFAULT_LANGUAGE, detect_language, language_of_records
from curation.core.spans import Span, char_mask
from curation.core.warehouse import Warehouse, load_token_scores, sha256_text
from curation.detect.combination import choose_detectors, recognizer_summary, select_sources
from curation.detect.credsweeper import credsweeper_spans
from curation.labels.augment import AugmentConfig, augmented
from curation.labels.sets import LabeledRecord, load_labeled
from curation.policy.calibration import (
    POLICIES,
    Calibration,
    ScoredDoc,
    auroc,
    calibrate,
    canonical_objective,
    char_metrics,
    evaluate,
    finite_or_none,
    pooled,
)
from curation.policy.extents import honorific_evidence, masked_whole, structured_targets
from curation.policy.identity_types import misfiled_names, one_type_per_identity
from curation.policy.masking import combine, surprise_added_fraction, surprise_spans, transfer_check
from curation.policy.propagation import propagate_mentions
from curation.score.pending import score_missing
from curation.score.scorer import ReferenceScorer, ScoringConfig
from curation.tagger.model import (
    HiddenStateCache,
    TaggedText,
    Tagger,
    TaggerConfig,
    choose_label_thresholds,
    choose_threshold,
    decode_spans,
    entity_recall,
    out_of_fold_probs,
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

if TYPE_CHECKING:
    from curation.detect import DetectorSuite


def default_cache() -> Path:
    from curation.score.scorer import cache_root

    return cache_root() / "eval.duckdb"


def scored(
    records: list[LabeledRecord], scorer: ReferenceScorer, warehouse: Warehouse, suite, progress=None, cache=None
) -> list[ScoredDoc]:
    """Attach cached (or freshly computed) token scores and detector spans to labeled records."""
    shas = [sha256_text(r.text) for r in records]
    score_missing(warehouse, scorer, list(zip(shas, [r.text for r in records], strict=True)), progress, cache)
    scores = load_token_scores(warehouse, scorer.model_key, shas)
    detected = suite.detect([r.text for r in records], [r.kind for r in records]) if suite else [[]] * len(records)
    return [
        ScoredDoc(r.id, r.text, r.kind, scores[s], list(r.spans), d)
        for r, s, d in zip(records, shas, detected, strict=True)
    ]


def predictions(docs: list[ScoredDoc], calibration: Calibration) -> dict[str, list[Span]]:
    return {d.doc_id: combine(calibration.policy, d.detected, surprise_spans(d, calibration)) for d in docs}


def per_label(docs: list[ScoredDoc], predicted: dict[str, list[Span]]) -> dict:
    """Recall per gold label and precision per predicted label (character level)."""
    recall_hit: dict[str, int] = {}
    recall_all: dict[str, int] = {}
    prec_hit: dict[str, int] = {}
    prec_all: dict[str, int] = {}
    for doc in docs:
        gold = np.array(char_mask(doc.gold, len(doc.text)), dtype=bool)
        pred = np.array(char_mask(predicted[doc.doc_id], len(doc.text)), dtype=bool)
        for s in doc.gold:
            recall_all[s.label] = recall_all.get(s.label, 0) + s.length
            recall_hit[s.label] = recall_hit.get(s.label, 0) + int(pred[s.start : s.end].sum())
        for s in predicted[doc.doc_id]:
            prec_all[s.label] = prec_all.get(s.label, 0) + s.length
            prec_hit[s.label] = prec_hit.get(s.label, 0) + int(gold[s.start : s.end].sum())
    return {
        "recall_by_gold_label": {k: round(recall_hit[k] / v, 4) for k, v in sorted(recall_all.items()) if v},
        "precision_by_predicted_label": {k: round(prec_hit[k] / v, 4) for k, v in sorted(prec_all.items()) if v},
    }


def labeled_set_specs(values: Sequence[str | Path] | str | Path | None) -> list[tuple[str, Path]]:
    """(domain, path) from ``--calibrate-on`` values: ``domain=path`` or a path (domain = file stem, or
    the folder name for a file called labeled.jsonl)."""
    if values is None:
        return [("support", bundled("validation.jsonl"))]
    if isinstance(values, str | Path):
        values = [values]
    out = []
    for value in values:
        text = str(value)
        domain, sep, path = text.partition("=")
        if not sep or "/" in domain:
            path = text
            domain = Path(path).stem if Path(path).stem != "labeled" else Path(path).parent.name
        out.append((domain, Path(path)))
    return out


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _tagged(docs: Sequence[ScoredDoc], cache) -> list[TaggedText]:
    return [
        TaggedText(d.text, d.scores.char_start, d.scores.char_end, cache.get(sha256_text(d.text)), d.gold) for d in docs
    ]


def _train_or_load(
    items: list[TaggedText], model_key: str, config: TaggerConfig, folder: Path, progress, parents=None
):
    """The head trained on all items and each item's out-of-fold probabilities, cached by digest
    (``parents``: see :func:`out_of_fold_probs`)."""
    digest = training_digest(items, model_key, config)
    head_path, oof_path = folder / f"tagger-{digest}.pt", folder / f"tagger-{digest}.oof.npz"
    if head_path.exists() and oof_path.exists():
        progress(f"tagger {digest}: cached")
        stored = np.load(oof_path)
        return Tagger.load(head_path), [stored[f"a{i}"] for i in range(len(items))]
    tokens = sum(len(i.char_start) for i in items)
    progress(f"training the tagger on {len(items)} labeled texts ({tokens} tokens), 2 folds + full")
    oof = out_of_fold_probs(items, model_key, config, progress=progress, parents=parents)
    head = train_tagger(items, model_key, config, progress)
    folder.mkdir(parents=True, exist_ok=True)
    head.save(head_path)
    np.savez_compressed(oof_path, **{f"a{i}": p for i, p in enumerate(oof)})
    return head, oof


def _signal_metrics(docs: Sequence[ScoredDoc], spans: dict[str, list[Span]]) -> dict:
    pred = np.concatenate([np.array(char_mask(spans[d.doc_id], len(d.text)), bool) for d in docs] or [np.zeros(0)])
    gold = np.concatenate([np.array(char_mask(d.gold, len(d.text)), bool) for d in docs] or [np.zeros(0)])
    m = char_metrics(pred.astype(bool), gold.astype(bool))
    triples = [(d.text, d.gold, spans[d.doc_id]) for d in docs]
    return {
        "precision": round(m.precision, 4),
        "recall": round(m.tpr, 4),
        "f1": round(m.f1, 4),
        "fpr": round(m.fpr, 4),
        "mentions_fully_masked_by_identifier": entity_recall(triples, "identifier"),
        "mentions_fully_masked_by_label": {k: v["fully_masked"] for k, v in entity_recall(triples, "label").items()},
    }


@dataclass(frozen=True)
class SignalSettings:
    """How ``curation eval`` and ``curation label export`` build their signals: the labeled sets to
    calibrate (and, without ``train_on``, train the tagger) on, the caches, and which signals take part.

    ``detector_suite`` replaces the default ``DetectorSuite(DetectorConfig())`` (scripts/ablate_detectors.py
    passes suites with detector families excluded). ``train_on`` (``--train-on``): the labeled sets the
    tagger trains on instead of the calibration sets (plus the public sets); the calibration sets then only
    calibrate, each domain's tagger threshold chosen on the head's probabilities for texts it never saw, so
    new labels take effect in seconds (no tagger training) and the threshold is an honest held-out choice."""

    calibrate_on: Path | str | Sequence[str | Path] | None = None
    warehouse_path: Path | None = None
    scoring: ScoringConfig | None = None
    use_detectors: bool = True
    use_tagger: bool = True
    public_sets: bool = True
    tagger_config: TaggerConfig | None = None
    label_map: Mapping[str, str] | None = None
    detector_suite: DetectorSuite | None = None
    collateral_budget: float = 0.03
    objective: str = "f1"  # calibration.objective: f1 | f2 | recall_at_budget (policy.calibration.OBJECTIVES)
    train_on: Sequence[str | Path] | None = None
    augment: AugmentConfig = field(default_factory=AugmentConfig)  # mention-swap variants of the labeled texts
    label_thresholds: bool = True  # a label with the support gets its own tagger threshold (tagger.label_thresholds)
    # self-training: unlabeled texts of a domain ("domain=path", like calibrate_on) the head learns from,
    # judged by that domain's labeled calibration texts (curation.tagger.self_training)
    self_train_on: Sequence[str | Path] | None = None
    self_training: SelfTrainingConfig = field(default_factory=SelfTrainingConfig)
    progress: Callable[[str], None] = _log


@dataclass
class CalibratedSignals:
    """The current tagger and detectors, trained and calibrated on labeled sets: what ``curation eval``
    and ``curation label export`` both apply to new texts (caches shared, so a second use is fast)."""

    specs: list[tuple[str, Path]]
    scorer: ReferenceScorer
    warehouse: Warehouse
    cache: HiddenStateCache | None
    suites: dict[str, DetectorSuite | None]  # by language code
    head: Tagger | None
    thresholds: dict[str, float]
    val_docs: dict[str, list[ScoredDoc]]
    per_domain: dict[str, dict]
    tagger_summary: dict
    languages: dict[str, str] = field(default_factory=dict)  # domain -> language code
    settings: SignalSettings | None = None
    label_thresholds: dict[str, dict[str, float]] = field(default_factory=dict)  # domain -> label -> threshold

    def suite_for(self, domain: str, texts: Sequence[str] = ()) -> DetectorSuite | None:
        """The detectors of the domain's language (a domain not calibrated here: detected from ``texts``)."""
        language = self.languages.get(domain) or detect_language(texts)
        if language not in self.suites:
            self.suites[language] = _suite(self.settings or SignalSettings(), language)
        return self.suites[language]

    def combination(self, domain: str) -> tuple[str, ...]:
        return tuple(self.per_domain[domain]["detector_combination"].split("+"))

    def score(self, records: list[LabeledRecord], progress=_log) -> list[ScoredDoc]:
        """Token scores (cached) of new texts, no spans yet."""
        return scored(records, self.scorer, self.warehouse, None, progress, self.cache)

    def detect(self, docs: list[ScoredDoc], domain: str) -> list[np.ndarray | None]:
        """Add the rule, tagger (at the domain's threshold) and CredSweeper spans to new docs; return the
        tagger's token probabilities per doc (None without a tagger)."""
        suite = self.suite_for(domain, [d.text for d in docs])
        if suite is not None:
            for doc, spans in zip(docs, suite.detect([d.text for d in docs], [d.kind for d in docs]), strict=True):
                doc.detected = spans
        probs: list[np.ndarray | None] = [None] * len(docs)
        if self.head is not None:
            items = _tagged(docs, self.cache)
            probs = list(self.head.predict_many([i.hidden for i in items]))
            for doc, it, p in zip(docs, items, probs, strict=True):
                doc.detected = doc.detected + decode_spans(
                    it.text, it.char_start, it.char_end, p, self.head.labels, self.thresholds[domain],
                    self.label_thresholds.get(domain),
                )  # fmt: skip
        for doc, found in zip(docs, credsweeper_spans([d.text for d in docs], [d.kind for d in docs]), strict=True):
            doc.detected = doc.detected + found
        return probs


def _suite(settings: SignalSettings, language: str = DEFAULT_LANGUAGE) -> DetectorSuite | None:
    """The detectors for texts of ``language``: its NER model and rule families."""
    if not settings.use_detectors:
        return None
    if settings.detector_suite is not None:
        return settings.detector_suite
    from curation.detect import DetectorConfig, DetectorSuite
    from curation.detect.suite import config_for_language

    return DetectorSuite(config_for_language(DetectorConfig(), language))


def _scored_sets(specs, settings: SignalSettings, scorer, warehouse, cache, what: str) -> dict[str, list[ScoredDoc]]:
    """Each labeled set of ``specs`` scored (no detector spans), by domain; sets of one domain are joined."""
    out: dict[str, list[ScoredDoc]] = {}
    for name, path in specs:
        records = load_labeled(path, settings.label_map)
        settings.progress(f"scoring {what} {name!r} ({len(records)} records)")
        out.setdefault(name, []).extend(scored(records, scorer, warehouse, None, settings.progress, cache))
    return out


def _public_docs(settings: SignalSettings, scorer, warehouse, cache) -> list[ScoredDoc]:
    if not settings.public_sets:
        return []
    from curation.core.config import PUBLIC_SETS

    docs = []
    for _, name in PUBLIC_SETS:
        records = load_labeled(bundled(f"public/{name}"))
        settings.progress(f"scoring bundled public set {name} ({len(records)} records)")
        docs += scored(records, scorer, warehouse, None, settings.progress, cache)
    return docs


def _variants(docs: Sequence[ScoredDoc], settings: SignalSettings, scorer, warehouse, cache):
    """Mention-swap variants of the labeled training docs, scored (cached like any text), as
    (index of the source doc, variant doc)."""
    records = [LabeledRecord(d.doc_id, d.text, list(d.gold), d.kind) for d in docs]
    pairs = augmented(records, settings.augment)
    if not pairs:
        return []
    settings.progress(f"scoring {len(pairs)} mention-swap variants of {len(records)} labeled texts")
    variant_docs = scored([r for _, r in pairs], scorer, warehouse, None, settings.progress, cache)
    return [(source, doc) for (source, _), doc in zip(pairs, variant_docs, strict=True)]


def _self_trained_domains(settings: SignalSettings, val_docs) -> set[str]:
    """The domains ``self_train_on`` names (none when self-training is off); each must be a calibration
    domain, whose labels judge it, and the head must train on those labels (no ``train_on``)."""
    if not (settings.self_train_on and settings.self_training.enabled):
        return set()
    domains = {name for name, _ in labeled_set_specs(settings.self_train_on)}
    if settings.train_on:
        raise ValueError("self-training is judged on the calibration sets' out-of-fold predictions: "
                         "it cannot be combined with a separate tagger training set (--train-on)")
    if unknown := sorted(domains - set(val_docs)):
        raise ValueError(f"--self-train-on domain(s) {unknown} are not --calibrate-on domains {sorted(val_docs)}: "
                         "self-training is judged on the domain's labels; name a calibrated domain")
    return domains


def _pool_docs(settings: SignalSettings, scorer, warehouse, cache) -> list[ScoredDoc]:
    """The unlabeled texts of ``self_train_on`` (any input ``curation run`` ingests; labels ignored), scored."""
    from curation.ingest.readers import ingest_unlabeled

    docs: list[ScoredDoc] = []
    for name, path in labeled_set_specs(settings.self_train_on):
        result = ingest_unlabeled(Path(path), batch_id="self-training")
        found = result.documents
        if result.quarantine.height:
            settings.progress(f"{path}: {result.quarantine.height} record(s) quarantined by ingest (not used)")
        records = [
            LabeledRecord(i, t, [], k) for i, t, k in zip(found["doc_id"], found["text"], found["kind"], strict=True)
        ]
        settings.progress(f"scoring self-training pool of {name!r} ({len(records)} texts)")
        docs += scored(records, scorer, warehouse, None, settings.progress, cache)
    return docs


def _self_trained(items, parents, pool, judged, head, oof, model_key, config, folder: Path, settings):
    """The self-trained head and out-of-fold probabilities where they beat the plain ones on the judged
    items' out-of-fold F1 (else the plain ones), and the report of what ran; cached by digest."""
    st = settings.self_training
    drawn = drawn_pool(pool, [items[i] for i in judged], st)
    digest = training_digest(items + drawn, model_key, config)
    digest = hashlib.sha256(f"{digest}|{json.dumps(st.to_dict(), sort_keys=True)}".encode()).hexdigest()[:16]
    head_path, oof_path = folder / f"tagger-st-{digest}.pt", folder / f"tagger-st-{digest}.oof.npz"
    report_path = folder / f"tagger-st-{digest}.json"
    if head_path.exists() and oof_path.exists() and report_path.exists():
        settings.progress(f"self-trained tagger {digest}: cached")
        stored = np.load(oof_path)
        st_head, st_oof = Tagger.load(head_path), [stored[f"a{i}"] for i in range(len(items))]
        report = json.loads(report_path.read_text())
    else:
        settings.progress(f"self-training on {len(drawn)} unlabeled texts: 2 folds + full, each from its own head")
        st_oof = out_of_fold_probs(
            items, model_key, config, progress=settings.progress, parents=parents,
            extra=lambda fold_head: pseudo_labeled(fold_head, drawn, st),
        )  # fmt: skip
        pseudo = pseudo_labeled(head, drawn, st)
        st_head = train_tagger(items + pseudo, model_key, config, settings.progress, head.labels)
        judged_items = [items[i] for i in judged]
        base_f1 = choose_threshold(judged_items, [oof[i] for i in judged])[1]["f1_smoothed"]
        st_f1 = choose_threshold(judged_items, [st_oof[i] for i in judged])[1]["f1_smoothed"]
        report = {
            "enabled": True,
            **st.to_dict(),
            "pool_texts": len(pool),
            "drawn_texts": len(drawn),
            **pseudo_counts(pseudo),
            "judged_texts": len(judged),
            "out_of_fold_f1_plain": round(base_f1, 5),
            "out_of_fold_f1_self_trained": round(st_f1, 5),
            "kept": keep_self_trained(base_f1, st_f1, st),
        }
        folder.mkdir(parents=True, exist_ok=True)
        st_head.save(head_path)
        np.savez_compressed(oof_path, **{f"a{i}": p for i, p in enumerate(st_oof)})
        report_path.write_text(json.dumps(report, indent=1))
    settings.progress(
        f"self-training: out-of-fold F1 {report['out_of_fold_f1_plain']} plain, "
        f"{report['out_of_fold_f1_self_trained']} self-trained: {'kept' if report['kept'] else 'not kept'}"
    )
    return (st_head, st_oof, report) if report["kept"] else (head, oof, report)


def _train_tagger(settings: SignalSettings, val_docs, scorer, warehouse, cache) -> tuple[Tagger, dict, dict, dict]:
    """Train (or load) the head on the training sets plus the public sets, choose each domain's threshold
    on predictions for texts the head never saw, and add its spans to the calibration documents."""
    self_trained_domains = _self_trained_domains(settings, val_docs)  # checked before any training
    public = _public_docs(settings, scorer, warehouse, cache)
    train_docs = val_docs
    if settings.train_on:
        train_docs = _scored_sets(
            labeled_set_specs(settings.train_on), settings, scorer, warehouse, cache, "tagger training set"
        )
    order = [(d, doc) for d in train_docs for doc in train_docs[d]]
    variants = _variants([doc for _, doc in order], settings, scorer, warehouse, cache)
    items = _tagged([doc for _, doc in order] + public + [doc for _, doc in variants], cache)
    parents = [None] * (len(order) + len(public)) + [source for source, _ in variants]
    config = settings.tagger_config or TaggerConfig()
    folder = warehouse.path.parent / "taggers"
    head, oof = _train_or_load(items, scorer.model_key, config, folder, settings.progress, parents)
    self_training = {"enabled": False}
    if self_trained_domains:
        judged = [i for i, (d, _) in enumerate(order) if d in self_trained_domains]
        pool = _tagged(_pool_docs(settings, scorer, warehouse, cache), cache)
        head, oof, self_training = _self_trained(
            items, parents, pool, judged, head, oof, scorer.model_key, config, folder, settings
        )
    if settings.train_on:  # the head never saw the calibration sets: its plain predictions are held-out ones
        cal_order = [(d, doc) for d in val_docs for doc in val_docs[d]]
        cal_items = _tagged([doc for _, doc in cal_order], cache)
        cal_probs = list(head.predict_many([it.hidden for it in cal_items]))
    else:
        cal_order, cal_items, cal_probs = order, items, oof
    thresholds, per_label, label_reports = {}, {}, {}
    for name in val_docs:
        idx = [i for i, (d, _) in enumerate(cal_order) if d == name]
        domain_items, domain_probs = [cal_items[i] for i in idx], [cal_probs[i] for i in idx]
        thresholds[name], _ = choose_threshold(domain_items, domain_probs)
        if settings.label_thresholds:
            per_label[name], label_reports[name] = choose_label_thresholds(
                domain_items, domain_probs, head.labels, thresholds[name]
            )
    for i, (name, doc) in enumerate(cal_order):  # calibration docs: spans of a head that never saw them
        it = cal_items[i]
        doc.detected = doc.detected + decode_spans(
            it.text, it.char_start, it.char_end, cal_probs[i], head.labels, thresholds[name], per_label.get(name)
        )
    trained_on = [f"{d}={p}" for d, p in labeled_set_specs(settings.train_on)] if settings.train_on else None
    summary = {
        "enabled": True,
        "tagger_key": head.key,
        "thresholds": thresholds,
        **({"label_thresholds": per_label, "label_choice": label_reports} if settings.label_thresholds else {}),
        "training_texts": len(items),
        "augmented_texts": len(variants),
        "augment": asdict(settings.augment),
        "self_training": self_training,
        "public_sets": settings.public_sets,
        "trained_on": trained_on or "calibration sets",
        **{k: v for k, v in head.report.items() if k != "labels"},
    }
    return head, thresholds, summary, per_label


def calibrated_signals(calibrate_on: Path | str | Sequence[str | Path] | None = None, **options) -> CalibratedSignals:
    """Score and detect the ``--calibrate-on`` sets (read with ``label_map``, default: the bundled one),
    train (or load) the tagger on them plus the bundled public sets, choose each domain's tagger threshold
    and detector combination. ``options``: the other fields of :class:`SignalSettings`."""
    settings = SignalSettings(calibrate_on=calibrate_on, **options)
    specs = labeled_set_specs(calibrate_on)
    scorer = ReferenceScorer(settings.scoring or ScoringConfig())
    warehouse = Warehouse(settings.warehouse_path or default_cache())
    cache = HiddenStateCache(warehouse.path.parent, scorer.model_key) if settings.use_tagger else None
    suites: dict[str, DetectorSuite | None] = {}
    languages: dict[str, str] = {}
    val_docs: dict[str, list[ScoredDoc]] = {}
    for name, path in specs:
        records = load_labeled(path, settings.label_map)
        languages[name] = language = language_of_records(records)
        if language not in suites:
            suites[language] = _suite(settings, language)
        settings.progress(
            f"scoring and detecting calibration set {name!r} ({len(records)} records, language {language})"
        )
        val_docs[name] = scored(records, scorer, warehouse, suites[language], settings.progress, cache)
    head, thresholds, tagger_summary, per_label = None, {}, {"enabled": False}, {}
    if settings.use_tagger:
        head, thresholds, tagger_summary, per_label = _train_tagger(settings, val_docs, scorer, warehouse, cache)
    for docs in val_docs.values():
        for doc, found in zip(docs, credsweeper_spans([d.text for d in docs], [d.kind for d in docs]), strict=True):
            doc.detected = doc.detected + found
    per_domain = {}
    for name, docs in val_docs.items():
        combination, table, recognizers = choose_detectors(
            docs, collateral_budget=settings.collateral_budget, objective=settings.objective
        )
        suite = suites[languages[name]]
        per_domain[name] = {
            "language": languages[name],
            "ner_model": (suite.versions.get("spacy_model") if suite is not None else None) or "none",
            "detector_combination": "+".join(combination),
            "calibration_combinations": table,
            "calibration_recognizers": recognizers,
        }
    return CalibratedSignals(
        specs,
        scorer,
        warehouse,
        cache,
        suites,
        head,
        thresholds,
        val_docs,
        per_domain,
        tagger_summary,
        languages,
        settings,
        per_label,
    )


def objective_record(objective: str, budget: float, point) -> dict:
    """What the calibration objective bought, on the calibration labels: the card's and eval's statement."""
    record = {
        "name": canonical_objective(objective),
        "collateral_budget": budget,
        "calibration_recall": round(point.metrics.tpr, 4),
        "calibration_fpr": round(point.metrics.fpr, 4),
    }
    if point.fpr_upper is not None:
        record["calibration_fpr_upper_95"] = round(point.fpr_upper, 4)
    return record


def calibrate_policies(
    cal_docs: list[ScoredDoc],
    policies: Sequence[str],
    collateral_budget: float,
    domain: str,
    progress=_log,
    objective: str = "f1",
) -> tuple[Calibration, dict[str, Calibration]]:
    """The pipeline's choice (:func:`calibration.calibrate` over every policy: best F1, or the detectors
    alone within one standard error of it) and, for the per-policy report, each policy calibrated alone."""
    progress(f"calibrating policies {', '.join(policies)} on {domain!r}")
    chosen = calibrate(cal_docs, policies=policies, collateral_budget=collateral_budget, objective=objective)
    cals = {
        name: calibrate(cal_docs, policies=(name,), collateral_budget=collateral_budget, objective=objective)
        for name in policies
    }
    return chosen, cals


def _ablation(gold_docs: list[ScoredDoc], weighed: Sequence[str]) -> dict[str, dict]:
    """Every single signal and every combination calibration weighed, measured on GOLD: the held-out side
    of the combination's choice."""
    names = ["rules", "tagger", "credsweeper", "credsweeper&tagger", "rules+tagger", "tagger+rules&tagger", *weighed]
    return {
        name: _signal_metrics(
            gold_docs, {d.doc_id: select_sources(len(d.text), d.detected, tuple(name.split("+"))) for d in gold_docs}
        )
        for name in dict.fromkeys(names)
    }


def _per_policy(cals: dict[str, Calibration], cal_docs, gold_docs) -> dict[str, dict]:
    return {
        name: {
            "params": cal.params.name,
            "surprise_auroc_gold": finite_or_none(auroc(*pooled(gold_docs, "surprise", cal.params))),
            "threshold": finite_or_none(cal.point.threshold),
            "surprise_auroc_validation": finite_or_none(cal.surprise_auroc),
            "validation": evaluate(cal_docs, cal),
            "gold": evaluate(gold_docs, cal),
        }
        for name, cal in cals.items()
    }


def _write_predictions(path: Path, gold_docs: list[ScoredDoc], predicted: dict[str, list[Span]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for doc in gold_docs:
            spans = [
                {"start": s.start, "end": s.end, "label": s.label, "score": s.score, "source": s.source or "detector"}
                for s in predicted[doc.doc_id]
            ]
            f.write(json.dumps({"id": doc.doc_id, "spans": spans}) + "\n")


def masked_predictions(
    gold_docs: list[ScoredDoc],
    calibration,
    found: dict[str, list[Span]] | None = None,
    with_honorifics: bool = True,
) -> tuple[dict, dict]:
    """(selected, after propagation): the pipeline's masking of each GOLD record, per document (eval
    records are independent texts, so nothing propagates across them). ``found``: every signal's spans
    before the combination chose, whose structured matches a partial mask is extended to, as in masking;
    ``with_honorifics``: whether a name's title goes with it (the calibration labels' ``honorific_evidence``)."""
    targets = {d.doc_id: structured_targets(d.text, (found or {}).get(d.doc_id, d.detected)) for d in gold_docs}
    texts_of = {d.doc_id: d.text for d in gold_docs}
    selected = {
        d.doc_id: masked_whole(d.text, spans, targets[d.doc_id], with_honorifics)
        for d, spans in zip(gold_docs, predictions(gold_docs, calibration).values(), strict=True)
    }
    predicted, _ = propagate_mentions(
        texts_of,
        selected,
        {d.doc_id: d.doc_id for d in gold_docs},
        scope="document",
        min_chars=MaskingConfig().min_propagation_chars,
    )
    predicted, _ = misfiled_names(texts_of, predicted)
    predicted, _ = one_type_per_identity(texts_of, predicted, {d: d for d in texts_of})
    predicted = {
        doc_id: masked_whole(texts_of[doc_id], spans, targets[doc_id], with_honorifics)
        for doc_id, spans in predicted.items()
    }
    return selected, predicted


def _policies(policy: str, settings: SignalSettings) -> tuple[str, ...]:
    """The policies to weigh: ``--policy`` (every one for "auto"); surprise alone with no detector signal."""
    if not settings.use_detectors and not settings.use_tagger:
        return ("surprise",)
    return POLICIES if policy == "auto" else (policy,)


def _pooled_metrics(docs: Sequence[ScoredDoc], predicted: dict[str, list[Span]]):
    return char_metrics(
        np.concatenate([np.array(char_mask(predicted[d.doc_id], len(d.text)), bool) for d in docs]),
        np.concatenate([np.array(char_mask(d.gold, len(d.text)), bool) for d in docs]),
    )


def _surprise_masks(docs: Sequence[ScoredDoc], calibration) -> dict[str, list[Span]]:
    return {d.doc_id: combine("surprise", [], surprise_spans(d, calibration)) for d in docs}


def _calibrated_on(specs: Sequence[tuple[str, Path]]) -> str:
    return ", ".join(f"{domain}={path}" for domain, path in specs)


def run_eval(
    gold_path: Path,
    predictions_path: Path,
    metrics_path: Path,
    *,
    domain: str | None = None,
    policy: str = "auto",
    **options,
) -> dict:
    """Train the tagger on the calibration sets (plus the bundled public sets), calibrate on the
    domain's set, predict GOLD; write predicted spans and metrics (with a per-signal ablation). GOLD and
    the calibration sets are read with ``label_map`` (default: the bundled one). ``options``: the fields of
    :class:`SignalSettings`. The combination, the policy and the transfer check are the pipeline's own."""
    started, settings = time.perf_counter(), SignalSettings(**options)
    budget, progress = settings.collateral_budget, settings.progress
    specs = labeled_set_specs(settings.calibrate_on)
    domain = domain or specs[0][0]
    if domain not in {d for d, _ in specs}:
        raise ValueError(f"--domain {domain!r} is not one of the --calibrate-on domains {[d for d, _ in specs]}")
    gold_records = load_labeled(gold_path, settings.label_map)
    signals = calibrated_signals(**{**options, "calibrate_on": settings.calibrate_on})
    progress(f"scoring and detecting {gold_path} ({len(gold_records)} records)")
    gold_docs = signals.score(gold_records, progress)
    signals.detect(gold_docs, domain)
    combination = signals.combination(domain)
    ablation = _ablation(gold_docs, [r["combination"] for r in signals.per_domain[domain]["calibration_combinations"]])
    cal_docs = signals.val_docs[domain]
    found = {d.doc_id: list(d.detected) for d in gold_docs}
    for doc in [*cal_docs, *gold_docs]:
        doc.detected = select_sources(len(doc.text), doc.detected, combination)
    policies = _policies(policy, settings)
    chosen, cals = calibrate_policies(cal_docs, policies, budget, domain, progress, settings.objective)
    policy_rule, transfer = chosen.policy_rule, None
    if "detectors" in cals:  # the pipeline's label-free check, on GOLD's texts
        reference = surprise_added_fraction(cal_docs, chosen) if chosen.policy != "detectors" else None
        transfer = transfer_check(chosen, reference, chosen.point.metrics.fpr, gold_docs, budget)
        if transfer is not None and not transfer["held"]:
            chosen = cals["detectors"]
    honorifics = honorific_evidence((d.text, d.gold) for d in cal_docs)
    selected, predicted = masked_predictions(gold_docs, chosen, found, honorifics["masked"])
    if (surprise_cal := cals.get("surprise")) is not None:
        ablation["surprise"] = _signal_metrics(gold_docs, _surprise_masks(gold_docs, surprise_cal))
    ablation["chosen_before_propagation"] = _signal_metrics(gold_docs, selected)
    ablation["chosen"] = _signal_metrics(gold_docs, predicted)
    _write_predictions(predictions_path, gold_docs, predicted)
    final = _pooled_metrics(gold_docs, predicted)  # what the pipeline masks: the chosen spans after propagation
    metrics = {
        "summary": {
            "gold": str(gold_path),
            "calibrated_on": _calibrated_on(specs) if settings.calibrate_on else "bundled validation.jsonl",
            "domain": domain,
            "records": len(gold_docs),
            "detector_combination": "+".join(combination),
            "recognizers": recognizer_summary(signals.per_domain[domain]["calibration_recognizers"]),
            "policy": chosen.policy,
            "policy_rule": policy_rule,
            "surprise_transfer": transfer,
            "honorifics": honorifics,
            "params": chosen.params.name,
            "threshold": finite_or_none(chosen.point.threshold),
            "collateral_budget": budget,
            "objective": objective_record(settings.objective, budget, chosen.point),
            **{k: round(v, 4) for k, v in final.to_dict().items() if isinstance(v, float)},
            "mentions_fully_masked_by_identifier": {
                k: v["fully_masked"] for k, v in ablation["chosen"]["mentions_fully_masked_by_identifier"].items()
            },
            "surprise_auroc_gold": finite_or_none(auroc(*pooled(gold_docs, "surprise", chosen.params))),
            "seconds": round(time.perf_counter() - started, 1),
        },
        "ablation": ablation,
        "per_domain": signals.per_domain,
        "tagger": signals.tagger_summary,
        "per_policy": _per_policy(cals, cal_docs, gold_docs),
        "per_label": per_label(gold_docs, predicted),
        "model": signals.scorer.description,
    }
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    metrics_path.write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
    return metrics
