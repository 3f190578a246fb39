#!/usr/bin/env bash
# ALL-CAPS measurement (issue 36): each dev set's test half with its text upper-cased (span offsets kept:
# a character whose capital is longer stays as it was), evaluated with the same calibration half as
# scripts/dev_eval.sh; compare names fully masked with that run's. Run from the repository root after it:
#
#     scripts/caps_eval.sh DEV_EVAL_OUT_DIR OUT_DIR [WAREHOUSE]
set -u
DEV=${1:?usage: scripts/caps_eval.sh DEV_EVAL_OUT_DIR OUT_DIR [WAREHOUSE]}
OUT=${2:?usage: scripts/caps_eval.sh DEV_EVAL_OUT_DIR OUT_DIR [WAREHOUSE]}
WAREHOUSE=${3:-.devcache/eval.duckdb}
export HF_HUB_OFFLINE=1 TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS=""
mkdir -p "$OUT"
for pair in presidio_synth:synthetic_pii tab_echr_dev:court social_dev:social; do
  name=${pair%%:*}; domain=${pair##*:}
  .venv/bin/python - "$DEV/halves/$name.test.jsonl" "$OUT/$name.upper.jsonl" <<'PY'
import json, sys
def up(text):
    return "".join(c.upper() if len(c.upper()) == 1 else c for c in text)
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:
    for line in src:
        record = json.loads(line)
        record["text"] = up(record["text"])
        dst.write(json.dumps(record, ensure_ascii=False) + "\n")
PY
  start=$(date +%s)
  .venv/bin/curation eval "$OUT/$name.upper.jsonl" --predictions "$OUT/$name.pred.jsonl" \
    --metrics "$OUT/$name.metrics.json" --calibrate-on "$domain=$DEV/halves/$name.cal.jsonl" \
    --warehouse "$WAREHOUSE" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - start ))s" >> "$OUT/summary.txt"
done
