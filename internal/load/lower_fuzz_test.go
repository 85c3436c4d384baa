package load_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"cuelang.org/go/cue/cuecontext"
	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// The injection matrix and the lowering fuzz target share one base: a
// workload and its profile with as many string fields set as the schema
// has, loaded through CUE once. Each case sets one string of it (found by
// walking its JSON form, so a field added to the schema joins the matrix
// the day it is added) to a payload, then runs vet's value rules, Resolve
// and every backend that accepts it. A case passes when vet refuses the
// value at that very field, or Resolve / the backend refuses it with an
// error, or every artifact keeps the structure the unmodified workload
// lowers to: the same shell statements, commands, substitutions and
// parameter expansions (mvdan.cc/sh), the same YAML shape with each step's
// command parsed the same way, the same #SBATCH lines.

const lowerBaseProfiles = `package workloads

profiles: S: {
	hardware: "H200"
	runtime:  "slurm"
	queue:    "slurm-h200"
	hf_home:  "/data/hf"
	agent_tags: pool: "gpu"
	env: PROFILE_NOTE: "profile value"
	secrets: ["EXTRA_SECRET"]
	image_repo: "vllm/vllm-openai"
	slurm: {
		partition:   "batch"
		account:     "acct"
		qos:         "normal"
		reservation: "res"
		time_limit:  "02:00:00"
		max_nodes:   2
		gres:        "gpu:8"
		extra_sbatch_args: ["--comment=x"]
		extra_srun_args: ["--cpu-bind=none"]
		pyxis: {
			image: "vllm/vllm-openai:v0.11.0"
			mounts: [{source: "/data/hf", target: "/root/.cache/huggingface"}]
			workdir: "/work"
		}
	}
}
`

const lowerBaseWorkload = `package workloads

workloads: base: {
	description:    "a description"
	dashboard_name: "base-dash"
	profile:        "S"
	gpus_per_node:  8
	model:          "Qwen/Qwen3-8B"
	precision:      "bf16"
	image:          "vllm/vllm-openai:v0.13.0"
	env: NOTE:      "env value"
	serve: {
		tensor_parallel_size: 8
		kv_cache_dtype:       "fp8"
		tokenizer_mode:       "auto"
		tool_call_parser:     "hermes"
		reasoning_parser:     "qwen3"
		enable_auto_tool_choice: true
		compilation_config: mode: "VLLM_COMPILE"
		extra_args: ["--chat-template", "tmpl.jinja"]
	}
	vllm_bench: {
		metadata: team: "perf"
		configs: [{
			name: "c1", input_len: 16, output_len: 4, num_prompts: 8, max_concurrency: 8
			args: {"temperature": "0", "metadata": ["k=v"]}
		}]
		sweep: {
			shapes: [{input_len: 16, output_len: 4}]
			concurrency: [2]
			prompts_per_concurrency: 2
			args: {"top-p": "0.9", "metadata": ["s=w"]}
		}
	}
	lm_eval: {
		model_args: {tokenizer: "Qwen/Qwen3-8B"}
		tasks: [{name: "gsm8k"}]
	}
	bfcl: test_categories: ["simple_python"]
	custom_steps: [{
		name: "probe", where: "host", script: "echo probe"
		env: STEP_NOTE: "step value"
	}, {
		name: "probe2", where: "server", command: ["python3", "-c", "print(1)"]
	}]
}
`

// lowerPDWorkload is the base of the disaggregated routes (the roles'
// extra_args, the router's command, env and extra_args), on the same
// profile: PD serving runs as Slurm steps only.
const lowerPDWorkload = `package workloads

let nixl = {kv_connector: "NixlConnector", kv_load_failure_policy: "fail"}

workloads: pd: {
	profile:       "S"
	nodes:         2
	gpus_per_node: 8
	model:         "Qwen/Qwen3-8B"
	precision:     "bf16"
	image:         "vllm/vllm-openai:v0.13.0"
	disagg: {
		prefill: {
			serve: {data_parallel_size: 8, extra_args: ["--chat-template", "tmpl.jinja"]}
			kv_transfer: nixl
			env: ROLE_NOTE: "prefill value"
		}
		decode: {
			serve: {tensor_parallel_size: 8, extra_args: ["--stream-interval", "50"]}
			kv_transfer: nixl
		}
		router: {
			command: ["vllm-router"]
			dir:     "/opt/router"
			env: RUST_LOG: "info"
			extra_args: ["--request-timeout-secs", "600", "--log-dir", "/tmp/router logs", "--api-key-validation-urls", "http://auth.local/v"]
		}
	}
	vllm_bench: sweep: {
		shapes: [{input_len: 16, output_len: 4}]
		concurrency: [2]
		prompts_per_concurrency: 2
		args: {"top-p": "0.9", "metadata": ["s=w"]}
	}
}
`

type lowerBase struct {
	res      *load.Result
	workload load.Workload
	wJSON    []byte
	pJSON    []byte
	sites    []site
	baseline []string // per backend: the signature of its artifacts
}

// site is one string of the workload or profile: its JSON path and
// whether it is a map key.
type site struct {
	profile bool
	path    []any // string keys and int indexes
	key     bool
}

func (s site) String() string {
	out := s.format(false)
	if s.profile {
		out = "profile:" + out
	}
	if s.key {
		out += " (key)"
	}
	return out
}

// cuePath is the path as vet's findings name it (map keys quoted when
// they are not identifiers).
func (s site) cuePath() string { return s.format(true) }

var identLabel = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

func (s site) format(quote bool) string {
	var b strings.Builder
	for i, p := range s.path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			if quote && !identLabel.MatchString(p) {
				p = strconv.Quote(p)
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

var (
	lowerBaseOnce sync.Once
	lowerBaseVal  *lowerBase
	lowerBaseErr  error
	pdBaseOnce    sync.Once
	pdBaseVal     *lowerBase
	pdBaseErr     error
)

func loadLowerBase(t testing.TB) *lowerBase {
	t.Helper()
	lowerBaseOnce.Do(func() { lowerBaseVal, lowerBaseErr = newLowerBase(t, lowerBaseWorkload) })
	if lowerBaseErr != nil {
		t.Fatal(lowerBaseErr)
	}
	return lowerBaseVal
}

// loadPDBase is the disaggregated base (lowerPDWorkload).
func loadPDBase(t testing.TB) *lowerBase {
	t.Helper()
	pdBaseOnce.Do(func() { pdBaseVal, pdBaseErr = newLowerBase(t, lowerPDWorkload) })
	if pdBaseErr != nil {
		t.Fatal(pdBaseErr)
	}
	return pdBaseVal
}

func newLowerBase(t testing.TB, workload string) (*lowerBase, error) {
	root := writePkg(t, map[string]string{"workloads/profiles.cue": lowerBaseProfiles, "workloads/base.cue": workload})
	r := load.Load(cuecontext.New(), root+"/workloads", root)
	if r.Diags.HasErrors() || len(r.Workloads) != 1 {
		return nil, fmt.Errorf("the base does not load:\n%s", r.Diags)
	}
	b := &lowerBase{res: r, workload: r.Workloads[0]}
	b.wJSON, _ = json.Marshal(b.workload.Workload)
	b.pJSON, _ = json.Marshal(r.Profiles["S"])
	for _, src := range []struct {
		data    []byte
		profile bool
	}{{b.wJSON, false}, {b.pJSON, true}} {
		var tree any
		json.Unmarshal(src.data, &tree)
		walkJSON(tree, nil, func(path []any, key bool) {
			b.sites = append(b.sites, site{profile: src.profile, path: append([]any(nil), path...), key: key})
		})
	}
	for _, be := range registry.All() {
		sig, err := lowerSig(r, b.workload, r.Profiles["S"], be)
		if err != nil {
			return nil, fmt.Errorf("the base does not lower through %s: %v", be.Name(), err)
		}
		b.baseline = append(b.baseline, sig)
	}
	return b, nil
}

// walkJSON calls f for every string leaf and every map key (except the
// name fields the catalog keys: the workload's profile reference).
func walkJSON(v any, path []any, f func(path []any, key bool)) {
	switch v := v.(type) {
	case string:
		f(path, false)
	case []any:
		for i, e := range v {
			walkJSON(e, append(path, i), f)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(path, k)
			if isFreeMap(path) {
				f(p, true)
			}
			walkJSON(v[k], p, f)
		}
	}
}

// isFreeMap reports whether the map at path has user-chosen keys (env,
// args, metadata, model_args, configs) rather than schema fields.
func isFreeMap(path []any) bool {
	if len(path) == 0 {
		return false
	}
	last, ok := path[len(path)-1].(string)
	return ok && (last == "env" || last == "args" || last == "metadata" || last == "model_args" || last == "agent_tags" || strings.HasSuffix(last, "_config"))
}

// setJSON sets the string (or renames the key) at path to val.
func setJSON(tree any, path []any, key bool, val string) any {
	if len(path) == 0 {
		return val
	}
	switch p := path[0].(type) {
	case int:
		l := tree.([]any)
		l[p] = setJSON(l[p], path[1:], key, val)
		return l
	default:
		m := tree.(map[string]any)
		k := p.(string)
		if key && len(path) == 1 {
			v := m[k]
			delete(m, k)
			m[val] = v
			return m
		}
		m[k] = setJSON(m[k], path[1:], key, val)
		return m
	}
}

// outcome of one case.
type outcome int

const (
	refusedAtField outcome = iota
	refusedByResolve
	refusedByBackend
	inert
)

// runCase applies val at s and checks the contract; it returns what
// happened, or an error when the contract is broken.
func (b *lowerBase) runCase(s site, val string) (outcome, error) {
	src := b.wJSON
	if s.profile {
		src = b.pJSON
	}
	var tree any
	json.Unmarshal(src, &tree)
	tree = setJSON(tree, s.path, s.key, val)
	data, _ := json.Marshal(tree)
	w, prof := b.workload.Workload, b.res.Profiles["S"]
	var findings []check.Diagnostic
	if s.profile {
		prof = schema.Profile{}
		if err := json.Unmarshal(data, &prof); err != nil {
			return refusedAtField, nil // not the field's type: CUE's error
		}
		findings = check.ProfileValues(&prof)
	} else {
		w = schema.Workload{}
		if err := json.Unmarshal(data, &w); err != nil {
			return refusedAtField, nil
		}
		findings = check.WorkloadValues(&w)
	}
	if len(findings) > 0 {
		at := s
		if s.key { // the finding names the key as written
			at.path = append(append([]any(nil), s.path[:len(s.path)-1]...), val)
		}
		want := at.cuePath()
		if len(s.path) == 1 && s.path[0] == "name" {
			want = ""
		}
		for _, f := range findings {
			if f.Path == want || strings.HasPrefix(want, f.Path+".") || strings.HasPrefix(want, f.Path+"[") {
				return refusedAtField, nil
			}
		}
		return 0, fmt.Errorf("refused, but not at %s: %v", want, findings)
	}
	lw := b.workload
	lw.Workload = w
	for i, be := range registry.All() {
		sig, err := lowerSig(b.res, lw, prof, be)
		switch {
		case err == errResolve:
			return refusedByResolve, nil
		case err != nil:
			return refusedByBackend, nil
		case val == "":
			// An empty optional value means unset: the artifact may
			// drop the line it fed (an #SBATCH --account); it must
			// still parse, which lowerSig checked.
		case sig != b.baseline[i]:
			return 0, fmt.Errorf("%s: the artifacts' structure changed:\n%s", be.Name(), diffLines(b.baseline[i], sig))
		}
	}
	return inert, nil
}

var errResolve = fmt.Errorf("resolve refused")

// lowerSig lowers w (with prof as its profile) through be and returns the
// structure of the artifacts.
func lowerSig(r *load.Result, w load.Workload, prof schema.Profile, be backends.Backend) (string, error) {
	rr := *r
	rr.Profiles = map[string]schema.Profile{w.Profile: prof}
	if prof.Name != "" && prof.Name != w.Profile {
		rr.Profiles[prof.Name] = prof
	}
	p, err := rr.Resolve(w, plan.Overrides{})
	if err != nil {
		return "", errResolve
	}
	if acc, ok := be.(backends.Accepter); ok && acc.Accepts(p) != nil {
		return "not accepted", nil
	}
	arts, err := be.Lower([]plan.Workload{p}, backends.Options{Env: map[string]string{}, WorkloadsDir: "workloads"})
	if err == nil {
		err = backends.CheckArtifacts(arts)
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, a := range arts {
		fmt.Fprintf(&b, "artifact %d mode %o\n", i, a.Mode)
		switch {
		case strings.HasSuffix(a.Path, ".yml") || strings.HasSuffix(a.Path, ".yaml"):
			s, err := yamlSig(a.Data)
			if err != nil {
				return "", fmt.Errorf("artifact %s is not YAML: %v", a.Path, err)
			}
			b.WriteString(s)
		default:
			s, err := shellSig(string(a.Data))
			if err != nil {
				return "", fmt.Errorf("artifact %s does not parse as bash: %v", a.Path, err)
			}
			b.WriteString(s)
		}
	}
	return b.String(), nil
}

var sbatchLine = regexp.MustCompile(`^#SBATCH --[a-z][a-z-]*(=[^\x00-\x1f\x7f]*)?$`)

// shellSig is a script's structure: statements, commands, substitutions,
// parameter expansions and #SBATCH lines; never the literal values.
func shellSig(src string) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			b.WriteString("stmt ")
		case *syntax.CallExpr:
			fmt.Fprintf(&b, "call%d ", min(len(n.Args), 1))
		case *syntax.CmdSubst:
			b.WriteString("$() ")
		case *syntax.ProcSubst:
			b.WriteString("<() ")
		case *syntax.ArithmExp:
			b.WriteString("$(()) ")
		case *syntax.ParamExp:
			fmt.Fprintf(&b, "${%s} ", n.Param.Value)
		case *syntax.Redirect:
			b.WriteString("redir ")
		}
		return true
	})
	n := 0
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "#SBATCH") {
			if !sbatchLine.MatchString(l) {
				return "", fmt.Errorf("malformed #SBATCH line %q", l)
			}
			n++
		}
	}
	fmt.Fprintf(&b, "\n#SBATCH %d\n", n)
	return b.String(), nil
}

var stepKeys = map[string]bool{"label": true, "key": true, "command": true, "commands": true, "agents": true, "env": true, "plugins": true,
	"timeout_in_minutes": true, "soft_fail": true, "retry": true, "artifact_paths": true, "depends_on": true, "if": true, "skip": true,
	"steps": true, "group": true, "priority": true, "concurrency": true, "concurrency_group": true, "notify": true, "cancel_on_build_failing": true}

func yamlSig(data []byte) (string, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(&b, "{%d ", len(v))
			for _, k := range keys {
				if stepKeys[k] {
					b.WriteString(k + ":")
				} else {
					b.WriteString("*:")
				}
				if k == "command" {
					if s, ok := v[k].(string); ok {
						sig, err := shellSig(s)
						if err != nil {
							return fmt.Errorf("step command does not parse as bash: %v", err)
						}
						b.WriteString("<" + sig + ">")
						continue
					}
				}
				if err := walk(v[k], depth+1); err != nil {
					return err
				}
			}
			b.WriteString("} ")
		case []any:
			fmt.Fprintf(&b, "[%d ", len(v))
			for _, e := range v {
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
			b.WriteString("] ")
		default:
			fmt.Fprintf(&b, "%T ", v)
		}
		return nil
	}
	err := walk(doc, 0)
	return b.String(), err
}

func diffLines(a, b string) string {
	al, bl := strings.Fields(a), strings.Fields(b)
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			lo := max(0, i-5)
			return fmt.Sprintf("at token %d: want …%s…, got …%s…", i, strings.Join(al[lo:min(len(al), i+5)], " "), strings.Join(bl[lo:min(len(bl), i+5)], " "))
		}
	}
	return fmt.Sprintf("%d tokens, want %d", len(bl), len(al))
}

// injectionPayloads are the matrix's values.
var injectionPayloads = []string{
	"$(touch /tmp/wlc-pwned)",
	"`touch /tmp/wlc-pwned`",
	"x; touch /tmp/wlc-pwned",
	"x\ntouch /tmp/wlc-pwned",
	`it's "quoted"`,
	"${IFS}${HOME}",
	"%n%s%x",
	`back\slash\`,
	"-x --privileged",
	"../../etc/passwd",
	"a\x01b\x1b[31mc\r",
	strings.Repeat("long", 2000),
}

// TestInjectionMatrix runs every payload at every string of the bases
// (the disaggregated one adds the roles' and the router's fields).
func TestInjectionMatrix(t *testing.T) {
	for _, base := range []struct {
		name string
		load func(testing.TB) *lowerBase
	}{{"base", loadLowerBase}, {"pd", loadPDBase}} {
		t.Run(base.name, func(t *testing.T) { injectionMatrix(t, base.load(t)) })
	}
}

func injectionMatrix(t *testing.T, b *lowerBase) {
	counts := map[outcome]int{}
	for _, s := range b.sites {
		for _, p := range injectionPayloads {
			o, err := b.runCase(s, p)
			if err != nil {
				if len(p) > 40 {
					p = p[:40] + "…"
				}
				if e := err.Error(); len(e) > 300 {
					err = fmt.Errorf("%s…", e[:300])
				}
				t.Errorf("%s = %q: %v", s, p, err)
				continue
			}
			counts[o]++
		}
	}
	t.Logf("%d sites × %d payloads: %d refused at the field, %d refused by Resolve, %d by a backend, %d inert",
		len(b.sites), len(injectionPayloads), counts[refusedAtField], counts[refusedByResolve], counts[refusedByBackend], counts[inert])
	if len(b.sites) < 40 {
		t.Errorf("only %d string sites in the base; it should set most string fields", len(b.sites))
	}
}

// FuzzLower puts an arbitrary string at any string of the base workload
// or profile and lowers it through every backend: vet refuses it at that
// field, or a later stage refuses it, or every artifact keeps its
// structure. No input may panic.
func FuzzLower(f *testing.F) {
	for i := range 40 {
		for _, p := range injectionPayloads[:4] {
			f.Add(uint16(i), p)
		}
	}
	b := loadLowerBase(f)
	f.Fuzz(func(t *testing.T, at uint16, val string) {
		if !utf8.ValidString(val) {
			t.Skip("CUE source is UTF-8: no workload value holds invalid UTF-8 (and JSON would rewrite it)")
		}
		s := b.sites[int(at)%len(b.sites)]
		if _, err := b.runCase(s, val); err != nil {
			t.Errorf("%s = %q: %v", s, val, err)
		}
	})
}
