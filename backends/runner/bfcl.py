# wlc's BFCL driver (backends/runner/bfcl.py), run with python3 where the
# clients run. It runs one BFCL test category or group against the served
# model the way BFCL runs a model:
#   1. the served model is registered in BFCL's model table for its
#      OpenAI-compatible handler (OpenAICompletionsHandler reads
#      OPENAI_BASE_URL), in function-calling mode: BFCL runs only models in
#      its table, and an HF id is not there (an id with "_" also under the
#      name BFCL's evaluate makes of its result directory);
#   2. --maximum-step-limit replaces BFCL's MAXIMUM_STEP_LIMIT (steps per
#      multi-turn turn) where its handlers read it;
#   3. --max-test-cases N writes BFCL's test_case_ids_to_generate.json with
#      the first N cases in BFCL's id order (a group's N split evenly
#      across its leaf categories; a memory category's N are questions,
#      listed with the prerequisite conversations they depend on), then
#      generate --run-ids and evaluate --partial-eval;
#   4. `bfcl generate`, then `bfcl evaluate`, through BFCL's own command
#      line (its typer app, in this process so the registration holds): an
#      option BFCL lacks fails here, as it would by hand; a generate whose
#      every request failed (BFCL writes each error as the case's result and
#      exits 0) fails here with status 65, before a 0% score is written;
#   5. every score is written in lm_eval's results format, so the path
#      that carries lm_eval results carries BFCL's:
#      RESULTS/lm_eval/bfcl_<category>/results_<time>.json, and for a
#      group one more per leaf category. BFCL's own files stay in
#      RESULTS/bfcl/<category>/ (BFCL_PROJECT_ROOT), with
#      lm_eval_tasks.txt listing the scores written, for the ingest.
import argparse
import csv
import json
import os
import sys
import time
import traceback
from pathlib import Path
from urllib.parse import urlparse

# A group's overall score is BFCL's own aggregate, a column of its score
# CSVs; without it, the mean of the leaf scores.
GROUP_COLUMNS = {
    "all": ("data_overall.csv", "Overall Acc"),
    "all_scoring": ("data_overall.csv", "Overall Acc"),
    "non_live": ("data_non_live.csv", "Non-Live Overall Acc"),
    "live": ("data_live.csv", "Live Overall Acc"),
    "multi_turn": ("data_multi_turn.csv", "Multi Turn Overall Acc"),
    "agentic": ("data_agentic.csv", "Agentic Overall Acc"),
    "memory": ("data_agentic.csv", "Memory Summary"),
    "web_search": ("data_agentic.csv", "Web Search Summary"),
}


def log(msg):
    print("[wlc bfcl] " + msg, flush=True)


def positive(s):
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % v)
    return v


def parse(argv):
    p = argparse.ArgumentParser(prog="wlc-bfcl", allow_abbrev=False)
    p.add_argument("--model", required=True, help="the served model name")
    p.add_argument("--category", required=True, help="a BFCL test category or group")
    p.add_argument("--base-url", required=True, help="the server, http://host:port")
    p.add_argument("--results-dir", required=True)
    p.add_argument("--num-threads", type=positive, required=True)
    p.add_argument("--temperature", type=float, required=True)
    p.add_argument("--maximum-step-limit", type=positive, required=True)
    p.add_argument("--max-test-cases", type=positive)
    return p.parse_args(argv)


def quotas(n, parts):
    base, extra = divmod(n, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def write_test_case_ids(work, category, n):
    from bfcl_eval.utils import is_memory_prereq, load_dataset_entry, parse_test_category_argument, sort_key

    leaves = parse_test_category_argument([category])
    ids, total, prereqs = {}, 0, 0
    for leaf, quota in zip(leaves, quotas(n, len(leaves))):
        entries = sorted(load_dataset_entry(leaf), key=sort_key)
        # A memory category lists its prerequisite conversations first (they
        # write the memory its questions read); they are not test cases: the
        # first N questions are, with the prerequisites they depend on.
        cases = [e for e in entries if not is_memory_prereq(e["id"])][:quota]
        needed = {d for e in cases for d in e.get("depends_on", [])}
        pre = [e for e in entries if e["id"] in needed]
        if cases:
            ids[leaf] = [e["id"] for e in pre + cases]
            total += len(cases)
            prereqs += len(pre)
    if total == 0:
        sys.exit("[wlc bfcl] max_test_cases %d selects no case of %s" % (n, category))
    (work / "test_case_ids_to_generate.json").write_text(json.dumps(ids, indent=2) + "\n")
    log("%d cases of %s%s: %s" % (total, category,
        " (and the %d prerequisite conversations they need)" % prereqs if prereqs else "",
        ", ".join("%s=%d" % (k, len(v)) for k, v in ids.items())))


def register(model):
    from bfcl_eval.constants import model_config
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    # In place: BFCL's modules imported the mapping by name.
    config = model_config.MODEL_CONFIG_MAPPING[model] = model_config.ModelConfig(
        model_name=model,
        display_name="%s (FC) (vLLM)" % model,
        url="https://huggingface.co/%s" % model,
        org="",
        license="",
        model_handler=OpenAICompletionsHandler,
        input_price=None,
        output_price=None,
        is_fc_model=True,
        underscore_to_dot=True,
    )
    # BFCL names the result directory after the id with "/" as "_", and its
    # evaluate turns that name back with every "_" as "/": an id with "_"
    # of its own (org/Model_v2) comes back as org/Model/v2, which must name
    # the same model (else evaluate raises KeyError).
    back = model.replace("/", "_").replace("_", "/")
    if back != model:
        model_config.MODEL_CONFIG_MAPPING[back] = config


def bfcl(args):
    from bfcl_eval.__main__ import cli

    log("bfcl " + " ".join(args))
    try:
        cli(args=args, prog_name="bfcl", standalone_mode=False)
    except SystemExit as e:
        if e.code not in (0, None):
            sys.exit("[wlc bfcl] bfcl %s exited with %s" % (args[0], e.code))
    except Exception as e:  # click's usage errors, BFCL's ValueError, ...
        if hasattr(e, "show"):
            e.show()
        else:
            traceback.print_exc()
        sys.exit("[wlc bfcl] bfcl %s failed: %s" % (args[0], e))


# A result whose every request errored is not a score (BFCL scores each
# errored case as wrong and exits 0): status 65, as results.py's check.
INVALID = 65
ERROR_PREFIX = "Error during inference"


def check_generated(work, category):
    """Fails the step when every case generate wrote is an inference error
    (BFCL catches each request's exception and writes it as the case's
    result); logs how many errored otherwise."""
    total, errors, first = 0, 0, None
    for path in sorted((work / "result").rglob("*_result.json")):
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                total += 1
                result = json.loads(line).get("result")
                if isinstance(result, str) and result.startswith(ERROR_PREFIX):
                    errors += 1
                    first = first or result
    if total and errors == total:
        sys.stderr.write("[wlc bfcl] %s: every one of the %d requests failed, so its score would be 0%%; the first: %s (results kept in %s)\n"
                         % (category, total, first[:300], work / "result"))
        sys.exit(INVALID)
    if errors:
        log("%s: %d of %d requests failed (scored wrong, as BFCL does); the first: %s" % (category, errors, total, first[:300]))


def percentage(v):
    try:
        return float(str(v).strip().rstrip("%")) / 100.0
    except ValueError:
        return None


def group_score(score_dir, model, category):
    csv_name, column = GROUP_COLUMNS.get(category, (None, None))
    path = score_dir / csv_name if csv_name else None
    if not path or not path.exists():
        return None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row.get("Model", "")
            if model in name or model.replace("/", "_") in name:
                return percentage(row.get(column, ""))
    return None


def leaf_score(score_dir, prefix, leaf):
    for path in sorted(score_dir.rglob("%s_%s_score.json" % (prefix, leaf))):
        with open(path) as f:
            header = json.loads(f.readline())
        return float(header["accuracy"])
    return None


def lm_eval_results(model, task, accuracy, alias):
    return {
        "results": {task: {"alias": alias, "acc,none": accuracy, "acc_stderr,none": 0.0}},
        "configs": {task: {"task": task, "num_fewshot": 0}},
        "versions": {task: 1},
        "n-shot": {task: 0},
        "config": {"model": "local-completions", "model_args": "model=%s" % model},
    }


def main(argv):
    a = parse(argv)
    root = Path(a.results_dir).resolve()
    work = root / "bfcl" / a.category
    work.mkdir(parents=True, exist_ok=True)
    url = urlparse(a.base_url)
    # Before BFCL is imported: its paths and clients read these then.
    os.environ["BFCL_PROJECT_ROOT"] = str(work)
    os.environ["OPENAI_BASE_URL"] = a.base_url.rstrip("/") + "/v1"
    # The OpenAI client refuses to start without a key; vLLM needs none.
    if not os.environ.get("OPENAI_API_KEY"):
        os.environ["OPENAI_API_KEY"] = "EMPTY"
    os.environ["LOCAL_SERVER_ENDPOINT"] = url.hostname or "127.0.0.1"
    os.environ["LOCAL_SERVER_PORT"] = str(url.port or 80)

    import bfcl_eval.constants.default_prompts as prompts
    from bfcl_eval.model_handler import base_handler

    # base_handler copied the constant when it was imported.
    prompts.MAXIMUM_STEP_LIMIT = a.maximum_step_limit
    base_handler.MAXIMUM_STEP_LIMIT = a.maximum_step_limit
    log("%s: maximum_step_limit %d" % (a.category, a.maximum_step_limit))

    subset = a.max_test_cases is not None
    if subset:
        write_test_case_ids(work, a.category, a.max_test_cases)
    register(a.model)

    gen = ["generate", "--model", a.model, "--test-category", a.category,
           "--temperature", repr(a.temperature), "--num-threads", str(a.num_threads), "--skip-server-setup"]
    if subset:
        gen += ["--run-ids", "--allow-overwrite"]
    bfcl(gen)
    check_generated(work, a.category)
    ev = ["evaluate", "--model", a.model, "--test-category", a.category]
    if subset:
        ev.append("--partial-eval")
    bfcl(ev)

    from bfcl_eval.constants.category_mapping import TEST_COLLECTION_MAPPING, VERSION_PREFIX
    from bfcl_eval.utils import parse_test_category_argument

    score_dir = work / "score"
    scores = {}
    if a.category in TEST_COLLECTION_MAPPING:
        leaves = {}
        for leaf in parse_test_category_argument([a.category]):
            s = leaf_score(score_dir, VERSION_PREFIX, leaf)
            if s is not None:
                leaves[leaf] = s
        missing = [leaf for leaf in parse_test_category_argument([a.category]) if leaf not in leaves]
        if missing:
            log("no score for %s (not run or not evaluated)" % ", ".join(missing))
        overall = group_score(score_dir, a.model, a.category)
        if overall is None and leaves:
            overall = sum(leaves.values()) / len(leaves)
        if overall is not None:
            scores[a.category] = (overall, "bfcl_%s (overall)" % a.category)
        for leaf, s in leaves.items():
            scores[leaf] = (s, "bfcl_" + leaf)
    else:
        s = leaf_score(score_dir, VERSION_PREFIX, a.category)
        if s is not None:
            scores[a.category] = (s, "bfcl_" + a.category)
    if a.category not in scores:
        sys.exit("[wlc bfcl] evaluate wrote no score for %s under %s" % (a.category, score_dir))

    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
    tasks = []
    for cat, (acc, alias) in scores.items():
        task = "bfcl_" + cat
        out = root / "lm_eval" / task
        out.mkdir(parents=True, exist_ok=True)
        path = out / ("results_%s.json" % stamp)
        with open(path, "w") as f:
            json.dump(lm_eval_results(a.model, task, acc, alias), f, indent=2)
            f.write("\n")
        log("%s: accuracy %.4f -> %s" % (task, acc, path))
        tasks.append(task)
    # The list the dashboards' ingest reads (perf-eval's .bfcl_ingest manifest).
    (work / "lm_eval_tasks.txt").write_text("".join(t + "\n" for t in tasks))


if __name__ == "__main__":
    main(sys.argv[1:])
