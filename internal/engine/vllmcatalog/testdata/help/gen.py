#!/usr/bin/env python3
"""Writes the help samples ParseHelp is tested on.

vLLM builds `vllm serve` and `vllm bench serve` with argparse; this script
rebuilds the same argparse actions from a flag catalog of the reference
corpus (corpus/vllm-flags/<label>.json: option strings, action, nargs,
choices and argparse group of every flag, read from vLLM's source) and
prints argparse's own help for them, the way `vllm serve --help=all` lists
every group. Help sentences are not in the catalogs: each option's help is
its config field, and JSON config options carry vLLM's sentence for them
("Should either be a valid JSON string or JSON keys passed individually.").

    python3 gen.py "$WLC_SHARED/corpus/vllm-flags" v0.13.0
"""
import argparse
import json
import os
import sys


def build(prog, flags):
    p = argparse.ArgumentParser(prog=prog, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    groups = {}
    for f in flags:
        g = f.get("group")
        target = p
        if g:
            if g not in groups:
                groups[g] = p.add_argument_group(g)
            target = groups[g]
        kw = {}
        t = f["type"]
        helptext = f.get("field") or f["dest"]
        if t in ("json", "json_or_str"):
            helptext += ". Should either be a valid JSON string or JSON keys passed individually."
        if t == "flag":
            kw["action"] = "store_true"
        elif t == "bool":
            kw["action"] = argparse.BooleanOptionalAction
        else:
            if f.get("nargs"):
                kw["nargs"] = f["nargs"]
            if f.get("choices"):
                kw["choices"] = f["choices"]
            else:
                kw["metavar"] = f["dest"].upper()
        kw["dest"] = f["dest"] + "_" + str(len(groups)) + "_" + f["flag"]  # dests may repeat across groups
        target.add_argument(f["flag"], *f["aliases"], help=helptext, **kw)
    return p


def main():
    corpus, label = sys.argv[1], sys.argv[2]
    with open(os.path.join(corpus, label + ".json")) as fh:
        cat = json.load(fh)
    for cmd, key, prog in (("serve", "serve", "vllm serve"), ("bench", "bench_serve", "vllm bench serve")):
        p = build(prog, cat[key])
        os.environ["COLUMNS"] = "100"
        with open("%s-%s.txt" % (cmd, label), "w") as out:
            out.write(p.format_help())


main()
