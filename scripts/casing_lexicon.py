"""Writes ``curation/data/word_case.tsv``: for every word the reference model's tokenizer knows as one token,
the spelling it sees most often (lower case, capitalised or all capitals), the lexicon
:mod:`curation.core.casing` true-cases shouted lines with.

A byte-level BPE vocabulary is a frequency table: a word that is one token with a leading space (" court")
was merged in the tokenizer's training corpus, and a lower id means an earlier merge, a more frequent form.
So " court" (4772) before " Court" (5620) reads "court"; " John" (2322) before " john" (40933) reads "John";
" USA" before " usa" keeps "USA". No value from any labeled set goes into the file.

    .venv/bin/python scripts/casing_lexicon.py
"""

from __future__ import annotations

import json
from pathlib import Path

from curation.score.scorer import ReferenceScorer

SPACE = "\u0120"  # byte-level BPE's marker for a leading space
OUT = Path(__file__).resolve().parent.parent / "curation" / "data" / "word_case.tsv"


def main() -> None:
    scorer = ReferenceScorer()
    model_dir, model_id = scorer._materialized_weights()
    vocab: dict[str, int] = json.loads((Path(model_dir) / "tokenizer.json").read_text())["model"]["vocab"]
    forms: dict[str, tuple[int, str]] = {}  # word -> (best id, form letter)
    for token, token_id in vocab.items():
        word = token[1:]
        if not token.startswith(SPACE) or not word.isascii() or not word.isalpha():
            continue
        form = "l" if word.islower() else "t" if word == word.title() else "u" if word.isupper() else ""
        if not form or (form == "u" and len(word) == 1):
            continue
        key = word.lower()
        if key not in forms or token_id < forms[key][0]:
            forms[key] = (token_id, form)
    header = f"# most frequent spelling per word of {model_id}'s tokenizer (scripts/casing_lexicon.py): l/t/u\n"
    OUT.write_text(header + "".join(f"{w}\t{forms[w][1]}\n" for w in sorted(forms)))
    print(f"{len(forms)} words -> {OUT}")


if __name__ == "__main__":
    main()
