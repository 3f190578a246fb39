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

import json
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from curation.core import spans as S
from curation.core.config import CurationConfig
from curation.core.matching import KNOWN_VALUE_MIN_CHARS, normalize_for_match
from curation.core.textnorm import fold
from curation.core.warehouse import CORPUS, VALIDATION, Warehouse
from curation.gates.release_text import TAG, original_text_only
from curation.policy.identities import NAME_TOKEN, common_words, name_parts, variant_words
from curation.views.surrogates.formats import id_prefix

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


# Labels whose surrogates share words with their originals by design (a job title's vocabulary, a shifted
# date's month and year, a nationality's group word): not scanned for kept parts.
# A street address is generalized to the city and state of the original (the convention's choice of what
# ships), so its surrogate keeps those words by design.
# (an age is written back as its band with the original's own unit word: "70 años" -> "70-74 años")
_PUBLIC_VOCABULARY_LABELS = frozenset({S.TITLE, S.DATE_TIME, S.NRP, S.STREET_ADDRESS, S.AGE})
# The file extension a URL surrogate keeps ('.html'): not a part of the original.
_URL_EXTENSION = re.compile(r"\.[A-Za-z]{2,4}(?=$|[?#])")
# Words the surrogate engine itself writes (schemes, reserved example domains): public, never a kept part.
_ENGINE_WORDS = frozenset({"http", "https", "mailto", "example", "localhost"})
PARTIAL_TOKEN_MIN_CHARS = 4
_TOKEN = re.compile(r"[^\W_]+")


def _private_tokens(value: str) -> set[str]:
    """Casefolded letters-and-digits runs of a private value that identify it: >= 4 characters with a
    letter, not a common word of the language, not a word the surrogate engine writes itself."""
    return {
        t
        for t in (m.casefold() for m in _TOKEN.findall(fold(value)))
        if len(t) >= PARTIAL_TOKEN_MIN_CHARS
        and any(c.isalpha() for c in t)
        and t not in common_words()
        and t not in _ENGINE_WORDS
    }


def partial_leak_scan(config: CurationConfig, warehouse: Warehouse) -> dict:
    """Parts of masked values left in the release, by label (counts only, never values):

    * **structured identifiers partly masked**: an e-mail, URL or IP shape, or a stored detector match with
      a structured label (phone, IBAN, card), in the original text whose letters and digits the mask spans
      cover only in part: the unmasked rest (a host, half a local part) ships in every view;
    * **surrogates that keep a part**: a surrogate (the ranges of the surrogate view the engine wrote) that
      holds a word of a value masked in the same document, e.g. an id surrogate that kept a surname as its
      "prefix".
    One finding blocks, as the name-variant scan's do."""
    from curation.core.identifiers import STRUCTURED_LABELS
    from curation.policy.documents import mask_spans_by_doc
    from curation.policy.extents import structured_targets

    batch = config.batch_id
    masks = mask_spans_by_doc(warehouse, batch)
    texts = dict(warehouse.query("SELECT doc_id, text FROM documents WHERE batch_id = ?", [batch]).iter_rows())
    matches: dict[str, list[S.Span]] = defaultdict(list)
    labels = sorted(STRUCTURED_LABELS)
    placeholders = ", ".join("?" for _ in labels)
    rows = warehouse.query(
        'SELECT doc_id, "start", "end", label, source FROM detector_spans '
        f"WHERE dataset = ? AND batch_id = ? AND label IN ({placeholders})",
        [CORPUS, batch, *labels],
    )
    for doc_id, start, end, label, source in rows.iter_rows():
        matches[doc_id].append(S.Span(start, end, label, None, source))
    structured: dict[str, int] = defaultdict(int)
    checked = 0
    for doc_id, text in texts.items():
        covered = np.array(S.char_mask(masks.get(doc_id, []), len(text)), dtype=bool)
        for target in structured_targets(text, matches.get(doc_id, [])):
            alnum = np.array([c.isalnum() for c in text[target.start : target.end]], dtype=bool)
            part = covered[target.start : target.end][alnum]
            checked += 1
            if part.any() and not part.all():
                structured[target.label] += 1
    kept: dict[str, int] = defaultdict(int)
    surrogates = 0
    views = warehouse.query("SELECT doc_id, text, replaced_ranges FROM surrogate_view WHERE batch_id = ?", [batch])
    for doc_id, view_text, ranges in views.iter_rows():
        text = texts.get(doc_id, "")
        owner: dict[str, str] = {}
        for span in masks.get(doc_id, []):
            if span.label not in _PUBLIC_VOCABULARY_LABELS:
                value = text[span.start : span.end].strip()
                # the short id codes an id surrogate keeps ('ACCT-') are no part
                if span.label in (S.ACCOUNT_ID, S.ID_NUMBER):
                    value = value[len(id_prefix(value)) :]
                elif span.label == S.URL:
                    value = _URL_EXTENSION.sub(" ", value)
                for token in _private_tokens(value):
                    owner.setdefault(token, span.label)
        written_ranges = json.loads(ranges or "[]")
        doc_masks = masks.get(doc_id, [])
        # the engine writes one range per mask span, in order: a generalized address keeps its city by design
        labels = [m.label for m in doc_masks] if len(doc_masks) == len(written_ranges) else [None] * len(written_ranges)
        for (start, end), label in zip(written_ranges, labels, strict=True):
            if label in _PUBLIC_VOCABULARY_LABELS:
                continue
            written = TAG.sub(" ", view_text[start:end])  # typed tags are the convention's words, not a part
            surrogates += 1
            for token in _private_tokens(written) & owner.keys():
                kept[owner[token]] += 1
    findings = sum(structured.values()) + sum(kept.values())
    return {
        "structured_identifiers_checked": checked,
        "structured_partly_masked_by_label": dict(sorted(structured.items())),
        "surrogates_checked": surrogates,
        "surrogate_kept_parts_by_label": dict(sorted(kept.items())),
        "findings": findings,
        "passed": bool(texts) and findings == 0,
    }
