#!/usr/bin/env bash
# Reproduces catalog figures on a Slurm cluster: a job array of N tasks,
# each running one disjoint share of every figure's runs
# (dmbench reproduce --shard I/N), then one job that merges the shards'
# results and draws the figures and checks the claims.
#
#   scripts/slurm_reproduce.sh N FIGURE...      e.g. 16 dmtree dex/fig6
#
# Environment (all optional):
#   DMBENCH   the dmbench binary, on a shared file system (bin/dmbench)
#   OUT       results folder, shared (results); shard I writes OUT/shards/I
#   SCALE     small, default or large (default)
#   JOBS      runs at once per task; one core each (2)
#   TRACE_DIR folder of the Twitter traces, for dolphin/fig9
#   SBATCH_ARGS extra sbatch arguments (partition, account, time limit)
#
# A task that is cut off resumes where it stopped when resubmitted, as
# reproduce does; the merge job runs nothing the shards have saved.
set -euo pipefail

if [[ $# -lt 2 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: $0 N FIGURE..." >&2
	exit 2
fi
n=$1
shift
DMBENCH=$(realpath "${DMBENCH:-bin/dmbench}")
OUT=$(realpath -m "${OUT:-results}")
SCALE=${SCALE:-default}
JOBS=${JOBS:-2}
trace=()
if [[ -n ${TRACE_DIR:-} ]]; then
	trace=(--trace-dir "$(realpath "$TRACE_DIR")")
fi
[[ -x $DMBENCH ]] || { echo "$0: $DMBENCH is not an executable; build it with make or set DMBENCH" >&2; exit 1; }
mkdir -p "$OUT/shards" "$OUT/logs"

# quote prints its arguments quoted for the shell, space-separated.
quote() {
	local s
	s=$(printf '%q ' "$@")
	printf '%s' "${s% }"
}
common=(--scale "$SCALE" --jobs "$JOBS" "${trace[@]}")

array=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=dmbench-shard --array="1-$n" \
	--cpus-per-task="$JOBS" --output="$OUT/logs/shard-%a.log" \
	--wrap="$(quote "$DMBENCH" reproduce "${common[@]}") --shard \$SLURM_ARRAY_TASK_ID/$n --out $(quote "$OUT")/shards/\$SLURM_ARRAY_TASK_ID $(quote "$@")")

# The shards' result files have disjoint names: copying them into one
# folder is the merge. Then reproduce finds every run saved, runs
# nothing, and draws the figures and checks the claims.
merge="for d in $(quote "$OUT")/shards/*/; do cp -R \"\$d\". $(quote "$OUT")/; done && $(quote "$DMBENCH" reproduce "${common[@]}" --out "$OUT" "$@")"
sbatch ${SBATCH_ARGS:-} --job-name=dmbench-merge --dependency="afterok:$array" \
	--cpus-per-task="$JOBS" --output="$OUT/logs/merge.log" --wrap="$merge"
echo "submitted $n shards (job $array) and the merge; results in $OUT"
