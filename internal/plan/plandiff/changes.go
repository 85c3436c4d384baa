package plandiff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// Change is one difference in what a job runs.
type Change struct {
	// Area is what part of the job changed: image, env, secrets, serve,
	// topology, bench, lm_eval, bfcl, custom, disagg, sweep, tools,
	// datasets, or the plan field's name (profile, hardware, model, …).
	Area string `json:"area"`
	// Item is the option (--max-num-seqs), variable, run or field.
	Item string `json:"item"`
	// Kind is added, removed or changed.
	Kind string `json:"change"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
	// Why says why the new value is what it is, where the plan knows (the
	// rule that chose an image).
	Why string `json:"why,omitempty"`
}

const (
	kindAdded   = "added"
	kindRemoved = "removed"
	kindChanged = "changed"
)

// area handles one top-level field of the plan's identity encoding.
type area struct {
	key string
	fn  func(o, n plan.Workload) []Change
}

// areas read the plan fields whose changes mean something beyond their
// text; every other field (and a field whose handler finds nothing
// readable) is compared leaf by leaf.
var areas = []area{
	{"image", imageChanges},
	{"env", func(o, n plan.Workload) []Change { return envChanges("env", "", o.Env, n.Env) }},
	{"secrets", func(o, n plan.Workload) []Change { return setChanges("secrets", o.Secrets, n.Secrets) }},
	{"serve", serveChanges},
	{"nodes", topo("nodes", func(w plan.Workload) int { return w.Nodes })},
	{"gpus_per_node", topo("gpus_per_node", func(w plan.Workload) int { return w.GPUsPerNode })},
	{"gpus", topo("gpus", func(w plan.Workload) int { return w.GPUs })},
	{"idle_gpus", topo("idle_gpus", func(w plan.Workload) int { return w.IdleGPUs })},
	{"bench", benchChanges},
	{"lm_eval", lmEvalChanges},
	{"bfcl", bfclChanges},
	{"custom_steps", customChanges},
	{"disagg", disaggChanges},
	{"tools", func(o, n plan.Workload) []Change {
		return setChanges("tools", names(o.Tools, func(t plan.Tool) string { return t.Name }), names(n.Tools, func(t plan.Tool) string { return t.Name }))
	}},
	{"datasets", func(o, n plan.Workload) []Change {
		return setChanges("datasets", names(o.Datasets, func(d plan.Dataset) string { return d.Name }), names(n.Datasets, func(d plan.Dataset) string { return d.Name }))
	}},
}

// Changes says what n runs differently from o, area by area: every field
// of the plans' identity encoding that differs yields at least one
// Change, so a changed hash is always explained.
func Changes(o, n plan.Workload) []Change {
	oj, err1 := identityFields(o)
	nj, err2 := identityFields(n)
	if err := cmp.Or(err1, err2); err != nil {
		return []Change{{Area: "plan", Item: "encoding", Kind: kindChanged, New: err.Error()}}
	}
	handled := map[string]func(o, n plan.Workload) []Change{}
	for _, a := range areas {
		handled[a.key] = a.fn
	}
	var out []Change
	keys := slices.Sorted(maps.Keys(union(oj, nj)))
	// The handled areas first, in their order; then the rest by name.
	order := func(k string) int {
		if i := slices.IndexFunc(areas, func(a area) bool { return a.key == k }); i >= 0 {
			return i
		}
		return len(areas)
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(order(a), order(b)) })
	for _, k := range keys {
		if bytes.Equal(oj[k], nj[k]) {
			continue
		}
		var cs []Change
		if fn := handled[k]; fn != nil {
			cs = fn(o, n)
		}
		if len(cs) == 0 {
			cs = leafChanges(k, oj[k], nj[k])
		}
		out = append(out, cs...)
	}
	return out
}

// identityFields are the plan's identity encoding (what its hash covers)
// by top-level field, each as canonical JSON.
func identityFields(w plan.Workload) (map[string][]byte, error) {
	data, err := plan.IdentityJSON(w)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out, nil
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func imageChanges(o, n plan.Workload) []Change {
	var out []Change
	why := "chosen by " + n.Image.Source
	if o.Image.Source != n.Image.Source {
		why += " (was " + o.Image.Source + ")"
	}
	if o.Image.Ref != n.Image.Ref {
		out = append(out, Change{Area: "image", Item: "ref", Kind: kindChanged, Old: o.Image.Ref, New: n.Image.Ref, Why: why})
	}
	if o.Image.Pull != n.Image.Pull && o.Image.Ref == n.Image.Ref {
		out = append(out, Change{Area: "image", Item: "pull", Kind: kindChanged, Old: o.Image.Pull, New: n.Image.Pull, Why: why})
	}
	out = append(out, scalar("image", "commit", o.Image.Commit, n.Image.Commit)...)
	out = append(out, scalar("image", "skip", o.Image.Skip, n.Image.Skip)...)
	if len(out) == 0 && o.Image.Source != n.Image.Source {
		out = append(out, Change{Area: "image", Item: "source", Kind: kindChanged, Old: o.Image.Source, New: n.Image.Source})
	}
	return out
}

// scalar is a change of one value ("" is absent).
func scalar(area, item, o, n string) []Change {
	switch {
	case o == n:
		return nil
	case o == "":
		return []Change{{Area: area, Item: item, Kind: kindAdded, New: n}}
	case n == "":
		return []Change{{Area: area, Item: item, Kind: kindRemoved, Old: o}}
	}
	return []Change{{Area: area, Item: item, Kind: kindChanged, Old: o, New: n}}
}

func envChanges(area, prefix string, o, n []plan.EnvVar) []Change {
	om, nm := map[string]string{}, map[string]string{}
	for _, e := range o {
		om[e.Name] = e.Value
	}
	for _, e := range n {
		nm[e.Name] = e.Value
	}
	var out []Change
	for _, k := range slices.Sorted(maps.Keys(union(om, nm))) {
		ov, inO := om[k]
		nv, inN := nm[k]
		switch {
		case !inO:
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindAdded, New: nv})
		case !inN:
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindRemoved, Old: ov})
		case ov != nv:
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindChanged, Old: ov, New: nv})
		}
	}
	return out
}

func setChanges(area string, o, n []string) []Change {
	var out []Change
	for _, x := range n {
		if !slices.Contains(o, x) {
			out = append(out, Change{Area: area, Item: x, Kind: kindAdded})
		}
	}
	for _, x := range o {
		if !slices.Contains(n, x) {
			out = append(out, Change{Area: area, Item: x, Kind: kindRemoved})
		}
	}
	if len(out) == 0 && !slices.Equal(o, n) {
		out = append(out, Change{Area: area, Item: "order", Kind: kindChanged, Old: strings.Join(o, ", "), New: strings.Join(n, ", ")})
	}
	return out
}

func topo(item string, get func(plan.Workload) int) func(o, n plan.Workload) []Change {
	return func(o, n plan.Workload) []Change {
		if get(o) == get(n) {
			return nil
		}
		return []Change{{Area: "topology", Item: item, Kind: kindChanged, Old: strconv.Itoa(get(o)), New: strconv.Itoa(get(n))}}
	}
}

// Specs of the engines' commands, by plan.Workload.Engine.
func serveSpec(engine string) *cmdline.Spec {
	if engine == schema.EngineSGLang {
		return cmdline.SGLangServe
	}
	return cmdline.VLLMServe
}

func benchSpec(engine string) *cmdline.Spec {
	if engine == schema.EngineSGLang {
		return cmdline.SGLangBench
	}
	return cmdline.VLLMBench
}

// generic reads a command wlc has no option table for (lm_eval, the BFCL
// driver, a router) the way argparse reads any: an option takes the next
// token unless that is an option too.
var generic = &cmdline.Spec{}

func serveChanges(o, n plan.Workload) []Change {
	var out []Change
	if oc, nc := strings.Join(o.Serve.Command, " "), strings.Join(n.Serve.Command, " "); oc != nc {
		out = append(out, Change{Area: "serve", Item: "command", Kind: kindChanged, Old: oc, New: nc})
	}
	// Options of one engine's command read with its table; across
	// engines, each side with its own.
	out = append(out, optionChanges("serve", "", serveSpec(o.Engine), serveSpec(n.Engine), o.Serve.Args, n.Serve.Args)...)
	for _, s := range []struct {
		item string
		o, n int
	}{
		{"tensor_parallel_size", o.Serve.TensorParallelSize, n.Serve.TensorParallelSize},
		{"data_parallel_size", o.Serve.DataParallelSize, n.Serve.DataParallelSize},
		{"pipeline_parallel_size", o.Serve.PipelineParallelSize, n.Serve.PipelineParallelSize},
	} {
		if s.o != s.n {
			out = append(out, Change{Area: "topology", Item: s.item, Kind: kindChanged, Old: strconv.Itoa(s.o), New: strconv.Itoa(s.n)})
		}
	}
	if o.Serve.ExpertParallel != n.Serve.ExpertParallel {
		out = append(out, Change{Area: "topology", Item: "expert_parallel", Kind: kindChanged, Old: strconv.FormatBool(o.Serve.ExpertParallel), New: strconv.FormatBool(n.Serve.ExpertParallel)})
	}
	return out
}

// option is one option (or positional argument) of an argv, with every
// value it is given, normalised the way the engine reads it.
type option struct {
	values []string
	first  int
}

// options reads argv with spec: options by canonical name (a switch's
// --no- form is the switch set false), positional arguments as
// "argument N".
func options(spec *cmdline.Spec, argv []string) map[string]*option {
	out := map[string]*option{}
	add := func(k, v string, at int) {
		if out[k] == nil {
			out[k] = &option{first: at}
		}
		out[k].values = append(out[k].values, v)
	}
	pos := 0
	for i, u := range spec.Parse(argv).Units {
		if !u.IsOption {
			pos++
			add(fmt.Sprintf("argument %d", pos), argv[u.Start], i)
			continue
		}
		m := u.Match
		switch {
		case m.Flag != nil && m.Flag.Kind == cmdline.Bool && m.Key == "" && !u.HasArg:
			add(m.Option, strconv.FormatBool(!m.Negated), i)
		case !u.HasArg:
			add(m.Canonical(), "(set)", i)
		default:
			v := u.Arg
			if m.Flag != nil && m.Key == "" {
				if t, err := m.Typed(u.Arg, true, nil); err == nil && t != nil {
					v = cmdline.Token(t) // 32k and 32000 are one value
				}
			}
			add(m.Canonical(), v, i)
		}
	}
	return out
}

// optionChanges compares two argvs as options: added, removed, or given
// another value; prefix qualifies the item (a bench run's name).
func optionChanges(area, prefix string, os, ns *cmdline.Spec, o, n []string) []Change {
	om, nm := options(os, o), options(ns, n)
	keys := slices.Collect(maps.Keys(union(om, nm)))
	// In the new argv's order, then what only the old one had.
	at := func(k string) (int, int) {
		if x := nm[k]; x != nil {
			return 0, x.first
		}
		return 1, om[k].first
	}
	slices.SortFunc(keys, func(a, b string) int {
		ga, ia := at(a)
		gb, ib := at(b)
		return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(ia, ib), cmp.Compare(a, b))
	})
	var out []Change
	for _, k := range keys {
		ov, nv := om[k], nm[k]
		switch {
		case ov == nil:
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindAdded, New: strings.Join(nv.values, ", ")})
		case nv == nil:
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindRemoved, Old: strings.Join(ov.values, ", ")})
		case !slices.Equal(ov.values, nv.values):
			out = append(out, Change{Area: area, Item: prefix + k, Kind: kindChanged, Old: strings.Join(ov.values, ", "), New: strings.Join(nv.values, ", ")})
		}
	}
	if len(out) == 0 && !slices.Equal(o, n) {
		// The same options and values, spelled or ordered otherwise
		// (32k for 32000, -tp for --tensor-parallel-size): the engine
		// reads them alike, but the argv is not the same text.
		out = append(out, Change{Area: area, Item: prefix + "argv", Kind: kindChanged, Old: strings.Join(o, " "), New: strings.Join(n, " "), Why: "the same options, spelled or ordered otherwise"})
	}
	return out
}

// keyed compares two lists of named things: added, removed, and for
// those on both sides, what inner says.
func keyed[T any](area string, o, n []T, key func(T) string, describe func(T) string, inner func(a, b T) []Change) []Change {
	om, nm := map[string]T{}, map[string]T{}
	for _, x := range o {
		om[key(x)] = x
	}
	for _, x := range n {
		nm[key(x)] = x
	}
	var out []Change
	for _, x := range n {
		k := key(x)
		if ox, ok := om[k]; !ok {
			out = append(out, Change{Area: area, Item: k, Kind: kindAdded, New: describe(x)})
		} else {
			out = append(out, inner(ox, x)...)
		}
	}
	for _, x := range o {
		if _, ok := nm[key(x)]; !ok {
			out = append(out, Change{Area: area, Item: key(x), Kind: kindRemoved, Old: describe(x)})
		}
	}
	return out
}

func benchChanges(o, n plan.Workload) []Change {
	return keyed("bench", o.Bench, n.Bench, func(b plan.BenchRun) string { return b.Name },
		func(b plan.BenchRun) string {
			return fmt.Sprintf("%d in / %d out, concurrency %d, %d prompts, %d repetition(s)", b.InputLen, b.OutputLen, b.MaxConcurrency, b.NumPrompts, b.Repetitions)
		},
		func(a, b plan.BenchRun) []Change {
			cs := optionChanges("bench", a.Name+": ", benchSpec(o.Engine), benchSpec(n.Engine), a.Args, b.Args)
			if a.Repetitions != b.Repetitions {
				cs = append(cs, Change{Area: "bench", Item: a.Name + ": repetitions", Kind: kindChanged, Old: strconv.Itoa(a.Repetitions), New: strconv.Itoa(b.Repetitions)})
			}
			if len(cs) == 0 {
				cs = jsonChanges("bench", a.Name+": ", a, b)
			}
			return cs
		})
}

func lmEvalChanges(o, n plan.Workload) []Change {
	return keyed("lm_eval", o.LMEval, n.LMEval, func(r plan.LMEvalRun) string { return r.Task },
		func(r plan.LMEvalRun) string { return "task " + r.Task },
		func(a, b plan.LMEvalRun) []Change { return argvChanges("lm_eval", a.Task+": ", a, b, a.Argv, b.Argv) })
}

func bfclChanges(o, n plan.Workload) []Change {
	return keyed("bfcl", o.BFCL, n.BFCL, func(r plan.BFCLRun) string { return r.Category },
		func(r plan.BFCLRun) string { return "category " + r.Category },
		func(a, b plan.BFCLRun) []Change { return argvChanges("bfcl", a.Category+": ", a, b, a.Argv, b.Argv) })
}

// argvChanges are the options that changed between two runs' argv (av,
// bv) of a client wlc has no option model for; when none did, whatever
// else changed in the runs a and b.
func argvChanges(area, prefix string, a, b any, av, bv []string) []Change {
	if cs := optionChanges(area, prefix, generic, generic, av, bv); len(cs) > 0 {
		return cs
	}
	return jsonChanges(area, prefix, a, b)
}

func customChanges(o, n plan.Workload) []Change {
	return keyed("custom", o.Custom, n.Custom, func(r plan.CustomRun) string { return r.Name },
		func(r plan.CustomRun) string { return "on the " + r.Where + ": " + strings.Join(r.Argv, " ") },
		func(a, b plan.CustomRun) []Change {
			cs := envChanges("custom", a.Name+": env ", a.Env, b.Env)
			if !slices.Equal(a.Argv, b.Argv) {
				cs = append(cs, Change{Area: "custom", Item: a.Name + ": argv", Kind: kindChanged, Old: strings.Join(a.Argv, " "), New: strings.Join(b.Argv, " ")})
			}
			cs = append(cs, scalar("custom", a.Name+": where", a.Where, b.Where)...)
			return cs
		})
}

func disaggChanges(o, n plan.Workload) []Change {
	var oi, ni []plan.Instance
	var or, nr plan.Router
	if o.Disagg != nil {
		oi, or = o.Disagg.Instances, o.Disagg.Router
	}
	if n.Disagg != nil {
		ni, nr = n.Disagg.Instances, n.Disagg.Router
	}
	id := func(in plan.Instance) string { return fmt.Sprintf("%s %d", in.Role, in.Index) }
	out := keyed("disagg", oi, ni, id,
		func(in plan.Instance) string {
			return fmt.Sprintf("%d node(s) × %d GPUs, tensor %d, data %d", in.Nodes, in.GPUsPerNode, in.TensorParallelSize, in.DataParallelSize)
		},
		func(a, b plan.Instance) []Change {
			cs := optionChanges("disagg", id(a)+": ", cmdline.VLLMServe, cmdline.VLLMServe, a.Args, b.Args)
			cs = append(cs, envChanges("disagg", id(a)+": env ", a.Env, b.Env)...)
			if len(cs) == 0 {
				cs = jsonChanges("disagg", id(a)+": ", a, b)
			}
			return cs
		})
	out = append(out, optionChanges("disagg", "router: ", generic, generic, or.Argv, nr.Argv)...)
	return out
}

// jsonChanges compares two values leaf by leaf through their JSON.
func jsonChanges(area, prefix string, a, b any) []Change {
	aj, err1 := json.Marshal(a)
	bj, err2 := json.Marshal(b)
	if cmp.Or(err1, err2) != nil {
		return nil
	}
	cs := leafChanges("", aj, bj)
	for i := range cs {
		cs[i].Area, cs[i].Item = area, prefix+cs[i].Item
	}
	return cs
}

// leafChanges compares a field's two JSON values leaf by leaf, each leaf
// named by its dotted path under key (profile.queue, hardware.memory.gb).
func leafChanges(key string, o, n []byte) []Change {
	ol, nl := map[string]string{}, map[string]string{}
	flatten(key, decode(o), ol)
	flatten(key, decode(n), nl)
	area, _, _ := strings.Cut(key, ".")
	if area == "" {
		area = "plan"
	}
	var out []Change
	for _, k := range slices.Sorted(maps.Keys(union(ol, nl))) {
		ov, inO := ol[k]
		nv, inN := nl[k]
		switch {
		case !inO:
			out = append(out, Change{Area: area, Item: k, Kind: kindAdded, New: nv})
		case !inN:
			out = append(out, Change{Area: area, Item: k, Kind: kindRemoved, Old: ov})
		case ov != nv:
			out = append(out, Change{Area: area, Item: k, Kind: kindChanged, Old: ov, New: nv})
		}
	}
	return out
}

func decode(data []byte) any {
	if data == nil {
		return nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(data)
	}
	return v
}

func flatten(path string, v any, out map[string]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case nil:
	case map[string]any:
		for k, c := range x {
			flatten(join(k), c, out)
		}
	case []any:
		for i, c := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), c, out)
		}
	case string:
		out[path] = x
	default:
		out[path] = fmt.Sprint(x)
	}
}
