#!/usr/bin/env bash
# wlc-token CMD..., written by wlc's Buildkite steps: fetches the dashboards'
# ingest token from the agent's secret store (as perf-eval's steps do),
# exports it as INGEST_BEARER_TOKEN and runs CMD. Without it the job still
# runs and keeps its rows on disk: a missing token never fails a benchmark.
set -u
errors=$(mktemp) || errors=/dev/null
if token=$(buildkite-agent secret get INGEST_BEARER_TOKEN 2>"$errors"); then
  export INGEST_BEARER_TOKEN=$token
else
  echo "wlc: ingest: buildkite-agent secret get INGEST_BEARER_TOKEN failed ($(head -c 200 "$errors" | tr '\n' ' ')); results will not reach the dashboards" >&2
fi
[ "$errors" = /dev/null ] || rm -f "$errors"
exec "$@"
