"""Seeded synthetic data: the fake, labeled records behind the bundled data sets and the benchmark corpus.

All values are FAKE (Faker + seeded ``random``). Spans are recorded while a text is appended piece by
piece, so offsets are exact by construction; the same seed gives byte-identical files.

* ``curation/data/sample_corpus.jsonl``: the embedded default corpus (support chats, notes, code).
* ``curation/data/validation.jsonl``: a labeled validation set from the same generator families with a
  different sub-seed; none of its labeled values occurs anywhere in the sample corpus.
* ``curation/data/code_secrets.jsonl``: small source/config files with planted credentials and ~30% clean
  files holding high-entropy non-secrets (hard negatives).

Regenerate them with ``python -m benchmarks.synthetic [--seed N] [--out-dir DIR]``; ``benchmarks.corpus``
draws its rounds from ``datasets.gen_mixed``. Modules, low to high: ``text`` (span-recording builder,
templates), ``values`` (fake value formats and secrets), ``context`` (a data set's seeded state),
``people``, ``records`` (checks and layout), one module per kind of document (``chats``, ``notes``,
``repos`` with its ``secret_files``, ``secret_files_extended``, ``clean_files`` templates), ``datasets``
and ``cli``.
"""
