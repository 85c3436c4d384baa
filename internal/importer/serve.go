package importer

import (
	"encoding/json"
	"fmt"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
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

// sizeRE is a max_model_len size #Serve keeps as written (32k).
var sizeRE = regexp.MustCompile(`^[1-9][0-9]*[kKmM]$`)

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

// serveTokens maps argv tokens onto typed serve fields the way vLLM's
// parser reads them (cmdline.VLLMServe); n and path name where they came
// from, for findings.
func (c *conv) serveTokens(n *yaml.Node, path string, toks []string) *serveState {
	s := &serveState{configs: map[string]*cfgNode{}, ints: map[string]int{}}
	p := cmdline.VLLMServe.Parse(toks)
	for ui, u := range p.Units {
		consumed := toks[u.Start:u.End]
		f := u.Match.Flag
		if !u.IsOption || f == nil || f.Field == "" {
			s.extra = append(s.extra, consumed...)
			continue
		}
		field := strings.TrimPrefix(f.Field, "serve.")
		tok, text := consumed[0], strings.Join(consumed, " ")
		verbatim := func(format string, args ...any) {
			c.warnf(n, path, "%s: "+format+"; kept verbatim in serve.extra_args", append([]any{text}, args...)...)
			s.extra = append(s.extra, consumed...)
		}
		again := func(last string) {
			c.warnf(n, path, "%s given more than once; vLLM keeps the last%s", f.Name, last)
		}
		if err := p.Errs[ui]; err != nil {
			switch {
			case f.Kind == cmdline.Bool:
				c.warnf(n, path, "%s: a boolean flag with a value is kept verbatim in serve.extra_args", text)
				s.extra = append(s.extra, consumed...)
			case !u.HasArg:
				c.warnf(n, path, "%s has no value; kept verbatim in serve.extra_args (vLLM will refuse it)", tok)
				s.extra = append(s.extra, consumed...)
			case f.Kind == cmdline.JSON:
				verbatim("not a JSON object; perf-eval word-split serve_args, so JSON with spaces breaks into several arguments")
			default:
				verbatim("%v", err)
			}
			continue
		}
		v := p.Values[f.Field]
		switch f.Kind {
		case cmdline.Bool:
			if s.set(field, strconv.FormatBool(v.(bool))) {
				c.warnf(n, path, "%s given more than once; vLLM keeps the last", tok)
			}
		case cmdline.Int, cmdline.Size:
			if v, ok := v.(int); !ok || v < 1 {
				verbatim("not a positive integer")
				continue
			}
			if s.set(field, cmdline.Token(v)) {
				again(fmt.Sprintf(" (%d)", v))
			}
			s.ints[field] = v.(int)
		case cmdline.Float:
			if v, ok := v.(float64); !ok || v <= 0 || v > 1 {
				verbatim("not a fraction in (0, 1]")
				continue
			}
			s.set(field, u.Arg)
		case cmdline.SizeOrAuto:
			switch n, isInt := v.(int); {
			case u.Arg == "auto" || sizeRE.MatchString(u.Arg):
				s.set(field, quote(u.Arg))
			case isInt && n >= 1:
				s.set(field, strconv.Itoa(n))
			default:
				verbatim("not a token count, size (32k) or auto")
				continue
			}
		case cmdline.String:
			if v == nil {
				c.warnf(n, path, "%s: None is vLLM's default; dropped", text)
				continue
			}
			if s.set(field, quote(u.Arg)) {
				again(fmt.Sprintf(" (%s)", u.Arg))
			}
		case cmdline.JSON:
			c.configArg(n, path, s, field, u)
		}
	}
	return s
}

// configArg sets a JSON option from one unit: a whole object replaces
// what came before, a dotted key sets one key; key order is kept as
// written.
func (c *conv) configArg(n *yaml.Node, path string, s *serveState, field string, u cmdline.Unit) {
	cfg := s.configs[field]
	if u.Key == "" {
		node, err := jsonObject(u.Arg)
		if err != nil {
			c.warnf(n, path, "%s %s: cannot keep the key order (%v); kept verbatim in serve.extra_args", u.Written, u.Arg, err)
			return
		}
		if cfg != nil {
			c.warnf(n, path, "%s given more than once; the later JSON replaces the earlier", u.Option)
		}
		s.configs[field] = c.cfgFromYAML(node, path)
		s.set(field, "")
		return
	}
	if cfg == nil {
		cfg = &cfgNode{}
		s.configs[field] = cfg
		s.set(field, "")
	}
	t := cfg
	for _, k := range strings.Split(u.Key, ".") {
		if t.kids == nil && t.leaf != "" {
			t.leaf = ""
		}
		t = t.child(k)
	}
	if t.kids != nil || t.leaf != "" {
		c.warnf(n, path, "%s sets %s again; vLLM keeps the last", u.Written+"."+u.Key, u.Key)
		t.kids, t.keys = nil, nil
	}
	t.leaf = cueValue(cmdline.DottedValue(u.Arg))
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

// cueValue renders a dotted key's value (cmdline.DottedValue) as CUE:
// JSON is CUE, and a float keeps its point.
func cueValue(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	}
	return cmdline.Token(v)
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
