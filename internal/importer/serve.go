package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// SplitServeArgs splits serve_args the way perf-eval's run.sh did: the
// string was expanded unquoted after `vllm serve <model>`, so bash split
// it on the default IFS (space, tab, newline), with no quote handling.
func SplitServeArgs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

type flagKind int

const (
	kInt flagKind = iota
	kStr
	kBool
	kNoBool // --no-<flag>: sets the field false
	kFloat
	kMaxLen
	kJSON
)

type typedFlag struct {
	field string
	kind  flagKind
}

// serveFlags are the vllm serve options with a typed #Serve field, by
// dashed long name.
var serveFlags = map[string]typedFlag{
	"tensor-parallel-size":     {"tensor_parallel_size", kInt},
	"data-parallel-size":       {"data_parallel_size", kInt},
	"pipeline-parallel-size":   {"pipeline_parallel_size", kInt},
	"enable-expert-parallel":   {"enable_expert_parallel", kBool},
	"kv-cache-dtype":           {"kv_cache_dtype", kStr},
	"max-model-len":            {"max_model_len", kMaxLen},
	"max-num-seqs":             {"max_num_seqs", kInt},
	"max-num-batched-tokens":   {"max_num_batched_tokens", kInt},
	"gpu-memory-utilization":   {"gpu_memory_utilization", kFloat},
	"block-size":               {"block_size", kInt},
	"enable-prefix-caching":    {"enable_prefix_caching", kBool},
	"no-enable-prefix-caching": {"enable_prefix_caching", kNoBool},
	"trust-remote-code":        {"trust_remote_code", kBool},
	"tokenizer-mode":           {"tokenizer_mode", kStr},
	"tool-call-parser":         {"tool_call_parser", kStr},
	"reasoning-parser":         {"reasoning_parser", kStr},
	"enable-auto-tool-choice":  {"enable_auto_tool_choice", kBool},
	"language-model-only":      {"language_model_only", kBool},
	"moe-backend":              {"moe_backend", kStr},
	"speculative-config":       {"speculative_config", kJSON},
	"compilation-config":       {"compilation_config", kJSON},
	"attention-config":         {"attention_config", kJSON},
	"kernel-config":            {"kernel_config", kJSON},
}

// shortFlags are vLLM's single-dash aliases of typed options.
var shortFlags = map[string]string{
	"tp": "tensor-parallel-size",
	"dp": "data-parallel-size",
	"pp": "pipeline-parallel-size",
	"cc": "compilation-config",
	"ac": "attention-config",
}

var (
	sizeRE   = regexp.MustCompile(`^[1-9][0-9]*[kKmM]$`)
	negNumRE = regexp.MustCompile(`^-[0-9.]+$`)
)

// cfgNode is an ordered JSON object (a *_config option being assembled).
type cfgNode struct {
	keys []string
	kids map[string]*cfgNode
	leaf string // rendered CUE scalar/list when kids == nil
}

func (n *cfgNode) child(k string) *cfgNode {
	if n.kids == nil {
		n.kids = map[string]*cfgNode{}
	}
	if c, ok := n.kids[k]; ok {
		return c
	}
	c := &cfgNode{}
	n.keys = append(n.keys, k)
	n.kids[k] = c
	return c
}

func (n *cfgNode) render() string {
	if n.kids == nil {
		if n.leaf == "" {
			return "{}"
		}
		return n.leaf
	}
	parts := make([]string, 0, len(n.keys))
	for _, k := range n.keys {
		parts = append(parts, label(k)+": "+n.kids[k].render())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// serveState is the typed serve fields in first-appearance order, and the
// argv tokens that stay verbatim.
type serveState struct {
	order   []string
	vals    map[string]string
	configs map[string]*cfgNode
	extra   []string
	ints    map[string]int
}

func (s *serveState) set(field, v string) bool {
	if s.vals == nil {
		s.vals = map[string]string{}
	}
	_, dup := s.vals[field]
	if !dup {
		s.order = append(s.order, field)
	}
	s.vals[field] = v
	return dup
}

// serveArgs maps word-split serve_args onto typed serve fields; n is the
// serve_args node, for positions.
func (c *conv) serveArgs(n *yaml.Node) *serveState {
	return c.serveTokens(n, "vllm.serve_args", SplitServeArgs(n.Value))
}

// serveTokens maps argv tokens onto typed serve fields; n and path name
// where they came from, for findings.
func (c *conv) serveTokens(n *yaml.Node, path string, toks []string) *serveState {
	s := &serveState{configs: map[string]*cfgNode{}, ints: map[string]int{}}
	isFlag := func(t string) bool { return strings.HasPrefix(t, "-") && len(t) > 1 && !negNumRE.MatchString(t) }
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if !isFlag(tok) {
			s.extra = append(s.extra, tok)
			continue
		}
		body, value, hasEq := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		long := strings.HasPrefix(tok, "--")
		base, dotted, _ := strings.Cut(body, ".")
		if long {
			base = strings.ReplaceAll(base, "_", "-")
		} else if l, ok := shortFlags[base]; ok {
			base = l
		} else {
			base = "" // an unknown short option: verbatim
		}
		tf, known := serveFlags[base]
		if !known || (dotted != "" && tf.kind != kJSON) {
			s.extra = append(s.extra, tok)
			continue
		}
		if tf.kind == kBool || tf.kind == kNoBool {
			if hasEq {
				c.warnf(n, path, "%s: a boolean flag with a value is kept verbatim in serve.extra_args", tok)
				s.extra = append(s.extra, tok)
				continue
			}
			v := "true"
			if tf.kind == kNoBool {
				v = "false"
			}
			if s.set(tf.field, v) {
				c.warnf(n, path, "%s given more than once; vLLM keeps the last", tok)
			}
			continue
		}
		// A value-taking option: the `=` form or the next token.
		consumed := []string{tok}
		if !hasEq {
			if i+1 >= len(toks) || isFlag(toks[i+1]) {
				c.warnf(n, path, "%s has no value; kept verbatim in serve.extra_args (vLLM will refuse it)", tok)
				s.extra = append(s.extra, tok)
				continue
			}
			i++
			value = toks[i]
			consumed = append(consumed, value)
		}
		verbatim := func(format string, args ...any) {
			c.warnf(n, path, "%s: "+format+"; kept verbatim in serve.extra_args", append([]any{strings.Join(consumed, " ")}, args...)...)
			s.extra = append(s.extra, consumed...)
		}
		switch tf.kind {
		case kInt:
			v, err := strconv.Atoi(value)
			if err != nil || v < 1 {
				verbatim("not a positive integer")
				continue
			}
			if s.set(tf.field, strconv.Itoa(v)) {
				c.warnf(n, path, "--%s given more than once; vLLM keeps the last (%d)", base, v)
			}
			s.ints[tf.field] = v
		case kStr:
			if s.set(tf.field, quote(value)) {
				c.warnf(n, path, "--%s given more than once; vLLM keeps the last (%s)", base, value)
			}
		case kFloat:
			v, err := strconv.ParseFloat(value, 64)
			if err != nil || v <= 0 || v > 1 {
				verbatim("not a fraction in (0, 1]")
				continue
			}
			s.set(tf.field, value)
		case kMaxLen:
			switch v, err := strconv.Atoi(value); {
			case err == nil && v >= 1:
				s.set(tf.field, strconv.Itoa(v))
			case value == "auto" || sizeRE.MatchString(value):
				s.set(tf.field, quote(value))
			default:
				verbatim("not a token count, size (32k) or auto")
				continue
			}
		case kJSON:
			cfg := s.configs[tf.field]
			if dotted == "" {
				node, err := jsonObject(value)
				if err != nil {
					verbatim("not a JSON object (%v); perf-eval word-split serve_args, so JSON with spaces breaks into several arguments", err)
					continue
				}
				if cfg != nil {
					c.warnf(n, path, "--%s given more than once; the later JSON replaces the earlier", base)
				}
				cfg = c.cfgFromYAML(node, path)
				s.configs[tf.field] = cfg
				s.set(tf.field, "")
				continue
			}
			if cfg == nil {
				cfg = &cfgNode{}
				s.configs[tf.field] = cfg
				s.set(tf.field, "")
			}
			t := cfg
			for _, k := range strings.Split(dotted, ".") {
				if t.kids == nil && t.leaf != "" {
					t.leaf = ""
				}
				t = t.child(k)
			}
			if t.kids != nil || t.leaf != "" {
				c.warnf(n, path, "%s sets %s again; vLLM keeps the last", tok, dotted)
				t.kids, t.keys = nil, nil
			}
			t.leaf = dottedValue(value)
		}
	}
	return s
}

// jsonObject checks value is one JSON object and returns it as an ordered
// YAML node (JSON is YAML; yaml.v3 keeps the key order).
func jsonObject(value string) (*yaml.Node, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(value), &m); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("cannot read it in order: %v", err)
	}
	return doc.Content[0], nil
}

func (c *conv) cfgFromYAML(n *yaml.Node, path string) *cfgNode {
	out := &cfgNode{}
	if n.Kind != yaml.MappingNode {
		out.leaf = c.value(n, path)
		return out
	}
	out.kids = map[string]*cfgNode{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if _, dup := out.kids[k]; !dup {
			out.keys = append(out.keys, k)
		}
		out.kids[k] = c.cfgFromYAML(n.Content[i+1], path)
	}
	return out
}

// dottedValue is how vLLM reads v in --x.key=v: Python True/False, JSON
// numbers and literals, else a string.
func dottedValue(v string) string {
	switch v {
	case "True", "true":
		return "true"
	case "False", "false":
		return "false"
	case "None", "null":
		return "null"
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXnN") {
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	}
	var j any
	if (strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || strings.HasPrefix(v, `"`)) && json.Unmarshal([]byte(v), &j) == nil {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(v), &doc) == nil && len(doc.Content) > 0 {
			return (&conv{}).value(doc.Content[0], "")
		}
	}
	return quote(v)
}

// lines renders the typed fields and extra_args as the lines of a serve
// block.
func (s *serveState) lines() []string {
	var lines []string
	for _, fld := range s.order {
		v := s.vals[fld]
		if cfg, ok := s.configs[fld]; ok {
			v = cfg.render()
		}
		lines = append(lines, label(fld)+": "+v)
	}
	if len(s.extra) > 0 {
		q := make([]string, len(s.extra))
		for i, t := range s.extra {
			q[i] = quote(t)
		}
		lines = append(lines, "extra_args: ["+strings.Join(q, ", ")+"]")
	}
	return lines
}
