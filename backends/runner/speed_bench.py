# wlc's SPEED-Bench preparation (backends/runner/speed_bench.py), run with
# python3 where vllm bench serve runs:
#   SUBSET CATEGORY DIR URL   write DIR/SUBSET.jsonl (CATEGORY may be empty)
# vLLM's SpeedBench reads that file and does not download the dataset.
# It is built the way perf-eval built it, with NeMo-Skills' prepare.py
# fetched from URL (its loader resolves the rows that point at external
# data): nvidia/SPEED-Bench's test split, the category's rows, each turn a
# user message. A file already there is reused; a new one appears whole
# (written aside, then renamed).
import os
import sys
import urllib.request
from pathlib import Path


def main(subset, category, out_dir, url):
    out = Path(out_dir) / (subset + ".jsonl")
    if out.exists() and out.stat().st_size > 0:
        print("[wlc speed_bench] reusing %s" % out, flush=True)
        return
    source = urllib.request.urlopen(url, timeout=60).read()
    ns = {"__name__": "speed_bench_prepare", "__file__": "prepare.py"}
    exec(compile(source, "prepare.py", "exec"), ns)
    data = ns["load_dataset"]("nvidia/SPEED-Bench", subset, split="test")
    if category:
        data = data.filter(lambda row: row["category"] == category)
        if len(data) == 0:
            sys.exit("[wlc speed_bench] subset %s has no rows of category %s" % (subset, category))
    data = ns["_resolve_external_data"](data, subset)
    data = data.map(
        lambda row: {"messages": [{"role": "user", "content": t} for t in row["turns"]]},
        remove_columns=["turns"],
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(".%s.%d.tmp" % (out.name, os.getpid()))
    data.to_json(str(tmp))
    os.replace(tmp, out)
    print("[wlc speed_bench] %d rows in %s" % (len(data), out), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: speed_bench.py SUBSET CATEGORY DIR URL")
    main(*sys.argv[1:])
