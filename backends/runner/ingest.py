# wlc's ingest tool (backends/runner/ingest.py): builds the rows the perf and
# eval dashboards ingest, the way perf-eval's lib/ingest_perf.py and
# lib/ingest.py built them, and checks each against the row shapes wlc
# derived from schema/ingest.cue (internal/results/ingest). It prints one JSON body
# per line on stdout and one line per problem on stderr (exit status 1 if
# there was any); the job script keeps and POSTs the bodies.
#
#   perf SHAPES ROW RESULT          the perf row of a `vllm bench serve` result;
#                                   ROW holds the row's fields known at export
#   eval SHAPES META DIR [samples]  one row per lm_eval results_*.json under DIR,
#                                   then (with "samples") the samples_*.jsonl
#                                   lines in batches under 4 MiB
#   bfcl SHAPES META ROOT           the eval rows of a BFCL category: one row per
#                                   score the BFCL driver listed in
#                                   ROOT/bfcl/<category>/lm_eval_tasks.txt
#                                   (each under ROOT/lm_eval/<task>), no samples
#   check SHAPES DEFINITION         check each JSON row on stdin (one a line) against
#                                   DEFINITION: prints "ok" or why not, per row
#
# NIGHTLY=1 tags rows nightly; WLC_JOB_HASH (the job's content hash) is
# every row's job_hash; BUILDKITE_* variables tag eval rows;
# WLC_SWEEP_DIR (a backend sweep's folder) is part of their source_file.
import datetime
import json
import math
import os
import re
import sys

# The eval store refuses records over 10 MiB; batches stay well under it.
SAMPLES_BATCH_BYTES = 4 * 1024 * 1024
BUILDKITE_VARS = (
    "BUILDKITE_BUILD_ID",
    "BUILDKITE_BUILD_NUMBER",
    "BUILDKITE_BUILD_URL",
    "BUILDKITE_BRANCH",
    "BUILDKITE_COMMIT",
    "BUILDKITE_PIPELINE_SLUG",
)
PROBLEMS = []


def problem(msg):
    PROBLEMS.append(msg)
    print(msg, file=sys.stderr)


def dumps(v):
    return json.dumps(v, allow_nan=False)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a, b):
    # True == 1 in Python; a shape's true must not accept 1.
    return (type(a) is type(b) or (is_number(a) and is_number(b))) and a == b


def check(spec, v, path):
    """The first way v breaks spec, or None. spec is internal/results/ingest.Spec."""
    kind = spec.get("kind")
    if kind == "string" and not isinstance(v, str):
        return "%s: want a string, got %s" % (path, dumps(v))
    if kind == "int" and not (isinstance(v, int) and not isinstance(v, bool)):
        return "%s: want an integer, got %s" % (path, dumps(v))
    if kind == "number" and not (is_number(v) and math.isfinite(v)):
        return "%s: want a number, got %s" % (path, dumps(v))
    if kind == "bool" and not isinstance(v, bool):
        return "%s: want true or false, got %s" % (path, dumps(v))
    if kind == "struct" and not isinstance(v, dict):
        return "%s: want an object, got %s" % (path, dumps(v))
    if kind == "list" and not isinstance(v, list):
        return "%s: want a list, got %s" % (path, dumps(v))
    if "enum" in spec and not any(same(v, e) for e in spec["enum"]):
        return "%s: want one of %s, got %s" % (path, ", ".join(dumps(e) for e in spec["enum"]), dumps(v))
    for e in spec.get("not", []):
        if same(v, e):
            return "%s: must not be %s" % (path, dumps(e))
    if "regex" in spec and not re.search(spec["regex"], v):
        return "%s: %s does not match %s" % (path, dumps(v), spec["regex"])
    for key, ok in (("min", lambda b: v >= b), ("xmin", lambda b: v > b), ("max", lambda b: v <= b), ("xmax", lambda b: v < b)):
        if key in spec and not ok(spec[key]):
            return "%s: %s is out of bounds (%s %s)" % (path, dumps(v), key, spec[key])
    if kind == "struct":
        fields = spec.get("fields", {})
        for name, f in sorted(fields.items()):
            if f.get("required") and name not in v:
                return "%s.%s: missing" % (path, name)
        for name, x in v.items():
            specs = [fields[name]] if name in fields else []
            specs += [p["value"] for p in spec.get("patterns", []) if re.search(p["regex"], name)]
            if not specs and not spec.get("open"):
                return "%s.%s: field not allowed" % (path, name)
            for s in specs:
                err = check(s, x, path + "." + name)
                if err:
                    return err
    if kind == "list":
        if len(v) < spec.get("min_items", 0):
            return "%s: want at least %d items, got %d" % (path, spec["min_items"], len(v))
        for i, x in enumerate(v):
            err = check(spec["elem"], x, "%s[%d]" % (path, i))
            if err:
                return err
    return None


def emit(shapes, definition, row, what):
    err = check(shapes[definition], row, definition)
    if err:
        problem("%s: row not sent, it does not match %s: %s" % (what, definition, err))
        return
    print(dumps(row))


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        problem("%s is not valid JSON (truncated?): %s" % (path, e))
    except OSError as e:
        problem("cannot read %s: %s" % (path, e.strerror or e))
    return None


def perf(shapes, row, result):
    raw = load_json(result)
    if raw is None:
        return
    if not isinstance(raw, dict):
        problem("%s is not a vllm bench result (not a JSON object)" % result)
        return
    gpus = max(int(row["gpu_count"]), 1)
    try:
        # sglang.bench_serving's row says total_throughput and reports its
        # input throughput (perf-eval's SGLang branch read both).
        total = float(raw.get("total_token_throughput", raw.get("total_throughput", 0)) or 0)
        output = float(raw.get("output_throughput", 0) or 0)
        inp = float(raw.get("input_throughput", total - output) or 0)
        out = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")}
        out.update(row)
        out["conc"] = int(raw.get("max_concurrency") or row["conc"])
        out["model"] = raw.get("model_id") or row["model"]
        out["tput_per_gpu"] = total / gpus
        out["output_tput_per_gpu"] = output / gpus
        out["input_tput_per_gpu"] = inp / gpus
    except (TypeError, ValueError) as e:
        problem("%s: unreadable throughput or concurrency: %s" % (result, e))
        return
    if os.environ.get("NIGHTLY") == "1":
        out["nightly"] = True
    if os.environ.get("WLC_JOB_HASH"):
        out["job_hash"] = os.environ["WLC_JOB_HASH"]
    # Latencies in milliseconds become seconds; interactivity is 1000/tpot_ms.
    for key, value in raw.items():
        if not key.endswith("_ms"):
            continue
        try:
            v = float(value)
        except (TypeError, ValueError):
            continue
        out[key[: -len("_ms")]] = v / 1000.0
        if "tpot" in key:
            out[key[: -len("_ms")].replace("tpot", "intvty")] = 1000.0 / v if v else 0.0
    emit(shapes, "#PerfRow", out, result)


def eval_meta(meta):
    md = {"workload": meta["workload"], "task": meta["task"]}
    for name in BUILDKITE_VARS:
        if os.environ.get(name):
            md[name.lower()] = os.environ[name]
    for field in ("image", "vllm_commit"):
        if (meta.get(field) or "").strip():
            md[field] = meta[field].strip()
    if os.environ.get("NIGHTLY") == "1":
        md["nightly"] = True
    if os.environ.get("WLC_JOB_HASH"):
        md["job_hash"] = os.environ["WLC_JOB_HASH"]
    return md


def found(root, prefix, suffix):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if n.startswith(prefix) and n.endswith(suffix)]
    return sorted(out)


def evals(shapes, meta, root, samples):
    if not os.path.isdir(root):
        problem("%s: no lm_eval results directory" % root)
        return
    md = eval_meta(meta)

    def source(path):
        return source_dir(meta) + "/" + os.path.relpath(path, root).replace(os.sep, "/")

    results = found(root, "results_", ".json")
    if not results:
        problem("%s: lm_eval wrote no results_*.json" % root)
    for path in results:
        data = load_json(path)
        if data is not None:
            emit(shapes, "#EvalResultsRow", dict({"kind": "results", "source_file": source(path)}, **md, data=data), path)
    if samples:
        for path in found(root, "samples_", ".jsonl"):
            sample_batches(shapes, md, path, source(path))


def bfcl(shapes, meta, root):
    category = meta["task"]
    manifest = os.path.join(root, "bfcl", category, "lm_eval_tasks.txt")
    try:
        with open(manifest) as f:
            tasks = [t.strip() for t in f if t.strip()]
    except OSError as e:
        problem("%s: BFCL wrote no score list for %s: %s" % (manifest, category, e.strerror or e))
        return
    for task in tasks:
        m = dict(meta, task=task, dir="lm_eval/" + task)
        evals(shapes, m, os.path.join(root, "lm_eval", task), False)


def sample_batches(shapes, md, path, src):
    head = dict({"kind": "samples", "source_file": src}, **md)
    overhead = len(json.dumps(dict(head, samples=[])))
    batch, size = [], 0
    try:
        f = open(path)
    except OSError as e:
        problem("cannot read %s: %s" % (path, e.strerror or e))
        return
    with f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                sample = json.loads(line)
            except ValueError as e:
                problem("%s:%d: sample skipped, not valid JSON: %s" % (path, n, e))
                continue
            b = len(json.dumps(sample))
            if batch and overhead + size + b + 1 > SAMPLES_BATCH_BYTES:
                emit(shapes, "#EvalSamplesRow", dict(head, samples=batch), path)
                batch, size = [], 0
            batch.append(sample)
            size += b + 1
    if batch:
        emit(shapes, "#EvalSamplesRow", dict(head, samples=batch), path)


def source_dir(meta):
    # The results path, a backend sweep's folder (the run writes under
    # <results>/<backend folder>/), then the step's directory.
    parts = [meta["results_path"], os.environ.get("WLC_SWEEP_DIR", ""), meta.get("dir", "")]
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


def main(argv):
    cmd, args = argv[0], argv[1:]
    shapes = json.loads(args[0])
    if cmd == "perf":
        perf(shapes, json.loads(args[1]), args[2])
    elif cmd == "eval":
        evals(shapes, json.loads(args[1]), args[2], args[3:] == ["samples"])
    elif cmd == "bfcl":
        bfcl(shapes, json.loads(args[1]), args[2])
    elif cmd == "check":
        for line in sys.stdin:
            err = check(shapes[args[1]], json.loads(line), args[1])
            print(err or "ok")
            if err:
                PROBLEMS.append(err)
    else:
        sys.exit("unknown command " + cmd)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
