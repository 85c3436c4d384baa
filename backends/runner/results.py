# wlc's result tool (backends/runner/results.py), run with python3 where
# vllm runs:
#   check FILE PROMPTS [REASON]  fail (status 65) unless the run is true:
#                             every prompt completed, none failed, some
#                             output tokens, every metric the dashboards
#                             need; with REASON (the run's
#                             allow_failed_requests) failed prompts pass
#   median OUT FILE...        write the median of the repetitions FILE... to OUT
#   last-row JSONL OUT PROMPTS [REASON]  write the last row of
#                             sglang.bench_serving's JSONL to OUT and check
#                             it as check does
import json
import os
import sys

# The exit status of a run whose results are not true (EX_DATAERR): a
# workload failure, never retried (see wlc_exit_class in lib.sh).
INVALID = 65

# The metrics ingest.py's perf rows are made of (the dashboards'
# tput_per_gpu, output_tput_per_gpu and latencies): a result without one
# would reach the dashboards as zeros. A key is a set of names any one of
# which will do (sglang.bench_serving says total_throughput).
NEEDED = (
    ("total_token_throughput", "total_throughput"),
    ("output_throughput",),
    ("total_output_tokens",),
    ("mean_ttft_ms",),
    ("mean_tpot_ms",),
)

# Runs are only comparable when these agree (as perf-eval's aggregator).
IDENTITY = ("backend", "model_id", "tokenizer_id", "num_prompts", "max_concurrency")


def load(path):
    with open(path) as f:
        return json.load(f)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def invalid(path, why, opt_out=False):
    # opt_out: failed requests are the only thing a config may accept.
    hint = "; if this run is known to fail requests, give its config allow_failed_requests: {reason: \"...\"}" if opt_out else ""
    sys.stderr.write("[wlc results] %s: %s%s\n" % (path, why, hint))
    sys.exit(INVALID)


def check(path, prompts, allow=None):
    """Exits INVALID with one line saying why unless the run at path is true."""
    try:
        r = load(path)
    except ValueError as e:
        invalid(path, "not valid JSON (truncated?): %s" % e)
    if not isinstance(r, dict):
        invalid(path, "not a benchmark result (a JSON object)")
    missing = [names[0] for names in NEEDED if not any(is_number(r.get(n)) for n in names)]
    if missing:
        invalid(path, "no %s (the dashboards need them)" % ", ".join(missing))
    completed, failed = r.get("completed"), r.get("failed", 0)
    if not is_number(completed) or completed < 1:
        invalid(path, "no request completed (%s of %d)" % (completed, prompts))
    if r["total_output_tokens"] <= 0:
        invalid(path, "%s requests completed with 0 output tokens (empty completions)" % completed)
    if completed != prompts or failed:
        why = "%s of %d prompts completed, %s failed" % (completed, prompts, failed)
        if allow is None:
            invalid(path, why, opt_out=True)
        sys.stderr.write("[wlc results] %s: %s, accepted: allow_failed_requests (%s)\n" % (path, why, allow))


def median(out, paths):
    runs = [load(p) for p in paths]
    for key in IDENTITY:
        seen = sorted({json.dumps(r.get(key)) for r in runs})
        if len(seen) > 1:
            sys.exit("refusing to aggregate %s: %s differs between runs (%s)" % (out, key, ", ".join(seen)))
    agg = {}
    for key, v in runs[0].items():
        if is_number(v):
            xs = [r.get(key) for r in runs]
            if all(is_number(x) for x in xs):
                agg[key] = sorted(xs)[len(xs) // 2]
        elif v is None or isinstance(v, (str, bool)):
            agg[key] = v
        # Per-request lists belong to one run; the median file has none.
    agg["wlc_aggregate"] = {"method": "median", "runs": [os.path.basename(p) for p in paths]}
    with open(out, "w") as f:
        json.dump(agg, f, indent=2, sort_keys=True)
        f.write("\n")


def last_row(jsonl, out, prompts, allow=None):
    with open(jsonl) as f:
        rows = [line for line in f.read().splitlines() if line.strip()]
    if not rows:
        invalid(jsonl, "sglang.bench_serving wrote no result row")
    row = json.loads(rows[-1])
    with open(out, "w") as f:
        json.dump(row, f, indent=2, sort_keys=True)
        f.write("\n")
    check(out, prompts, allow)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "check":
        check(args[0], int(args[1]), *args[2:3])
    elif cmd == "median":
        median(args[0], args[1:])
    elif cmd == "last-row":
        last_row(args[0], args[1], int(args[2]), *args[3:4])
    else:
        sys.exit("unknown command " + cmd)
