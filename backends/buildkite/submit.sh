#!/usr/bin/env bash
# wlc-submit SBATCH_SCRIPT RESULTS_DIR, written by wlc's Buildkite Slurm step
# and run on the login node from the checkout root: submit the workload's
# sbatch script, copy the job's log into this step's output while it runs,
# cancel the job when the step is cancelled, and exit with the Slurm job's
# exit status.
#
# It polls the job every WLC_SLURM_POLL_S seconds (default 2) instead of
# `sbatch --wait`, which in Slurm 22.05 looks only 2, 10, 42 and 74 s after
# submission and then every 32 s: a finished job held the step (and its
# queue's concurrency slot) for up to half a minute.
set -uo pipefail
script=$1
results=$2
poll=${WLC_SLURM_POLL_S:-2}
mkdir -p "$results" # the job log goes here (#SBATCH --output)

# sbatch hands the submitting environment to the job; the agent's own
# token (and the step's command) have no business on compute nodes.
if ! out=$(env -u BUILDKITE_AGENT_ACCESS_TOKEN -u BUILDKITE_COMMAND sbatch --parsable "$script"); then
  echo "wlc: sbatch $script failed" >&2
  exit 1
fi
job=${out%%;*}
if [ -z "$job" ]; then
  echo "wlc: sbatch $script printed no job id" >&2
  exit 1
fi
echo "wlc: Slurm job $job; its log: $results/slurm-$job.out and .err"
tail -n +1 -F "$results/slurm-$job.out" "$results/slurm-$job.err" 2>/dev/null &
tail_pid=$!
trap 'kill "$tail_pid" 2>/dev/null' EXIT
trap 'echo "wlc: step cancelled; cancelling Slurm job $job" >&2; scancel "$job"' INT TERM

# field NAME INFO: NAME's value in a one-line `scontrol show job -o`.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

state='' code=''
while :; do
  info=$(scontrol show job -o "$job" 2>/dev/null)
  state=$(field JobState "$info")
  case $state in
  PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | SIGNALING | STAGE_OUT)
    sleep "$poll" &
    wait $! # a trapped signal interrupts the sleep at once
    continue
    ;;
  '')
    # The controller forgot the job (MinJobAge passed): ask accounting.
    if command -v sacct >/dev/null; then
      read -r state code < <(sacct -j "$job" -X -n -P -o State,ExitCode 2>/dev/null | tr '|' ' ' | head -n 1)
      state=${state%% *}
    fi
    ;;
  *)
    code=$(field ExitCode "$info")
    ;;
  esac
  break
done

sleep 1 # let tail copy the last lines
if [ -z "$state" ] || [ -z "$code" ]; then
  echo "wlc: cannot tell how Slurm job $job ended (no scontrol record, no accounting)" >&2
  exit 1
fi
# ExitCode is <status>:<signal>.
status=${code%%:*} signal=${code##*:} rc=0
if [ "$status" != 0 ]; then
  rc=$status
elif [ "$signal" != 0 ]; then
  rc=$((128 + signal))
elif [ "$state" != COMPLETED ]; then
  rc=1
fi
echo "wlc: Slurm job $job ended $state"
echo "wlc: Slurm job $job exited $rc"
exit "$rc"
