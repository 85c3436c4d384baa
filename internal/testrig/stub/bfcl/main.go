// Command bfcl is a stand-in for BFCL's command line (bfcl_eval/__main__.py,
// a typer app) in tests. It is what the Python shim's bfcl_eval.__main__.cli
// runs (internal/testrig/stub/python), and `bfcl` itself.
//
// The command line is BFCL's: the commands models, test-categories,
// generate, results, evaluate, scores and version, each with exactly its
// options (click spells them out in full; -o is --allow-overwrite, -h
// --help), values checked by type. Anything else fails the way click
// does: "No such option", exit 2.
//
// The model table is BFCL's too: a model must be in it, or generate and
// evaluate fail as BFCL's do (ValueError "Unknown model_name"). It holds a
// few of BFCL's own entries plus what the caller registered: the shim
// passes bfcl_eval.constants.model_config.MODEL_CONFIG_MAPPING as JSON in
// WLC_STUB_BFCL_MODELS, and the step limit its handlers would read
// (bfcl_eval.model_handler.base_handler.MAXIMUM_STEP_LIMIT) in
// WLC_STUB_BFCL_STEP_LIMIT, both recorded.
//
// The dataset is BFCL's in shape (see dataset): a memory category's
// questions depend on its prerequisite conversations, listed first.
// generate runs what BFCL would: with --run-ids, the listed entries of
// each listed category; prerequisites whose category's questions are not
// run are dropped (clean_up_memory_prereq_entries), prerequisites run
// first (into <category>_prereq's result file), and a question whose
// prerequisite neither ran now nor before fails as its missing memory
// makes it fail. evaluate finds results as BFCL's runner does: by the
// result directory's name (the model id, "/" as "_") turned back into a
// model name ("_" as "/"), so a registered id with "_" of its own fails
// with BFCL's KeyError.
//
// generate (OpenAICompletionsHandler models only: any other handler would
// call its vendor's API) needs OPENAI_BASE_URL and OPENAI_API_KEY, sends
// one chat completion with tools per test case and writes one result line
// per case under $BFCL_PROJECT_ROOT/result/ (a failed request's line is
// "Error during inference: <the client's error>", as BFCL writes it, and
// generate still exits 0; evaluate scores it wrong); with --run-ids it runs the
// ids of $BFCL_PROJECT_ROOT/test_case_ids_to_generate.json instead of
// --test-category. evaluate scores them under $BFCL_PROJECT_ROOT/score/:
// BFCL_v4_<leaf>_score.json (a header line {accuracy, correct_count,
// total_count}) and the data_*.csv summaries with BFCL's group columns; a
// leaf with fewer results than cases fails unless --partial-eval. Case i
// of a leaf is correct when i is even.
//
// WLC_STUB_BFCL_EXPORT=1 prints the category table and dataset as JSON
// (the shim's bfcl_eval.utils and category_mapping read it).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// Categories as bfcl_eval/constants/category_mapping.py defines them.
var (
	nonLive   = []string{"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance"}
	live      = []string{"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"}
	multiTurn = []string{"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"}
	webSearch = []string{"web_search_base", "web_search_no_snippet"}
	memory    = []string{"memory_kv", "memory_vector", "memory_rec_sum"}
)

func cat(ls ...[]string) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

var (
	allScoring  = cat(nonLive, live, multiTurn, memory, webSearch)
	allLeaves   = cat(allScoring, []string{"format_sensitivity"})
	collections = map[string][]string{
		"all": allLeaves, "all_scoring": allScoring, "multi_turn": multiTurn,
		"single_turn": cat(nonLive, live), "live": live, "non_live": nonLive,
		"non_python": {"simple_java", "simple_javascript"},
		"python": {"simple_python", "irrelevance", "parallel", "multiple", "parallel_multiple",
			"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"},
		"memory": memory, "web_search": webSearch, "agentic": cat(memory, webSearch),
	}
	// summaries are the data_*.csv group columns the stub writes.
	summaries = []struct{ file, column, group string }{
		{"data_non_live.csv", "Non-Live Overall Acc", "non_live"},
		{"data_live.csv", "Live Overall Acc", "live"},
		{"data_multi_turn.csv", "Multi Turn Overall Acc", "multi_turn"},
		{"data_agentic.csv", "Agentic Overall Acc", "agentic"},
		{"data_agentic.csv", "Memory Summary", "memory"},
		{"data_agentic.csv", "Web Search Summary", "web_search"},
		{"data_overall.csv", "Overall Acc", "all_scoring"},
	}
)

// casesPerLeaf is the stub dataset: ids <leaf>_0 .. <leaf>_N-1, and
// for a memory leaf <leaf>_<i>-<scenario>-<j> (see dataset).
const casesPerLeaf = 5

// memoryScenarios are the stub's memory scenarios (BFCL has five), each
// with prereqsPerScenario prerequisite conversations.
var memoryScenarios = []string{"customer", "student"}

const prereqsPerScenario = 2

// entry is a dataset entry as load_dataset_entry returns it.
type entry struct {
	ID        string   `json:"id"`
	DependsOn []string `json:"depends_on,omitempty"`
	Scenario  string   `json:"scenario,omitempty"`
}

func isMemory(leaf string) bool { return strings.Contains(leaf, "memory") }

// dataset is BFCL's load_dataset_entry(leaf). A memory leaf's entries
// are linked as BFCL's process_memory_test_case links them: first the
// prerequisite conversations (<leaf>_prereq_<k>-<scenario>-<j>, each
// depending on its scenario's earlier ones), which write the memory its
// questions (<leaf>_<i>-<scenario>-<j>) read, each depending on every
// prerequisite of its scenario.
func dataset(leaf string) []entry {
	var out []entry
	if !isMemory(leaf) {
		for i := 0; i < casesPerLeaf; i++ {
			out = append(out, entry{ID: fmt.Sprintf("%s_%d", leaf, i)})
		}
		return out
	}
	prereqs := map[string][]string{}
	k := 0
	for _, sc := range memoryScenarios {
		for j := 0; j < prereqsPerScenario; j++ {
			id := fmt.Sprintf("%s_prereq_%d-%s-%d", leaf, k, sc, j)
			out = append(out, entry{ID: id, DependsOn: append([]string{}, prereqs[sc]...), Scenario: sc})
			prereqs[sc] = append(prereqs[sc], id)
			k++
		}
	}
	per := (casesPerLeaf + len(memoryScenarios) - 1) / len(memoryScenarios)
	for i := 0; i < casesPerLeaf; i++ {
		sc := memoryScenarios[i/per]
		out = append(out, entry{ID: fmt.Sprintf("%s_%d-%s-%d", leaf, i, sc, i%per), DependsOn: prereqs[sc], Scenario: sc})
	}
	return out
}

// categoryOf is extract_test_category_from_id: the id without its index
// (a memory prerequisite's category ends in _prereq).
func categoryOf(id string) string {
	id, _, _ = strings.Cut(id, ":")
	return id[:strings.LastIndex(id, "_")]
}

// indexOf is an id's universal index (sort_key's).
func indexOf(id string) int {
	s := id[strings.LastIndex(id, "_")+1:]
	s, _, _ = strings.Cut(s, "-")
	n, _ := strconv.Atoi(s)
	return n
}

// builtin are a few of BFCL's own model table entries.
var builtin = map[string]model{
	"gorilla-openfunctions-v2": {Handler: "GorillaHandler", FC: true, Display: "Gorilla-OpenFunctions-v2 (FC)"},
	"gpt-4o-2024-11-20-FC":     {Handler: "OpenAIResponsesHandler", FC: true, Display: "GPT-4o-2024-11-20 (FC)"},
	"Qwen/Qwen3-8B-FC":         {Handler: "QwenFCHandler", FC: true, Display: "Qwen3-8B (FC)"},
}

type model struct {
	Handler string `json:"handler"`
	FC      bool   `json:"is_fc_model"`
	Display string `json:"display_name"`
}

// option is one click option: its names, whether it is a flag, its type.
type option struct {
	names    []string
	flag     bool
	kind     string // str, int, float
	multiple bool
}

var commands = map[string][]option{
	"version": nil, "test-categories": nil, "models": nil,
	"generate": {
		{names: []string{"--model"}, kind: "str", multiple: true},
		{names: []string{"--test-category"}, kind: "str", multiple: true},
		{names: []string{"--temperature"}, kind: "float"},
		{names: []string{"--include-input-log"}, flag: true},
		{names: []string{"--exclude-state-log"}, flag: true},
		{names: []string{"--num-gpus"}, kind: "int"},
		{names: []string{"--num-threads"}, kind: "int"},
		{names: []string{"--gpu-memory-utilization"}, kind: "float"},
		{names: []string{"--backend"}, kind: "str"},
		{names: []string{"--skip-server-setup"}, flag: true},
		{names: []string{"--local-model-path"}, kind: "str"},
		{names: []string{"--result-dir"}, kind: "str"},
		{names: []string{"--allow-overwrite", "-o"}, flag: true},
		{names: []string{"--run-ids"}, flag: true},
		{names: []string{"--enable-lora"}, flag: true},
		{names: []string{"--max-lora-rank"}, kind: "int"},
		{names: []string{"--lora-modules"}, kind: "str", multiple: true},
	},
	"results": {{names: []string{"--result-dir"}, kind: "str"}},
	"evaluate": {
		{names: []string{"--model"}, kind: "str", multiple: true},
		{names: []string{"--test-category"}, kind: "str", multiple: true},
		{names: []string{"--result-dir"}, kind: "str"},
		{names: []string{"--score-dir"}, kind: "str"},
		{names: []string{"--partial-eval"}, flag: true},
	},
	"scores": {{names: []string{"--score-dir"}, kind: "str"}},
}

func main() {
	if os.Getenv("WLC_STUB_BFCL_EXPORT") == "1" {
		export()
		return
	}
	args := os.Args[1:]
	if len(args) == 0 {
		clickUsage("", "Missing command.")
	}
	spec, ok := commands[args[0]]
	if !ok {
		clickUsage("", fmt.Sprintf("No such command '%s'.", args[0]))
	}
	opts := parse(args[0], spec, args[1:])
	flags := map[string]string{"step_limit": os.Getenv("WLC_STUB_BFCL_STEP_LIMIT")}
	switch args[0] {
	case "generate":
		generate(opts, flags)
	case "evaluate":
		stub.Write("bfcl", "evaluate", flags)
		evaluate(opts)
	default:
		stub.Write("bfcl", args[0], flags)
		fmt.Printf("stub bfcl: %s\n", args[0])
	}
}

func clickUsage(cmd, msg string) {
	fmt.Fprintf(os.Stderr, "Usage: bfcl %s[OPTIONS]\nTry 'bfcl %s-h' for help.\n\nError: %s\n", cmd, cmd, msg)
	os.Exit(2)
}

// parse reads a command's options the way click does: exact names,
// --name value or --name=value, flags without a value, no positionals.
func parse(cmd string, spec []option, args []string) map[string][]string {
	out := map[string][]string{}
	byName := map[string]option{"--help": {names: []string{"--help"}, flag: true}, "-h": {names: []string{"--help"}, flag: true}}
	for _, o := range spec {
		for _, n := range o.names {
			byName[n] = o
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			clickUsage(cmd+" ", fmt.Sprintf("Got unexpected extra argument (%s)", a))
		}
		name, val, hasVal := strings.Cut(a, "=")
		o, ok := byName[name]
		if !ok {
			clickUsage(cmd+" ", fmt.Sprintf("No such option: %s", name))
		}
		long := o.names[0]
		if o.flag {
			if hasVal {
				clickUsage(cmd+" ", fmt.Sprintf("Option '%s' does not take a value.", long))
			}
			out[long] = nil
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				clickUsage(cmd+" ", fmt.Sprintf("Option '%s' requires an argument.", name))
			}
			i++
			val = args[i]
		}
		switch o.kind {
		case "int":
			if _, err := strconv.Atoi(val); err != nil {
				clickUsage(cmd+" ", fmt.Sprintf("Invalid value for '%s': '%s' is not a valid integer.", long, val))
			}
		case "float":
			if _, err := strconv.ParseFloat(val, 64); err != nil {
				clickUsage(cmd+" ", fmt.Sprintf("Invalid value for '%s': '%s' is not a valid float.", long, val))
			}
		}
		if o.multiple {
			out[long] = append(out[long], val)
		} else {
			out[long] = []string{val}
		}
	}
	if _, ok := out["--help"]; ok {
		fmt.Printf("Usage: bfcl %s [OPTIONS]\n", cmd)
		os.Exit(0)
	}
	return out
}

// multi is handle_multiple_input: values joined, split on commas.
func multi(vals []string) []string {
	var out []string
	for _, v := range strings.Split(strings.Join(vals, ","), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func registry() map[string]model {
	m := map[string]model{}
	for k, v := range builtin {
		m[k] = v
	}
	if s := os.Getenv("WLC_STUB_BFCL_MODELS"); s != "" {
		var reg map[string]model
		if err := json.Unmarshal([]byte(s), &reg); err != nil {
			fail("WLC_STUB_BFCL_MODELS: " + err.Error())
		}
		for k, v := range reg {
			m[k] = v
		}
	}
	return m
}

// leaves is parse_test_category_argument: groups expanded, sorted.
func leaves(cats []string) []string {
	set := map[string]bool{}
	for _, c := range cats {
		if ls, ok := collections[c]; ok {
			for _, l := range ls {
				set[l] = true
			}
		} else if contains(allLeaves, c) {
			set[c] = true
		} else {
			fail(fmt.Sprintf("Exception: Invalid test category name provided: %s", c))
		}
	}
	var out []string
	for l := range set {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func root() string {
	r := os.Getenv("BFCL_PROJECT_ROOT")
	if r == "" {
		fail("BFCL_PROJECT_ROOT is not set (the stub writes nothing into an installed package)")
	}
	return r
}

func dirName(m string) string { return strings.ReplaceAll(m, "/", "_") }

func resultFile(r, m, leaf string) string {
	return filepath.Join(r, "result", dirName(m), "BFCL_v4_"+leaf+"_result.json")
}

func generate(opts map[string][]string, flags map[string]string) {
	models := multi(opts["--model"])
	if len(models) == 0 {
		models = []string{"gorilla-openfunctions-v2"}
	}
	reg := registry()
	r := root()
	// The entries to run: those of the id file's categories it lists
	// (load_test_entries_from_id_file: an id the dataset lacks is
	// dropped) with --run-ids, else every entry of the categories.
	var todo []entry
	if _, ok := opts["--run-ids"]; ok {
		data, err := os.ReadFile(filepath.Join(r, "test_case_ids_to_generate.json"))
		if err != nil {
			fail("FileNotFoundError: " + err.Error())
		}
		var listed map[string][]string
		if err := json.Unmarshal(data, &listed); err != nil {
			fail("test_case_ids_to_generate.json: " + err.Error())
		}
		for cat, want := range listed {
			for _, e := range dataset(cat) {
				if contains(want, e.ID) {
					todo = append(todo, e)
				}
			}
		}
	} else {
		cats := multi(opts["--test-category"])
		if len(cats) == 0 {
			cats = []string{"all"}
		}
		for _, l := range leaves(cats) {
			todo = append(todo, dataset(l)...)
		}
	}
	todo = cleanUpPrereqs(todo)
	ids := map[string][]string{}
	for _, e := range todo {
		c := categoryOf(e.ID)
		ids[c] = append(ids[c], e.ID)
	}
	deps := map[string][]string{}
	for _, e := range todo {
		deps[e.ID] = e.DependsOn
	}
	n := 0
	var names []string
	for l, v := range ids {
		n += len(v)
		names = append(names, l)
	}
	// Prerequisites first (sort_key's priority), so the questions find
	// the memory they wrote.
	sort.Slice(names, func(i, j int) bool {
		pi, pj := strings.HasSuffix(names[i], "_prereq"), strings.HasSuffix(names[j], "_prereq")
		if pi != pj {
			return pi
		}
		return names[i] < names[j]
	})
	flags["cases"] = strconv.Itoa(n)
	flags["categories"] = strings.Join(names, ",")
	flags["models"] = strings.Join(models, ",")
	stub.Write("bfcl", "generate", flags)
	for _, m := range models {
		cfg, ok := reg[m]
		if !ok {
			fail(fmt.Sprintf("ValueError: Unknown model_name '%s'.\n• For officially supported models, please refer to `SUPPORTED_MODELS.md`.\n• For running new models, please refer to `README.md` and `CONTRIBUTING.md`.", m))
		}
		if cfg.Handler != "OpenAICompletionsHandler" {
			fail(fmt.Sprintf("model %s's handler %s would call its vendor's API, not the server", m, cfg.Handler))
		}
		base, key := os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY")
		if key == "" {
			fail("openai.OpenAIError: The api_key client option must be set")
		}
		if base == "" {
			fail("OPENAI_BASE_URL is not set: the OpenAI client would call api.openai.com")
		}
		done := map[string]bool{}
		for _, leaf := range names {
			var b bytes.Buffer
			for _, id := range ids[leaf] {
				// As BFCL's _multi_threaded_inference: a case whose request
				// fails is written with the error as its result, and
				// generate goes on (and exits 0).
				entry := map[string]any{"id": id, "result": "[f(x=1)]"}
				missing := ""
				for _, d := range deps[id] {
					if !done[d] && !generated(r, m, d) {
						missing = d
					}
				}
				if missing != "" {
					// The memory its prerequisites write is not there.
					entry = map[string]any{"id": id, "result": "Error during inference: FileNotFoundError: memory snapshot of " + missing + " not found (its prerequisite conversation did not run)"}
				} else if err := chat(base, m); err != nil {
					fmt.Printf("❗️❗️ Error occurred during inference for test case %s. Error: %v\n", id, err)
					entry = map[string]any{"id": id, "result": "Error during inference: " + err.Error(),
						"traceback": "Traceback (most recent call last):\n" + err.Error() + "\n"}
				}
				line, _ := json.Marshal(entry)
				b.Write(append(line, '\n'))
				done[id] = true
			}
			p := resultFile(r, m, leaf)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				fail(err.Error())
			}
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				fail(err.Error())
			}
		}
	}
}

// chat is one test case's request, as OpenAICompletionsHandler sends it
// in function-calling mode: the case's functions as tools (tool_choice
// left to the server's default, auto). Its error reads as the OpenAI
// client's.
// cleanUpPrereqs is clean_up_memory_prereq_entries: prerequisite
// conversations whose category's questions are not run are dropped (there
// is nothing for them to serve), and dependencies not run now are dropped
// from the lists (BFCL would wait for them forever).
func cleanUpPrereqs(todo []entry) []entry {
	cats := map[string]bool{}
	for _, e := range todo {
		cats[categoryOf(e.ID)] = true
	}
	var out []entry
	for _, e := range todo {
		if c := categoryOf(e.ID); strings.HasSuffix(c, "_prereq") && !cats[strings.TrimSuffix(c, "_prereq")] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// generated: a result for id is on disk from an earlier generate.
func generated(r, m, id string) bool {
	data, err := os.ReadFile(resultFile(r, m, categoryOf(id)))
	return err == nil && bytes.Contains(data, []byte(`"id":"`+id+`"`))
}

func chat(base, m string) error {
	body, _ := json.Marshal(map[string]any{"model": m, "temperature": 0.001, "store": false,
		"messages": []map[string]string{{"role": "user", "content": "call a tool"}},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "f", "description": "a function", "parameters": map[string]any{
				"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}}}}}})
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(strings.TrimRight(base, "/")+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("Connection error.")
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("Error code: %d - %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}

func evaluate(opts map[string][]string) {
	reg := registry()
	r := root()
	models := multi(opts["--model"])
	cats := multi(opts["--test-category"])
	if len(cats) == 0 {
		cats = []string{"all"}
	}
	_, partial := opts["--partial-eval"]
	for _, m := range models {
		if _, ok := reg[m]; !ok {
			fail(fmt.Sprintf("ValueError: Invalid model name '%s'.", m))
		}
		if _, err := os.Stat(filepath.Join(r, "result", dirName(m))); err != nil {
			continue // runner() walks the result directories: none, no score
		}
		// runner(): the result directory's name back to a model name, "_"
		// to "/" (a model id with "_" of its own is not found: KeyError).
		escaped := strings.ReplaceAll(dirName(m), "_", "/")
		cfg, ok := reg[escaped]
		if !ok {
			fail(fmt.Sprintf("Traceback (most recent call last):\n  File \"bfcl_eval/eval_checker/eval_runner.py\", in get_handler\n    config = MODEL_CONFIG_MAPPING[model_name]\nKeyError: '%s'", escaped))
		}
		scored := map[string][2]int{}
		for _, leaf := range leaves(cats) {
			f, err := os.Open(resultFile(r, m, leaf))
			if err != nil {
				if partial {
					continue
				}
				fail(fmt.Sprintf("FileNotFoundError: no result for %s (run generate first, or --partial-eval)", leaf))
			}
			var got []string
			errored := map[string]bool{}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var line struct {
					ID     string `json:"id"`
					Result any    `json:"result"`
				}
				if json.Unmarshal(sc.Bytes(), &line) == nil {
					got = append(got, line.ID)
					// BFCL scores an errored case as a wrong answer.
					if r, ok := line.Result.(string); ok && strings.HasPrefix(r, "Error during inference") {
						errored[line.ID] = true
					}
				}
			}
			f.Close()
			if len(got) < casesPerLeaf && !partial {
				fail(fmt.Sprintf("Missing test IDs in %s: %d of %d results (use --partial-eval)", leaf, len(got), casesPerLeaf))
			}
			correct := 0
			for _, id := range got {
				if indexOf(id)%2 == 0 && !errored[id] {
					correct++
				}
			}
			scored[leaf] = [2]int{correct, len(got)}
			head, _ := json.Marshal(map[string]any{"accuracy": float64(correct) / float64(len(got)), "correct_count": correct, "total_count": len(got)})
			p := filepath.Join(r, "score", dirName(m), "BFCL_v4_"+leaf+"_score.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				fail(err.Error())
			}
			if err := os.WriteFile(p, append(head, '\n'), 0o644); err != nil {
				fail(err.Error())
			}
		}
		writeCSVs(r, cfg.Display, scored)
	}
}

// writeCSVs writes each summary column as BFCL does, a percentage: here
// the accuracy over every case of the group's scored leaves.
func writeCSVs(r, display string, scored map[string][2]int) {
	cols := map[string][]string{}
	vals := map[string][]string{}
	var files []string
	for _, s := range summaries {
		correct, total := 0, 0
		for _, l := range collections[s.group] {
			correct += scored[l][0]
			total += scored[l][1]
		}
		if total == 0 {
			continue
		}
		if _, ok := cols[s.file]; !ok {
			files = append(files, s.file)
		}
		cols[s.file] = append(cols[s.file], s.column)
		vals[s.file] = append(vals[s.file], fmt.Sprintf("%.2f%%", 100*float64(correct)/float64(total)))
	}
	for _, f := range files {
		text := "Rank,Model," + strings.Join(cols[f], ",") + "\n1," + display + "," + strings.Join(vals[f], ",")
		if err := os.WriteFile(filepath.Join(r, "score", f), []byte(text), 0o644); err != nil {
			fail(err.Error())
		}
	}
}

func export() {
	entries := map[string][]entry{}
	for _, l := range allLeaves {
		entries[l] = dataset(l)
	}
	data, _ := json.Marshal(map[string]any{"collections": collections, "leaves": allLeaves, "entries": entries})
	fmt.Println(string(data))
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "stub bfcl:", msg)
	os.Exit(1)
}
