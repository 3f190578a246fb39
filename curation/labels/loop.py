"""The labeling loop: pick the records of a corpus worth labeling, hand them to Label Studio with the
current detection as predictions (annotators correct rather than start from nothing), and read the
annotations back as a labeled JSONL set calibration can use.

Export picks by uncertainty (default) or at random (the seeded baseline). A record's uncertainty is the mean of
how close the tagger's token probabilities come to the domain's threshold and how much the signals (tagger,
rules, CredSweeper, surprise) disagree on its characters; picks are spread round-robin over (kind, length)
strata so a few long or code-heavy records do not take the whole budget. ``targets`` also weighs how many
targets the tagger expects in a record, below its threshold too (where the misses are), and spreads the
picks over the strata in proportion to their sizes: more names per label for a tagger retrained on a new
domain, a calibration less sure of its collateral (docs/evaluation.md, "Picks that find targets").
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from curation.core.private import PRIVATE_FILE_MODE, private_file
from curation.core.spans import Span, char_mask, merge
from curation.labels.label_map import UnknownLabelError, map_label, unknown_label_message
from curation.labels.sets import LabeledRecord, load_labeled
from curation.views.convention import KNOWN_LABELS

STRATEGIES = ("uncertainty", "targets", "random")
LENGTH_BUCKETS = (200, 1000, 5000)  # characters: short, medium, long, very long
TOP_TOKENS = 5  # a record's tagger uncertainty: the mean over its most uncertain tokens
FROM_NAME, TO_NAME = "label", "text"


class LabelImportError(ValueError):
    """A Label Studio export that cannot become a labeled set; the message lists every bad task."""


@dataclass
class Candidate:
    """One input record, its predicted spans and how uncertain the current detection is about it."""

    doc_id: str
    text: str
    kind: str = "text"
    spans: list[Span] = field(default_factory=list)
    score: float = 0.0

    @property
    def stratum(self) -> tuple[str, int]:
        return self.kind, length_bucket(len(self.text))


def length_bucket(n_chars: int) -> int:
    return sum(n_chars >= edge for edge in LENGTH_BUCKETS)


# -- picking ---------------------------------------------------------------------------------------
def pick_random(candidates: Sequence[Candidate], n: int, seed: int) -> list[Candidate]:
    """``n`` records drawn with ``seed``: the same picks on every run, in input order."""
    chosen = set(random.Random(seed).sample(range(len(candidates)), min(n, len(candidates))))
    return [c for i, c in enumerate(candidates) if i in chosen]


def pick_spread(candidates: Sequence[Candidate], n: int) -> list[Candidate]:
    """The ``n`` most uncertain records, taken round-robin over (kind, length) strata: each round takes
    the next most uncertain record of every stratum, strata with the most uncertain record first."""
    strata: dict[tuple[str, int], list[Candidate]] = {}
    for c in sorted(candidates, key=lambda c: (-c.score, c.doc_id)):
        strata.setdefault(c.stratum, []).append(c)
    queues = sorted(strata.values(), key=lambda q: (-q[0].score, q[0].doc_id))
    picked: list[Candidate] = []
    depth = 0
    while len(picked) < min(n, len(candidates)):
        for queue in queues:
            if depth < len(queue) and len(picked) < n:
                picked.append(queue[depth])
        depth += 1
    return picked


def pick_proportional(candidates: Sequence[Candidate], n: int) -> list[Candidate]:
    """The ``n`` best-scored records, spread over (kind, length) strata in proportion to their sizes:
    each pick goes to the stratum with the smallest share of its records picked so far (its best record
    left breaks ties), so every stratum gets one pick before any gets two, and then its share (the
    round-robin of :func:`pick_spread` gave 11 long posts among 503 a quarter of a 40-record budget on
    social_dev's pool). The picks come in priority order: the first k are what ``n = k`` picks."""
    strata: dict[tuple[str, int], list[Candidate]] = {}
    for c in sorted(candidates, key=lambda c: (-c.score, c.doc_id)):
        strata.setdefault(c.stratum, []).append(c)
    queues = list(strata.values())
    taken = [0] * len(queues)
    picked: list[Candidate] = []
    while len(picked) < min(n, len(candidates)):
        open_ = [i for i in range(len(queues)) if taken[i] < len(queues[i])]
        best = min(
            open_, key=lambda i: (taken[i] / len(queues[i]), -queues[i][taken[i]].score, queues[i][taken[i]].doc_id)
        )
        picked.append(queues[best][taken[best]])
        taken[best] += 1
    return picked


EXPECTED_TARGETS_SCALE = 2.0  # expected target tokens at which the target term reaches 1 - 1/e


def expected_targets(probs: np.ndarray | None) -> float:
    """How likely a record holds targets at all, by the tagger's own account: 1 - exp(-E/2), E the sum of
    its tokens' P(not O) (the expected number of target tokens, below the threshold too: where misses are).
    Near-threshold closeness and disagreement alone picked records with fewer targets than random did
    (social_dev's pool: 17 target spans in 40 picks, 23.5 for random picks): the ``targets`` strategy."""
    if probs is None or len(probs) == 0:
        return 0.0
    return float(1.0 - np.exp(-float((1.0 - probs[:, 0]).sum()) / EXPECTED_TARGETS_SCALE))


def tagger_uncertainty(probs: np.ndarray | None, threshold: float) -> float:
    """1 when some tokens' P(not O) sit exactly at the threshold, 0 when all are far from it."""
    if probs is None or len(probs) == 0:
        return 0.0
    private = 1.0 - probs[:, 0]
    closeness = 1.0 - np.abs(private - threshold) / max(threshold, 1.0 - threshold)
    top = np.sort(closeness)[-TOP_TOKENS:]
    return float(np.clip(top.mean(), 0.0, 1.0))


def disagreement(n_chars: int, signals: Sequence[Sequence[Span]]) -> float:
    """Share of the characters some signal flags on which the signals do not all agree (0: no signal
    flags anything, or they all flag the same characters)."""
    if n_chars == 0 or len(signals) < 2:
        return 0.0
    masks = np.array([char_mask(s, n_chars) for s in signals], dtype=bool)
    flagged = masks.any(axis=0)
    if not flagged.any():
        return 0.0
    return float((flagged & ~masks.all(axis=0)).sum() / flagged.sum())


# -- Label Studio import format -------------------------------------------------------------------
def label_config(labels: Sequence[str] = KNOWN_LABELS) -> str:
    """The labeling interface: the convention's labels over the record's text."""
    lines = [
        "<View>",
        f'  <Labels name="{FROM_NAME}" toName="{TO_NAME}">',
        *(f'    <Label value="{label}"/>' for label in labels),
        "  </Labels>",
        f'  <Text name="{TO_NAME}" value="$text"/>',
        "</View>",
    ]
    return "\n".join(lines) + "\n"


def task(candidate: Candidate, model_version: str) -> dict[str, Any]:
    """One Label Studio task with the current detection's spans as a prediction (scored by uncertainty)."""
    result = [
        {
            "from_name": FROM_NAME,
            "to_name": TO_NAME,
            "type": "labels",
            "value": {"start": s.start, "end": s.end, "text": candidate.text[s.start : s.end], "labels": [s.label]},
        }
        for s in candidate.spans
    ]
    data = {"text": candidate.text, "doc_id": candidate.doc_id}
    if candidate.kind != "text":
        data["kind"] = candidate.kind
    # Label Studio sorts tasks by prediction score: the most uncertain records first
    prediction = {"model_version": model_version, "score": round(candidate.score, 4), "result": result}
    return {"data": data, "predictions": [prediction]}


def config_path_for(tasks_path: Path) -> Path:
    """``TASKS.json`` -> ``TASKS.label_config.xml`` beside it."""
    tasks_path = Path(tasks_path)
    return tasks_path.with_name(f"{tasks_path.stem}.label_config.xml")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` through a 0600 temporary file then rename: raw text never sits readable by others."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    private_file(tmp)
    os.replace(tmp, path)


def write_tasks(path: Path, picked: Sequence[Candidate], model_version: str) -> Path:
    """The tasks JSON and its label config beside it, both 0600; returns the config's path."""
    write_private(path, json.dumps([task(c, model_version) for c in picked], ensure_ascii=False, indent=1))
    config = config_path_for(path)
    write_private(config, label_config())
    return config


# -- Label Studio export -> labeled JSONL ----------------------------------------------------------
def latest_annotation(annotations: Any) -> dict | None:
    """The most recent annotation that was not cancelled (skipped); None when there is none."""
    usable = [a for a in annotations or [] if isinstance(a, dict) and not a.get("was_cancelled")]
    if not usable:
        return None
    return max(usable, key=lambda a: (str(a.get("updated_at") or a.get("created_at") or ""), a.get("id") or 0))


def _offsets(text: str, value: dict) -> tuple[int, int]:
    """Python character offsets of a result; Label Studio's browser counts UTF-16 units, so offsets that
    only match ``value.text`` once read as UTF-16 (text with emoji) are converted."""
    start, end = value.get("start"), value.get("end")
    if type(start) is not int or type(end) is not int:
        raise ValueError(f"needs integer 'start' and 'end', got {start!r}, {end!r}")
    quoted = value.get("text")
    if quoted is not None and not isinstance(quoted, str):
        raise ValueError("'text' must be a string")
    if 0 <= start < end <= len(text) and (quoted is None or text[start:end] == quoted):
        return start, end
    units = np.cumsum([0] + [2 if ord(ch) > 0xFFFF else 1 for ch in text])
    a, b = int(np.searchsorted(units, start)), int(np.searchsorted(units, end))
    if a < b <= len(text) and units[a] == start and units[b] == end and text[a:b] == quoted:
        return a, b
    if not 0 <= start < end <= len(text):
        raise ValueError(f"[{start}, {end}) is empty or outside the text ({len(text)} chars)")
    raise ValueError(f"[{start}, {end}) is {text[start:end]!r} in the text, but the annotation says {quoted!r}")


def task_record(
    item: Any, domain: str, label_map: Mapping[str, str] | None = None
) -> tuple[dict[str, Any] | None, list[str]]:
    """One exported task as a labeled record (None when it has no usable annotation) and its problems."""
    if not isinstance(item, dict):
        return None, [f"expected a task object, got {type(item).__name__}"]
    data = item.get("data")
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str):
        return None, ["'data.text' must be a string"]
    doc_id = data.get("doc_id")
    if doc_id is None or doc_id == "":
        doc_id = f"ls-{item.get('id')}"  # a task made in Label Studio itself, not by `curation label export`
    annotation = latest_annotation(item.get("annotations"))
    if annotation is None:
        return None, []
    problems, spans = [], []
    for i, result in enumerate(annotation.get("result") or []):
        if not isinstance(result, dict) or result.get("type") != "labels":
            continue  # relations, choices, text areas: not spans
        value = result.get("value")
        labels = value.get("labels") if isinstance(value, dict) else None
        where = f"annotation {annotation.get('id')} result {i}"
        if not isinstance(labels, list) or len(labels) != 1 or not isinstance(labels[0], str):
            problems.append(f"{where}: needs exactly one label, got {labels!r}")
            continue
        try:
            start, end = _offsets(text, value)
            label = map_label(labels[0], label_map)
        except UnknownLabelError:
            problems.append(unknown_label_message(labels[0], where, label_map))
            continue
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        spans.append(Span(start, end, label, source="gold"))
    kind = data.get("kind") if data.get("kind") in ("code", "chat") else "text"
    record = LabeledRecord(str(doc_id), text, merge(spans), kind).to_dict()  # overlaps: the longest's label
    return {**record, "domain": domain}, problems


def import_export(
    export_path: Path, domain: str, label_map: Mapping[str, str] | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Labeled records of a Label Studio JSON export (labels through ``label_map``, default: the bundled
    one) and how many tasks had no usable annotation; raises LabelImportError listing every bad task
    (task id: what is wrong) so nothing partial is written."""
    export_path = Path(export_path)
    try:
        tasks = json.loads(export_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LabelImportError(f"{export_path}: not JSON ({exc.msg} at line {exc.lineno}); export as JSON") from None
    if not isinstance(tasks, list):
        raise LabelImportError(f"{export_path}: expected a JSON list of tasks (Label Studio's JSON export)")
    records, errors, unlabeled, first = [], [], 0, {}
    for index, item in enumerate(tasks):
        task_id = item.get("id", f"#{index}") if isinstance(item, dict) else f"#{index}"
        record, problems = task_record(item, domain, label_map)
        if record is not None and record["id"] in first:
            problems.append(f"duplicate doc_id {record['id']!r} (also task {first[record['id']]})")
        errors += [f"task {task_id}: {p}" for p in problems]
        if record is None:
            unlabeled += not problems
            continue
        first.setdefault(record["id"], task_id)
        records.append(record)
    if errors:
        raise LabelImportError(f"{export_path}: {len(errors)} problem(s); nothing written:\n  " + "\n  ".join(errors))
    return records, unlabeled


def write_labeled_private(path: Path, records: Sequence[dict[str, Any]]) -> None:
    write_private(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


# -- export: the whole step -----------------------------------------------------------------------
def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_candidates(input_path: Path, progress=None) -> list[Candidate]:
    """The input's records as ``curation run`` ingests them; their labels are ignored (a record whose
    spans would be quarantined is still a candidate)."""
    from curation.ingest.readers import ingest_unlabeled

    result = ingest_unlabeled(Path(input_path), batch_id="label-export")
    if result.quarantine.height and progress:
        progress(f"{result.quarantine.height} input record(s) quarantined by ingest (not candidates)")
    docs = result.documents
    return [Candidate(i, t, k) for i, t, k in zip(docs["doc_id"], docs["text"], docs["kind"], strict=True)]


def without_labeled(
    candidates: list[Candidate], labeled_files: Sequence[str | Path], label_map: Mapping[str, str] | None
) -> tuple[list[Candidate], int]:
    """The candidates no labeled file holds (by record id or by the same text), and how many were left out."""
    ids: set[str] = set()
    texts: set[str] = set()
    for path in labeled_files:
        for record in load_labeled(Path(path), label_map):
            ids.add(record.id)
            texts.add(hashlib.sha256(record.text.encode()).hexdigest())
    if not ids:
        return candidates, 0
    kept = [
        c for c in candidates if c.doc_id not in ids and hashlib.sha256(c.text.encode()).hexdigest() not in texts
    ]
    return kept, len(candidates) - len(kept)


def export_tasks(
    input_path: Path,
    n: int,
    out: Path,
    *,
    strategy: str = "uncertainty",
    seed: int = 0,
    calibrate_on: Sequence[str | Path] | None = None,
    domain: str | None = None,
    warehouse_path: Path | None = None,
    collateral_budget: float = 0.03,
    label_map: Mapping[str, str] | None = None,
    progress=None,
    exclude: Sequence[str | Path] = (),
    **tagger_options: Any,
) -> dict[str, Any]:
    """Pick ``n`` records of the input, predict their spans with the domain's calibrated detection, write
    the Label Studio tasks and label config; returns a summary. Records already labeled (in an ``exclude``
    file or in the domain's own ``--calibrate-on`` set, matched by id or by text) are not picked again, so
    a user labels in rounds: label 10, pass them to ``--calibrate-on``, export the next 10.
    ``tagger_options``: how the tagger trains (``public_sets``, ``train_on``, ``augment``,
    ``label_thresholds``: fields of curation.evaluation.gold.SignalSettings)."""
    from curation.evaluation.gold import calibrate_policies, calibrated_signals, labeled_set_specs
    from curation.policy.calibration import POLICIES

    progress = progress or _log
    if strategy not in STRATEGIES:
        raise ValueError(f"--strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    if n < 1:
        raise ValueError(f"--n must be at least 1, got {n}")
    specs = labeled_set_specs(calibrate_on)
    domain = domain or specs[0][0]
    if domain not in {d for d, _ in specs}:
        raise ValueError(f"--domain {domain!r} is not one of the --calibrate-on domains {[d for d, _ in specs]}")
    candidates = read_candidates(input_path, progress)
    if not candidates:
        raise ValueError(f"{input_path}: no records to label (every record was quarantined or the input is empty)")
    labeled_files = [*exclude, *(path for d, path in specs if d == domain and calibrate_on)]
    candidates, excluded = without_labeled(candidates, labeled_files, label_map)
    if not candidates:
        raise ValueError(f"{input_path}: every record is labeled already (in {', '.join(map(str, labeled_files))})")
    to_predict = pick_random(candidates, n, seed) if strategy == "random" else candidates
    signals = calibrated_signals(
        calibrate_on,
        warehouse_path=warehouse_path,
        label_map=label_map,
        progress=progress,
        **tagger_options,
    )
    combination = signals.combination(domain)
    cal_docs = signals.val_docs[domain]
    for doc in cal_docs:
        doc.detected = select_sources_of(doc, combination)
    chosen, cals = calibrate_policies(cal_docs, POLICIES, collateral_budget, domain, progress)
    progress(f"predicting {len(to_predict)} record(s) of {input_path}")
    docs = signals.score([LabeledRecord(c.doc_id, c.text, [], c.kind) for c in to_predict], progress)
    probs = signals.detect(docs, domain)
    threshold = signals.thresholds.get(domain, 0.5)
    for candidate, doc, p in zip(to_predict, docs, probs, strict=True):
        candidate.spans = predicted_spans(doc, combination, chosen)
        candidate.score = uncertainty(doc, p, threshold, cals.get("surprise"), strategy == "targets")
    pickers = {"random": lambda c, _: list(c), "uncertainty": pick_spread, "targets": pick_proportional}
    picked = pickers[strategy](to_predict, n)
    model_version = f"curation {domain}: {'+'.join(combination)}, policy {chosen.policy}"
    if signals.head is not None:
        model_version += f", tagger {signals.head.key}"
    config = write_tasks(out, picked, model_version)
    return {
        "tasks": str(out),
        "label_config": str(config),
        "picked": len(picked),
        "candidates": len(candidates),
        "strategy": strategy,
        "domain": domain,
        "excluded_labeled": excluded,
        "model_version": model_version,
        "predicted_spans": sum(len(c.spans) for c in picked),
        "strata": sorted({f"{k}/{b}" for k, b in (c.stratum for c in picked)}),
    }


def select_sources_of(doc, combination: Sequence[str]) -> list[Span]:
    from curation.detect.combination import select_sources

    return select_sources(len(doc.text), doc.detected, combination)


def predicted_spans(doc, combination: Sequence[str], calibration) -> list[Span]:
    """What the pipeline would mask in this record: the chosen combination and policy, then the other
    mentions of each masked value in the record."""
    from curation.core.config import MaskingConfig
    from curation.policy.masking import combine, surprise_spans
    from curation.policy.propagation import propagate_mentions

    selected = combine(calibration.policy, select_sources_of(doc, combination), surprise_spans(doc, calibration))
    propagated, _ = propagate_mentions(
        {doc.doc_id: doc.text},
        {doc.doc_id: selected},
        {doc.doc_id: doc.doc_id},
        scope="document",
        min_chars=MaskingConfig().min_propagation_chars,
    )
    return propagated[doc.doc_id]


def uncertainty(
    doc, probs: np.ndarray | None, threshold: float, surprise_calibration, weigh_targets: bool = False
) -> float:
    """The mean of the tagger's closeness to its threshold and the disagreement between tagger, rules,
    CredSweeper and surprise; with ``weigh_targets`` (the ``targets`` strategy) averaged with how likely the
    record holds targets (:func:`expected_targets`). Within [0, 1], as Label Studio wants a score."""
    from curation.detect.base import CODE_KINDS
    from curation.detect.combination import CREDSWEEPER, RULES, TAGGER, source_family
    from curation.policy.masking import surprise_spans

    by_family: dict[str, list[Span]] = {RULES: [], TAGGER: [], CREDSWEEPER: []}
    for span in doc.detected:
        by_family[source_family(span.source)].append(span)
    signals = [by_family[TAGGER], by_family[RULES]] if probs is not None else [by_family[RULES]]
    if doc.kind in CODE_KINDS:
        signals.append(by_family[CREDSWEEPER])
    if surprise_calibration is not None:
        signals.append(surprise_spans(doc, surprise_calibration))
    closeness = (tagger_uncertainty(probs, threshold) + disagreement(len(doc.text), signals)) / 2
    return (closeness + expected_targets(probs)) / 2 if weigh_targets else closeness
