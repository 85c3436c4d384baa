#!/usr/bin/env bash
# wlc-token CMD..., written by wlc's Buildkite steps: fetches the dashboards'
# ingest token from the agent's secret store (as perf-eval's steps do) into
# a 0600 file of a private directory and runs CMD with WLC_INGEST_TOKEN_FILE
# naming that file. The token is in no process's environment: the job
# script reads the file into its own (backends/runner/lib.sh) and forgets
# the path. The directory is in the checkout, which a Slurm job's nodes
# share (sbatch hands them the path), and goes when CMD ends; this shell
# waits for CMD rather than exec it for that. Without the token the job
# still runs and keeps its rows on disk: a missing token never fails a
# benchmark.
set -u
errors=$(mktemp) || errors=/dev/null
dir=''
if token=$(buildkite-agent secret get INGEST_BEARER_TOKEN 2>"$errors"); then
  if dir=$(umask 077 && { mktemp -d "$PWD/.wlc-token.XXXXXX" 2>/dev/null || mktemp -d; }) &&
    (umask 077 && printf '%s\n' "$token" >"$dir/token"); then
    :
  else
    echo "wlc: ingest: no private file for the token; results will not reach the dashboards" >&2
    [ -z "$dir" ] || rm -rf -- "$dir"
    dir=''
  fi
else
  echo "wlc: ingest: buildkite-agent secret get INGEST_BEARER_TOKEN failed ($(head -c 200 "$errors" | tr '\n' ' ')); results will not reach the dashboards" >&2
fi
token=''
[ "$errors" = /dev/null ] || rm -f "$errors"
[ -n "$dir" ] || exec "$@"
trap 'rm -rf -- "$dir"' EXIT
# A cancelled step's signal reaches CMD too (the agent signals the job's
# process group); this shell only outlives it to remove the file.
trap : INT TERM
WLC_INGEST_TOKEN_FILE=$dir/token "$@"
