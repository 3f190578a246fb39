"""Independent second signals for the residual audit of a release.

`residual_detector_audit` re-runs the detectors that made the masks, so it cannot see what they miss.
Two signals that do not come from those detectors' judgement of the release text:

* **name-variant scan** (blocking): every person the batch masked or supplied (PERSON mask spans and
  supplied PERSON labels) is split into its name words; any whole-word, capitalized occurrence of one of
  them left in the released text of the same scope (our surrogates and tags blanked out) is a leaked
  part of a known name. Deterministic and precise, so one occurrence fails the gate. Lowercase mentions
  are counted and reported, not failed (a name word may also be an ordinary word in lower case).
* **surprise at a recall-oriented threshold** (advisory): the reference model's per-character surprise
  with the calibrated window/score settings, at the lowest threshold that flags at most
  ``CLEAN_FLAG_RATE`` of the non-target characters of the calibration split (the recall it reaches on
  their target characters is reported), over the characters the release keeps. The share flagged is
  compared with that expected share on clean text: a ratio well above 1 says the release keeps more
  unusual text than clean text has. (A fixed recall target such as 95% flags most clean text with a
  small model's windowed surprise: 90% of it on the bundled data, measured; no contrast is left.)
  Benign unusual text (code, product names) also trips it, so it informs reviewers and the card but
  does not block. Scores are the stored token scores of the original documents: outside the masked
  spans the release has the same tokens, so no model pass over the release is needed.

Both report counts and rates only, never a value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from curation.core import spans as S
from curation.core.config import CurationConfig
from curation.core.matching import KNOWN_VALUE_MIN_CHARS, normalize_for_match
from curation.core.textnorm import fold
from curation.core.warehouse import CORPUS, VALIDATION, Warehouse
from curation.gates.release_text import original_text_only
from curation.policy.identities import NAME_TOKEN, common_words, name_parts, variant_words

CLEAN_FLAG_RATE = 0.10


@dataclass(frozen=True)
class NameCounts:
    people: int  # distinct person names of the batch
    unparsed: int  # masked or supplied names not shaped like a name, scanned by their own words
    unscannable: int  # ... with no word to search for: a finding, the audit cannot vouch for them
    left_to_leak_scan: int  # names of common words only: the leak scan searches their exact value
    too_short: int  # name-shaped but too short for any search (an initial, a two-letter name)


def _identity_groups(
    config: CurationConfig, warehouse: Warehouse
) -> tuple[dict[str, str], dict[str, set[str]], NameCounts]:
    """(doc id -> identity group, group -> name words, counts) of the batch's person names."""
    batch = config.batch_id
    docs = warehouse.query("SELECT doc_id, scope_id FROM documents WHERE batch_id = ?", [batch])
    per_document = config.masking.propagation_scope == "document"
    group_of = {d: (d if per_document or not s else s) for d, s in docs.iter_rows()}
    names = warehouse.query(
        'SELECT m.doc_id, substr(d.text, m."start" + 1, m."end" - m."start") AS value FROM mask_spans m '
        "JOIN documents d USING (doc_id, batch_id) WHERE m.batch_id = ? AND m.label = ? "
        'UNION SELECT g.doc_id, substr(d.text, g."start" + 1, g."end" - g."start") FROM gold_spans g '
        "JOIN documents d USING (doc_id, batch_id) WHERE g.batch_id = ? AND g.dataset = 'corpus' AND g.label = ?",
        [batch, S.PERSON, batch, S.PERSON],
    )
    words: dict[str, set[str]] = defaultdict(set)
    people = set()
    unparsed = unscannable = to_leak_scan = too_short = 0
    for doc_id, value in names.iter_rows():
        group = group_of.get(doc_id, doc_id)
        parts = name_parts(value)
        shaped = parts is not None
        if not shaped:
            unparsed += 1
            parts = NAME_TOKEN.findall(fold(value))
        found = variant_words(parts)
        if not found:  # not name-shaped, or only short/common words: search its own words, never skip it
            found = {w for w in parts if sum(c.isalpha() for c in w) >= 2 and w.casefold() not in common_words()}
        if not found:
            if len(normalize_for_match(value)) >= KNOWN_VALUE_MIN_CHARS:
                to_leak_scan += 1  # "Young", "April": common words, so the leak scan's exact-value search covers it
            elif shaped:
                too_short += 1  # "Al", "J.": a name, too short for any search; reported
            else:
                unscannable += 1  # neither shaped like a name nor searchable: a finding
            continue
        words[group] |= found
        people.add((group, tuple(p.casefold() for p in parts)))
    return group_of, words, NameCounts(len(people), unparsed, unscannable, to_leak_scan, too_short)


def name_variant_scan(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Leftover name words of the batch's people in its released text (both views), per scope."""
    group_of, words, counts = _identity_groups(config, warehouse)
    patterns = {
        group: re.compile(
            r"(?<![\w-])(" + "|".join(re.escape(w) for w in sorted(ws, key=len, reverse=True)) + r")(?![\w-])",
            re.IGNORECASE,
        )
        for group, ws in words.items()
        if ws
    }
    texts = original_text_only(warehouse, config.batch_id)
    leaked = lowercase = 0
    docs_with_leaks: set[str] = set()
    by_view: dict[str, int] = defaultdict(int)
    for view_doc, text in texts:
        view, doc_id = view_doc.split(":", 1)
        pattern = patterns.get(group_of.get(doc_id, doc_id))
        if pattern is None:
            continue
        for match in pattern.finditer(fold(text)):  # a zero-width space inside a leftover name hides nothing
            if match.group(1)[:1].isupper():
                leaked += 1
                by_view[view] += 1
                docs_with_leaks.add(doc_id)
            else:
                lowercase += 1
    return {
        "texts_scanned": len(texts),
        "people": counts.people,
        "names_not_name_shaped": counts.unparsed,
        "names_unscannable": counts.unscannable,
        "names_left_to_leak_scan": counts.left_to_leak_scan,
        "names_too_short_to_search": counts.too_short,
        "name_words": sum(len(ws) for ws in words.values()),
        "leaked_name_words": leaked,
        "documents_with_leaks": len(docs_with_leaks),
        "leaks_by_view": dict(sorted(by_view.items())),
        "lowercase_mentions": lowercase,
        "passed": bool(texts) and leaked == 0 and counts.unscannable == 0,
        "reason": "no release text to scan"
        if not texts
        else f"{counts.unscannable} masked person name(s) have no word to search the release for"
        if counts.unscannable
        else "",
    }


def recall_threshold(config: CurationConfig, warehouse: Warehouse, model_key: str, clean_rate: float = CLEAN_FLAG_RATE):
    """(calibrated params, lowest threshold flagging at most `clean_rate` of the calibration split's
    non-target characters, that share, the recall on its target characters at that threshold)."""
    from curation.policy.calibration import pooled
    from curation.policy.documents import load_scored_docs
    from curation.policy.stored import current_calibration

    _, applied, _ = current_calibration(config, warehouse, model_key)
    docs = load_scored_docs(warehouse, model_key, VALIDATION, split="calibration")
    scores, gold = pooled(docs, "surprise", applied.params)
    clean, target = scores[~gold & np.isfinite(scores)], scores[gold & np.isfinite(scores)]
    if clean.size == 0 or target.size == 0:
        raise ValueError("the calibration split has no scored target or non-target characters")
    threshold = float(np.quantile(clean, 1.0 - clean_rate, method="higher"))
    if np.mean(clean >= threshold) > clean_rate:  # ties at the quantile: step to the next clean score up
        above = clean[clean > threshold]
        threshold = float(above.min()) if above.size else float(np.inf)
    return applied.params, threshold, float(np.mean(clean >= threshold)), float(np.mean(target >= threshold))


def surprise_residual_signal(config: CurationConfig, warehouse: Warehouse, model_key: str) -> dict:
    """Share of the released characters that surprise flags at the recall-oriented threshold, next to
    the share expected on clean text (advisory)."""
    from curation.policy.calibration import doc_char_scores
    from curation.policy.documents import load_scored_docs, mask_spans_by_doc

    try:
        params, threshold, expected, recall = recall_threshold(config, warehouse, model_key)
    except (RuntimeError, ValueError) as exc:  # no calibration / scores: say so, it does not block
        return {"available": False, "reason": str(exc)}
    masks = mask_spans_by_doc(warehouse, config.batch_id)
    flagged = kept = runs = 0
    docs_flagged = 0
    docs = load_scored_docs(warehouse, model_key, CORPUS, batch_id=config.batch_id)
    for doc in docs:
        chars = doc_char_scores(doc, "surprise", params)
        released = ~np.array(S.char_mask(masks.get(doc.doc_id, []), len(doc.text)), dtype=bool)
        released &= ~np.array([c.isspace() for c in doc.text], dtype=bool)
        hit = released & np.isfinite(chars) & (chars >= threshold)
        kept += int(released.sum())
        n = int(hit.sum())
        flagged += n
        docs_flagged += n > 0
        runs += int(np.count_nonzero(np.diff(np.concatenate([[0], hit.astype(np.int8)])) == 1))
    rate = flagged / kept if kept else None
    return {
        "available": True,
        "clean_flag_rate_target": CLEAN_FLAG_RATE,
        "threshold": round(threshold, 4),
        "recall_on_calibration_targets": round(recall, 4),
        "window": params.name,
        "documents": len(docs),
        "released_chars": kept,
        "flagged_chars": flagged,
        "flagged_spans": runs,
        "documents_flagged": docs_flagged,
        "flagged_rate": round(rate, 4) if rate is not None else None,
        "expected_rate_on_clean_text": round(expected, 4) if np.isfinite(expected) else None,
        "ratio_to_expected": round(rate / expected, 2) if rate is not None and expected > 0 else None,
        "blocking": False,
    }
