// Package importer converts perf-eval workload YAMLs into wlc CUE
// workloads, and its lib/gpu_profiles.yaml into profiles (profiles.go).
// It is pure: bytes in, formatted CUE source and findings out.
//
// The conversion is literal: the imported workload asks vLLM for the same
// server command perf-eval ran (serve_args are word-split the way perf-eval
// did, known flags become typed serve fields, the rest stays in extra_args
// in order). Shapes wlc vet rejects (idle reserved GPUs, speed_bench fields
// on a random dataset) are kept and reported as warnings, so the fix is the
// user's decision. Fields wlc has no place for are errors: the workload is
// refused, never half-converted.
package importer

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/diag"
)

// Result is one imported workload.
type Result struct {
	// Key is the workload key (the file stem).
	Key string
	// Source is the formatted CUE file (package workloads); nil when the
	// workload was refused (Findings has an error).
	Source []byte
	// Findings are the errors and warnings, at positions in the YAML.
	Findings diag.List
	// Profile is the profile the workload names (perf-eval's gpu).
	Profile string
	// Nodes is how many nodes the workload's job takes.
	Nodes int
}

// Refused reports whether the workload was not converted.
func (r Result) Refused() bool { return r.Findings.HasErrors() }

// KeyFor is the workload key of a perf-eval file: its stem, as the hand
// ports name them (perf-eval's own `name` was only a label).
func KeyFor(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// PerfEval converts one perf-eval workload YAML. file names it in findings
// and the header comment.
func PerfEval(file string, data []byte) Result {
	return PerfEvalAs(file, KeyFor(file), data)
}

// PerfEvalAs is PerfEval with the workload key given (e.g. model_gpu for
// a per-model folder's gpu.yaml).
func PerfEvalAs(file, key string, data []byte) Result {
	c := &conv{file: file, key: key}
	c.run(data)
	res := Result{Key: c.key, Findings: c.diags, Profile: c.profile, Nodes: c.nodes}
	if c.diags.HasErrors() {
		return res
	}
	src, err := format.Source([]byte(c.out.String()), format.Simplify())
	if err != nil {
		// A bug in the emitter, not in the input: say so with the text.
		c.errorf(nil, "", "internal error: generated CUE does not parse (%v); please report it with this file", err)
		res.Findings = c.diags
		return res
	}
	if err := checkShape(src, c.key); err != nil {
		c.errorf(nil, "", "internal error: the generated CUE %v, so a value from the YAML escaped its place; nothing was converted, please report it with this file", err)
		res.Findings = c.diags
		return res
	}
	res.Source = src
	return res
}

type conv struct {
	// lines is how many lines the input has, as YAML breaks them.
	lines   int
	file    string
	key     string
	profile string
	nodes   int // the job's, once run has read them
	diags   diag.List
	out     bytes.Buffer
}

func (c *conv) errorf(n *yaml.Node, path, format string, args ...any) {
	line, col := c.pos(n)
	c.diags.Errorf(c.file, line, col, path, format, args...)
}

func (c *conv) warnf(n *yaml.Node, path, format string, args ...any) {
	line, col := c.pos(n)
	c.diags.Warnf(c.file, line, col, path, format, args...)
}

// pos is where a finding about n is reported: yaml.v3 places an empty
// value at the end of the input (an explicit key `?` on the last line,
// no newline after it) one line past the file's last; that is its last
// line, where the value is missing.
func (c *conv) pos(n *yaml.Node) (int, int) {
	line, col := pos(n)
	if c.lines > 0 && line > c.lines {
		return c.lines, 1
	}
	return line, col
}

func pos(n *yaml.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	return n.Line, n.Column
}

// field is one key of a YAML mapping.
type field struct {
	key *yaml.Node
	val *yaml.Node
}

// fields returns a mapping's keys in order, reporting duplicates (perf-eval
// silently kept the last one; this keeps nothing and refuses).
func (c *conv) fields(m *yaml.Node, path string) ([]field, map[string]field) {
	var out []field
	byName := map[string]field{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			c.errorf(k, path, "a mapping key must be a plain scalar")
			continue
		}
		if k.Value == "<<" {
			c.errorf(k, join(path, k.Value), "YAML merge keys (<<) are not supported; write the keys out")
			continue
		}
		if prev, dup := byName[k.Value]; dup {
			c.errorf(k, join(path, k.Value), "duplicate key %s: first at line %d, again at line %d (perf-eval silently kept the last one; delete the one you do not mean)", k.Value, prev.key.Line, k.Line)
			continue
		}
		f := field{k, v}
		byName[k.Value] = f
		out = append(out, f)
	}
	return out, byName
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unsupported are perf-eval keys (from branches) wlc has no place for.
var unsupported = map[string]string{
	"aiperf": "wlc has no aiperf runner",
}

var unsupportedVLLM = map[string]string{
	"build": "image builds (vllm.build, #66) have no wlc equivalent; build the image in CI and set image",
}

// parse reads data as a perf-eval YAML file, bounded in size and in its
// aliases (every walk here follows them): the document and its root
// node, nil for an empty file; false, the reason said, when it cannot be
// read.
func (c *conv) parse(data []byte) (doc, root *yaml.Node, ok bool) {
	if err := bounded.YAMLFile.Check(data); err != nil {
		c.errorf(nil, "", "%v", err)
		return nil, nil, false
	}
	doc = &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		line, col, msg := yamlErrorAt(err, data)
		c.diags.Errorf(c.file, line, col, "", "not YAML: %s", msg)
		return nil, nil, false
	}
	c.lines = strings.Count(strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n").Replace(string(data)), "\n") + 1
	var ae *bounded.AliasError
	if err := bounded.CheckAliases(doc); errors.As(err, &ae) {
		c.errorf(ae.At, "", "%v", err)
		return nil, nil, false
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return doc, nil, true
	}
	return doc, resolve(doc.Content[0]), true
}

func (c *conv) run(data []byte) {
	doc, root, ok := c.parse(data)
	if !ok {
		return
	}
	if root == nil {
		c.errorf(nil, "", "empty file")
		return
	}
	if root.Kind != yaml.MappingNode {
		c.errorf(root, "", "a perf-eval workload is a mapping of keys, not a %s", kindName(root))
		return
	}
	if !keyRE.MatchString(c.key) || strings.Contains(c.key, "..") {
		c.errorf(nil, "", "file stem %q is not a valid wlc workload name (letters, digits, _, . and -); rename the file", c.key)
	}
	fs, top := c.fields(root, "")

	w := &workload{}
	var todo []string // unknown keys kept as comments
	for _, f := range fs {
		k := f.key.Value
		if k == "serving" {
			continue
		}
		if why, ok := unsupported[k]; ok {
			c.errorf(f.key, k, "%s; workload not imported", why)
			continue
		}
		switch k {
		case "serving", "name", "gpu", "num_gpus", "num_nodes", "gpus_per_node", "nightly", "timeout_in_minutes", "bench_only", "vllm", "sglang", "lm_eval", "vllm_bench", "sglang_bench", "bfcl",
			"custom_script", "custom_group", "host_runtime":
		default:
			c.warnf(f.key, k, "unknown key %s (perf-eval ignored it); kept as a TODO comment, not converted", k)
			todo = append(todo, yamlText(f))
		}
	}

	// Header: the file's own comments, then where it came from.
	header := comments(doc.HeadComment, root.HeadComment)
	if len(fs) > 0 {
		header = append(header, comments(fs[0].key.HeadComment)...)
		fs[0].key.HeadComment = ""
	}
	w.header = header
	// perf-eval's name keys the dashboards' rows: it survives as
	// dashboard_name (the workload key is the file stem).
	if f, ok := top["name"]; ok && f.val.Value != c.key && f.val.Kind == yaml.ScalarNode {
		if dashboardName.MatchString(f.val.Value) && !strings.Contains(f.val.Value, "..") {
			w.add(nodeComments(f), "dashboard_name: "+quote(f.val.Value))
		} else {
			c.warnf(f.val, "name", "name %q is not a wlc name (letters, digits, _ . -); not kept as dashboard_name, so the dashboards will key this workload's rows by %s", f.val.Value, c.key)
		}
	}

	w.shapeAt = -1
	c.topLevel(w, top)
	if _, sg := top["sglang"]; sg {
		c.sglang(w, top)
	} else {
		c.vllm(w, top)
	}
	if _, pd := top["serving"]; pd {
		c.serving(w, top)
	}
	c.evals(w, top)
	c.customJob(w, top)
	if len(w.blocks) == 0 && !c.diags.HasErrors() {
		c.errorf(root, "", "no lm_eval.tasks, vllm_bench.configs, sglang_bench.configs or bfcl: perf-eval refused such a workload and wlc has nothing to run")
	}
	w.todo = append(todo, w.todo...)
	c.nodes = w.nodes
	if c.diags.HasErrors() {
		return
	}
	c.emit(w)
}

// dashboardName is schema #Name's pattern.
var dashboardName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "node"
}

func comments(cs ...string) []string {
	var out []string
	for _, c := range cs {
		for _, l := range strings.Split(c, "\n") {
			l = strings.TrimSpace(l)
			if l == "" {
				continue
			}
			l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
			out = append(out, commentText(l))
		}
	}
	return out
}

// yamlText renders one key: value as YAML, for a TODO comment.
func yamlText(f field) string {
	m := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: f.key.Value},
		f.val,
	}}
	b, err := yaml.Marshal(m)
	if err != nil {
		return f.key.Value + ": ?"
	}
	return strings.TrimRight(string(b), "\n")
}

// workload collects the CUE fields in emission order.
type workload struct {
	header []string
	lines  []string // top-level "label: value" lines, with comments
	todo   []string
	// blocks are the eval blocks in the original's order.
	blocks []string
	// gpus is nodes × gpus_per_node; gpusAt the YAML node that set it.
	// gpusRefused: a count was refused, so gpus is a default, not the
	// user's, and checks against it would only repeat that error.
	gpus        int
	gpusAt      *field
	gpusRefused bool
	// profile is the gpu: value; lets are file-level CUE lets.
	profile string
	// nodes is how many nodes the job takes (num_nodes, or serving's roles).
	nodes int
	lets  []string
	// shapeAt is where nodes and gpus_per_node go when serving: decides
	// them (-1 otherwise).
	shapeAt int
}

// setShape inserts nodes and gpus_per_node at shapeAt.
func (w *workload) setShape(nodes, gpn int) {
	w.nodes = nodes
	if w.shapeAt < 0 {
		return
	}
	ins := []string{fmt.Sprintf("nodes: %d", nodes), fmt.Sprintf("gpus_per_node: %d", gpn)}
	w.lines = append(w.lines[:w.shapeAt], append(ins, w.lines[w.shapeAt:]...)...)
	w.shapeAt = -1
}

// add appends line, after the comments cs.
func (w *workload) add(cs []string, line string) {
	w.lines = append(append(w.lines, commentLines(cs)...), line)
}

// commentLines are the comments cs as CUE comment lines.
func commentLines(cs []string) []string {
	var out []string
	for _, c := range cs {
		out = append(out, "// "+c)
	}
	return out
}

// nodeComments are the comments around a key/value pair, for the emitted
// field.
func nodeComments(f field) []string {
	return comments(f.key.HeadComment, f.key.LineComment, f.val.LineComment)
}

func (c *conv) intVal(f field, path string) (int, bool) {
	if f.val.Kind != yaml.ScalarNode || f.val.Tag != "!!int" {
		c.errorf(f.val, path, "%s must be an integer, not %q", path, f.val.Value)
		return 0, false
	}
	n, err := strconv.Atoi(f.val.Value)
	if err != nil {
		c.errorf(f.val, path, "%s: %v", path, err)
		return 0, false
	}
	return n, true
}

func (c *conv) topLevel(w *workload, top map[string]field) {
	gpu, ok := top["gpu"]
	if !ok {
		c.errorf(nil, "gpu", "gpu is required (perf-eval refused a workload without it)")
	} else if gpu.val.Kind != yaml.ScalarNode || gpu.val.Value == "" {
		c.errorf(gpu.val, "gpu", "gpu must be a profile name")
	} else {
		w.add(nodeComments(gpu), "profile: "+quote(gpu.val.Value))
		w.profile = gpu.val.Value
		c.profile = gpu.val.Value
	}

	nodes, numGPUs, gpn := 1, 1, 0
	var nodesF, numF, gpnF *field
	// count reads a GPU count given as key: an integer ≥ 1 sets *n and
	// *at; any other value is refused, and w.gpus will not be the user's.
	count := func(key string, n *int, at **field) {
		f, ok := top[key]
		if !ok {
			return
		}
		v, ok := c.intVal(f, key)
		if ok && v >= 1 {
			*n, *at = v, &f
			return
		}
		if ok { // else intVal reported it
			c.errorf(f.val, key, "%s must be ≥ 1", key)
		}
		w.gpusRefused = true
	}
	count("num_nodes", &nodes, &nodesF)
	count("num_gpus", &numGPUs, &numF)
	count("gpus_per_node", &gpn, &gpnF)
	switch {
	case gpn > 0:
		if numF != nil && numGPUs != nodes*gpn {
			c.warnf(numF.val, "num_gpus", "num_gpus %d is not num_nodes × gpus_per_node = %d × %d; imported nodes × gpus_per_node", numGPUs, nodes, gpn)
		}
	case numGPUs%nodes != 0 && numF == nil:
		// num_gpus absent is perf-eval's 1 (FuzzPerfEval: this read a nil
		// field and panicked).
		c.errorf(nodesF.val, "num_nodes", "num_nodes is %d but num_gpus is not given (perf-eval's default is 1 GPU), which does not divide into %d nodes; set num_gpus or gpus_per_node", nodes, nodes)
	case numGPUs%nodes != 0:
		c.errorf(numF.val, "num_gpus", "num_gpus %d does not divide into %d nodes; set gpus_per_node", numGPUs, nodes)
	default:
		gpn = numGPUs / nodes
	}
	var cs []string
	if _, pd := top["serving"]; pd {
		// The roles decide nodes and GPUs per node (serving below).
		w.gpus = numGPUs
		w.gpusAt = numF
		w.shapeAt = len(w.lines)
		goto rest
	}
	if nodesF != nil {
		cs = append(cs, nodeComments(*nodesF)...)
	}
	if nodes != 1 || nodesF != nil {
		w.add(cs, fmt.Sprintf("nodes: %d", nodes))
		cs = nil
	}
	if numF != nil {
		cs = append(cs, nodeComments(*numF)...)
	}
	if gpnF != nil {
		cs = append(cs, nodeComments(*gpnF)...)
	}
	w.add(cs, fmt.Sprintf("gpus_per_node: %d", gpn))
	w.nodes = nodes
	w.gpus = nodes * gpn
	w.gpusAt = numF
	if w.gpusAt == nil {
		w.gpusAt = gpnF
	}

rest:
	if f, ok := top["timeout_in_minutes"]; ok {
		if n, ok := c.intVal(f, "timeout_in_minutes"); ok {
			w.add(nodeComments(f), fmt.Sprintf("timeout_in_minutes: %d", n))
		}
	}
	if f, ok := top["nightly"]; ok {
		// perf-eval selected nightly only when it was identical to True.
		on := f.val.Tag == "!!bool" && isTrue(f.val.Value)
		if f.val.Tag != "!!bool" {
			c.warnf(f.val, "nightly", "nightly is %q, not a boolean: perf-eval did not select it nightly, so nightly: false", f.val.Value)
		}
		if on || len(nodeComments(f)) > 0 {
			w.add(nodeComments(f), fmt.Sprintf("nightly: %v", on))
		}
	}
	if f, ok := top["bench_only"]; ok {
		// perf-eval: truthy 1/true/yes, compared case-insensitively.
		v := strings.ToLower(f.val.Value)
		on := v == "1" || v == "true" || v == "yes"
		if on || len(nodeComments(f)) > 0 {
			w.add(nodeComments(f), fmt.Sprintf("bench_only: %v", on))
		}
	}
}

func isTrue(s string) bool {
	switch s {
	case "true", "True", "TRUE":
		return true
	}
	return false
}

func quote(s string) string { return literal.String.Quote(s) }

// label renders a CUE field label: bare when it is a plain identifier.
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

func label(s string) string {
	switch s {
	case "if", "for", "in", "let", "true", "false", "null", "import", "package", "div", "mod", "quo", "rem":
		return quote(s)
	}
	if identRE.MatchString(s) {
		return s
	}
	return quote(s)
}

// value renders a YAML value as a CUE expression.
func (c *conv) value(n *yaml.Node, path string) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		fs, _ := c.fields(n, path)
		if len(fs) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{\n")
		for _, f := range fs {
			for _, cm := range nodeComments(f) {
				b.WriteString("// " + cm + "\n")
			}
			b.WriteString(label(f.key.Value) + ": " + c.value(f.val, join(path, f.key.Value)) + "\n")
		}
		b.WriteString("}")
		return b.String()
	case yaml.SequenceNode:
		var parts []string
		for _, e := range n.Content {
			parts = append(parts, c.value(e, path))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int":
			if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return strconv.FormatInt(v, 10)
			}
			var v int64
			if err := n.Decode(&v); err == nil {
				return strconv.FormatInt(v, 10)
			}
		case "!!float":
			var v float64
			if err := n.Decode(&v); err == nil {
				s := strconv.FormatFloat(v, 'g', -1, 64)
				if !strings.ContainsAny(s, ".eEn") {
					s += ".0"
				}
				return s
			}
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err == nil {
				return strconv.FormatBool(v)
			}
		case "!!null":
			return "null"
		}
		return quote(n.Value)
	}
	c.errorf(n, path, "unsupported YAML value")
	return "_"
}

// yamlErrorAt places a YAML syntax error: yaml.v3 says "yaml: line N: msg"
// and no column, so the column is where line N's text starts (the parser
// stopped on that line).
func yamlErrorAt(err error, data []byte) (line, col int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, 0, msg
	}
	num, after, ok := strings.Cut(rest, ": ")
	n, convErr := strconv.Atoi(num)
	if !ok || convErr != nil || n < 1 {
		return 0, 0, msg
	}
	// Lines as YAML breaks them (a lone \r too).
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data)), "\n")
	col = 1
	if n <= len(lines) {
		col += len(lines[n-1]) - len(strings.TrimLeft(lines[n-1], " \t"))
	}
	return n, col, after
}
