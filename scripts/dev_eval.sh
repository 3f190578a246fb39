#!/usr/bin/env bash
# The dev-half measurement: each shared dev set's seeded halves (scripts/dev_halves.py), then
# `curation eval` calibrated on one half (tagger trained on it plus the bundled public sets) and
# evaluated on the other. Run from the repository root:
#
#     scripts/dev_eval.sh OUT_DIR [WAREHOUSE] [DATA]
#
# OUT_DIR gets the halves' predictions and metrics (NAME.metrics.json) and summary.txt (seconds per set);
# WAREHOUSE caches scores, hidden states and taggers (default .devcache/eval.duckdb), so a second run
# makes no model calls; DATA is the folder of the dev sets (default ../shared/data). EVAL_ARGS (environment)
# goes to every `curation eval`, e.g. EVAL_ARGS="--objective recall_at_budget".
set -u
OUT=${1:?usage: scripts/dev_eval.sh OUT_DIR [WAREHOUSE] [DATA]}
WAREHOUSE=${2:-.devcache/eval.duckdb}
DATA=${3:-../shared/data}
HALVES=$OUT/halves
export HF_HUB_OFFLINE=1 TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS=""
mkdir -p "$OUT" "$(dirname "$WAREHOUSE")"
.venv/bin/python scripts/dev_halves.py --data "$DATA" --out "$HALVES" > "$OUT/halves.log" 2>&1 || exit 1
for pair in presidio_synth:synthetic_pii tab_echr_dev:court creddata_dev:code social_dev:social; do
  name=${pair%%:*}; domain=${pair##*:}
  start=$(date +%s)
  .venv/bin/curation eval "$HALVES/$name.test.jsonl" --predictions "$OUT/$name.pred.jsonl" \
    --metrics "$OUT/$name.metrics.json" --calibrate-on "$domain=$HALVES/$name.cal.jsonl" \
    --warehouse "$WAREHOUSE" ${EVAL_ARGS:-} > "$OUT/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - start ))s" >> "$OUT/summary.txt"
done
