#!/usr/bin/env bash
# ask_budget.sh measures how much the default `ask` sends per question (issue 26,
# item 4): on each genre's VALIDATION split (never a test split), the default
# beside topk:k=20, whole chunks within the same budget (budget:tokens=1500),
# the fixed budget it replaces — evidence:budget=1500,floor=0,stop=0, which fills
# 1,500 tokens — the same with the model's floor (evidence:budget=1500,stop=0), the
# default without its gate on the floor and the stop (evidence:budget=1500,
# min_expected=0), plus any strategies in $EXTRA. Every row is also compared question by question
# with the filled budget (--versus). docs/evidence.md ("How much, per question")
# holds the figures it printed.
#
#   docs/ask_budget.sh                       # the embedded model
#   MODEL=new_model.json docs/ask_budget.sh  # a refitted one (--evidence-model)
#
# DATA: the genre files (friendsqa/qmsum/policyqa/tatqa _600.jsonl.gz); HP: HotpotQA
# dev53, all 53 questions (a check that prose holds, never used to choose); OUT:
# where the reports go (OUT/NAME_pPOOL.{json,txt}); CTXSEL: the binary (built from
# this checkout when unset). One eval at a time, niced, one worker.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-/work/gdata-data}
HP=${HP:-../shared/data/hotpotqa_sf_dev53.jsonl}
OUT=${OUT:-/tmp/ask_budget}
FIXED=${FIXED:-evidence:budget=1500,floor=0,stop=0}
STRATS="topk:k=20,budget:tokens=1500,$FIXED,evidence:budget=1500,stop=0,evidence:budget=1500,min_expected=0,default${EXTRA:+,$EXTRA}"
mkdir -p "$OUT"
if [ -z "${CTXSEL:-}" ]; then
	CTXSEL=$OUT/ctxsel
	go build -o "$CTXSEL" ./cmd/ctxsel
fi
model=()
[ -n "${MODEL:-}" ] && model=(--evidence-model "$MODEL")

run() { # name file pool split-flags...
	local name=$1 file=$2 pool=$3
	shift 3
	nice "$CTXSEL" eval --data "$file" "$@" --pool "$pool" --scorer hybrid --baselines none --workers 1 \
		"${model[@]}" --strategies "$STRATS" --versus "$FIXED" --wide \
		--json "$OUT/${name}_p$pool.json" >"$OUT/${name}_p$pool.txt" 2>/dev/null
}
for g in friendsqa qmsum policyqa tatqa; do
	for pool in 0 1000; do
		run "$g" "$DATA/${g}_600.jsonl.gz" "$pool" --split validation
	done
done
run hotpotqa_dev53 "$HP" 1000

# One line per file and strategy: evidence (unit) and touched recall, tokens
# (mean, p10/p50/p90/max, share under half the budget), and the paired
# difference from the filled budget ($FIXED).
if command -v jq >/dev/null; then
	for f in "$OUT"/*_p*.json; do
		jq -r --arg f "$(basename "$f" .json)" '.results[] |
			[$f, .strategy, (.evidence_recall*1000|round/1000), (.touched_recall*1000|round/1000), (.mean_tokens|round),
			 "\(.tokens_per_question.p10)/\(.tokens_per_question.p50)/\(.tokens_per_question.p90)/\(.tokens_per_question.max)",
			 (if .tokens_per_question.under_half_budget == null then "–" else "\(.tokens_per_question.under_half_budget*100|round) %" end),
			 (if .versus == null then "–" else "\(.versus.evidence_recall_diff*1000|round/1000) ± \(.versus.evidence_recall_diff_se*1000|round/1000)" end),
			 (if .versus == null then "–" else "\(.versus.tokens_diff|round) ± \(.versus.tokens_diff_se|round)" end)] | @tsv' "$f"
	done | column -t -s $'\t' -N "file,strategy,unit,touched,tokens,p10/p50/p90/max,<½budget,Δunit vs fixed,Δtokens vs fixed"
fi
