#!/usr/bin/env bash
# wlc-submit SBATCH_SCRIPT RESULTS_DIR, written by wlc's Buildkite Slurm step
# and run on the login node from the checkout root: submit the workload's
# sbatch script, copy the job's log into this step's output while it runs,
# cancel the job when the step is cancelled, and exit with the Slurm job's
# exit status (sbatch --wait).
set -uo pipefail
script=$1
results=$2
mkdir -p "$results" # the job log goes here (#SBATCH --output)
idfile=$(mktemp)
trap 'rm -f "$idfile"' EXIT
# sbatch hands the submitting environment to the job; the agent's own
# token (and the step's 30 KB command) have no business on compute nodes.
env -u BUILDKITE_AGENT_ACCESS_TOKEN -u BUILDKITE_COMMAND \
  sbatch --wait --parsable "$script" >"$idfile" &
sbatch_pid=$!
job=''
while [ -z "$job" ] && kill -0 "$sbatch_pid" 2>/dev/null; do
  sleep 1
  job=$(cut -d';' -f1 "$idfile")
done
[ -n "$job" ] || job=$(cut -d';' -f1 "$idfile")
if [ -z "$job" ]; then
  wait "$sbatch_pid"
  rc=$?
  echo "wlc: sbatch $script failed (exit $rc)" >&2
  exit $((rc == 0 ? 1 : rc))
fi
echo "wlc: Slurm job $job; its log: $results/slurm-$job.out and .err"
trap 'echo "wlc: step cancelled; cancelling Slurm job $job" >&2; scancel "$job"' INT TERM
tail -n +1 -F "$results/slurm-$job.out" "$results/slurm-$job.err" 2>/dev/null &
tail_pid=$!
while :; do
  wait "$sbatch_pid"
  rc=$?
  # A trapped signal ends wait early (status > 128) while sbatch still
  # waits for the cancelled job: wait for sbatch again.
  kill -0 "$sbatch_pid" 2>/dev/null || break
done
sleep 2 # let tail copy the last lines
kill "$tail_pid" 2>/dev/null
echo "wlc: Slurm job $job exited $rc"
exit "$rc"
