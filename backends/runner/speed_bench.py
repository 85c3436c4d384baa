# wlc's SPEED-Bench preparation (backends/runner/speed_bench.py), run with
# python3 where vllm bench serve runs:
#   SUBSET CATEGORY DIR URL [SHA256]   write DIR/SUBSET.jsonl (CATEGORY may be empty)
# vLLM's SpeedBench reads that file and does not download the dataset.
# It is built with NeMo-Skills' prepare.py fetched from URL (its loader
# resolves the rows that point at external data), the way its own
# prepare_data builds a config: nvidia/SPEED-Bench's test split, every
# row resolved in order, each turn a user message; then the category's
# rows are kept. Resolving only the category's rows would give other
# text: the HLE rows of the throughput configs draw their demonstrations
# from one random generator, row after row. With SHA256 the fetched
# prepare.py must have that content (the URL may be a moving branch). A
# file already there is reused; a new one appears whole (written aside,
# then renamed).
import hashlib
import os
import sys
import urllib.request
from pathlib import Path


def main(subset, category, out_dir, url, sha256=""):
    out = Path(out_dir) / (subset + ".jsonl")
    if out.exists() and out.stat().st_size > 0:
        print("[wlc speed_bench] reusing %s" % out, flush=True)
        return
    source = urllib.request.urlopen(url, timeout=60).read()
    got = hashlib.sha256(source).hexdigest()
    if sha256 and got != sha256:
        sys.exit("[wlc speed_bench] %s has sha256 %s, not the pinned %s: it changed; review it and set WLC_SPEED_BENCH_PREPARE_SHA256 (or point WLC_SPEED_BENCH_PREPARE_URL at the pinned commit)" % (url, got, sha256))
    print("[wlc speed_bench] prepare.py from %s (sha256 %s)" % (url, got), flush=True)
    ns = {"__name__": "speed_bench_prepare", "__file__": "prepare.py"}
    exec(compile(source, "prepare.py", "exec"), ns)
    data = ns["load_dataset"]("nvidia/SPEED-Bench", subset, split="test")
    data = ns["_resolve_external_data"](data, subset)
    if category:
        data = data.filter(lambda row: row["category"] == category)
        if len(data) == 0:
            sys.exit("[wlc speed_bench] subset %s has no rows of category %s" % (subset, category))
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
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: speed_bench.py SUBSET CATEGORY DIR URL [SHA256]")
    main(*sys.argv[1:])
