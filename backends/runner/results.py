# wlc's result tool (backends/runner/results.py), run with python3 where
# vllm runs:
#   check FILE PROMPTS        fail unless every prompt completed and none failed
#   median OUT FILE...        write the median of the repetitions FILE... to OUT
#   last-row JSONL OUT PROMPTS  write the last row of sglang.bench_serving's
#                             JSONL to OUT and check it as check does
import json
import os
import sys

# Runs are only comparable when these agree (as perf-eval's aggregator).
IDENTITY = ("backend", "model_id", "tokenizer_id", "num_prompts", "max_concurrency")


def load(path):
    with open(path) as f:
        return json.load(f)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(path, prompts):
    try:
        r = load(path)
    except ValueError as e:
        sys.exit("%s is not valid JSON (truncated?): %s" % (path, e))
    completed, failed = r.get("completed"), r.get("failed", 0)
    if completed != prompts or failed:
        sys.exit("%s: %s of %d prompts completed, %s failed" % (path, completed, prompts, failed))


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


def last_row(jsonl, out, prompts):
    with open(jsonl) as f:
        rows = [line for line in f.read().splitlines() if line.strip()]
    if not rows:
        sys.exit("%s: sglang.bench_serving wrote no result row" % jsonl)
    row = json.loads(rows[-1])
    with open(out, "w") as f:
        json.dump(row, f, indent=2, sort_keys=True)
        f.write("\n")
    check(out, prompts)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "check":
        check(args[0], int(args[1]))
    elif cmd == "median":
        median(args[0], args[1:])
    elif cmd == "last-row":
        last_row(args[0], args[1], int(args[2]))
    else:
        sys.exit("unknown command " + cmd)
