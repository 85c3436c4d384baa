// Package vllmflags checks argv against a catalog of the flags a vLLM
// version accepts (`vllm serve` and `vllm bench serve`), so a flag the
// pinned image lacks, a value outside a flag's choices or an unknown key in
// a JSON config flag is a vet error instead of a crash on a GPU host hours
// later (perf-eval build 311: --attention-config.use_trtllm_ragged_... was
// unknown to the pinned nightly).
//
// The catalog format is the one of corpus/vllm-flags (a JSON file per vLLM
// revision, extracted statically from vLLM's argparse definitions); wlc
// reads it at run time and ships none.
package vllmflags

import (
	"encoding/json"
	"fmt"
	"github.com/wlcdev/wlc/internal/cmdline"
	"os"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/internal/suggest"
)

// Flag is one option of a vLLM command.
type Flag struct {
	Flag          string      `json:"flag"`
	Aliases       []string    `json:"aliases"`
	Type          string      `json:"type"`
	Choices       []any       `json:"choices"`
	BoolPair      bool        `json:"bool_pair"`
	Nargs         string      `json:"nargs"`
	Deprecated    any         `json:"deprecated"`
	JSONExtraKeys string      `json:"json_extra_keys"`
	JSONFields    []JSONField `json:"json_fields"`
}

// JSONField is a key of a JSON config flag (e.g. --attention-config).
type JSONField struct {
	Name    string `json:"name"`
	Choices []any  `json:"choices"`
}

// Catalog is the flag set of one vLLM revision.
type Catalog struct {
	Label string
	Serve map[string]*Flag
	Bench map[string]*Flag
	// serve and bench resolve tokens to the catalog's options the way
	// vLLM's parser does (aliases, abbreviations, --no-x).
	serve, bench *cmdline.Spec
}

type file struct {
	Meta struct {
		Label string `json:"label"`
	} `json:"meta"`
	Serve []*Flag `json:"serve"`
	Bench []*Flag `json:"bench_serve"`
}

// Load reads a catalog file.
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a vLLM flag catalog: %w", path, err)
	}
	if len(f.Serve) == 0 {
		return nil, fmt.Errorf("%s: not a vLLM flag catalog: no serve flags", path)
	}
	c := &Catalog{Label: f.Meta.Label, Serve: index(f.Serve), Bench: index(f.Bench)}
	if c.Label == "" {
		c.Label = path
	}
	c.serve, c.bench = spec("vllm serve", c.Label, f.Serve), spec("vllm bench serve", c.Label, f.Bench)
	return c, nil
}

// spec is the catalog's options as a release of a cmdline.Spec.
func spec(cmd, label string, fs []*Flag) *cmdline.Spec {
	rel := cmdline.Release{Label: label}
	for _, f := range fs {
		act := append([]string{f.Flag}, f.Aliases...)
		if f.BoolPair {
			act = append(act, "--no-"+strings.TrimPrefix(f.Flag, "--"))
		}
		rel.Actions = append(rel.Actions, act)
	}
	return &cmdline.Spec{Command: cmd, Releases: []cmdline.Release{rel}}
}

func index(fs []*Flag) map[string]*Flag {
	m := map[string]*Flag{}
	for _, f := range fs {
		for _, n := range append([]string{f.Flag}, f.Aliases...) {
			m[n] = f
		}
	}
	return m
}

// Finding is one problem in an argv; Index is the token it concerns.
type Finding struct {
	Index   int
	Message string
}

// CheckServe checks `vllm serve` options (the tokens after the model).
func (c *Catalog) CheckServe(args []string) []Finding { return c.check(c.serve, c.Serve, args) }

// CheckBench checks `vllm bench serve` options.
func (c *Catalog) CheckBench(args []string) []Finding {
	return c.check(c.bench, c.Bench, args)
}

func (c *Catalog) check(sp *cmdline.Spec, flags map[string]*Flag, args []string) []Finding {
	cmd := sp.Command
	var out []Finding
	for i := 0; i < len(args); i++ {
		tok := args[i]
		m, isOption := sp.Resolve(tok)
		if !isOption {
			continue
		}
		name, _, _ := strings.Cut(tok, "=")
		value, hasValue := m.Value, m.HasValue
		norm, sub := m.Option, m.Key
		f, ok := flags[norm]
		if ok && m.Negated {
			continue
		}
		if !ok {
			msg := fmt.Sprintf("%s in vLLM %s has no option %s", cmd, c.Label, name)
			if s := closest(flags, norm); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			out = append(out, Finding{i, msg + " (check the image's vLLM version, or drop the flag)"})
			continue
		}
		if f.Deprecated != nil && f.Deprecated != false {
			out = append(out, Finding{i, fmt.Sprintf("%s %s is deprecated in vLLM %s", cmd, f.Flag, c.Label)})
		}
		if sub != "" {
			if f.Type != "json" && f.Type != "json_or_str" {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no dotted keys (%s)", cmd, f.Flag, tok)})
			} else if f.JSONExtraKeys == "forbid" && !hasField(f, sub) {
				out = append(out, Finding{i, unknownKey(cmd, c.Label, f, sub)})
			}
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		switch f.Type {
		case "flag":
			if hasValue {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no value", cmd, f.Flag)})
			}
			continue
		case "bool":
			// BooleanOptionalAction: --x / --no-x, no value.
			if hasValue {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no value (write %s or --no-%s)", cmd, f.Flag, f.Flag, strings.TrimPrefix(f.Flag, "--"))})
			}
			continue
		}
		var values []string
		switch {
		case hasValue:
			values = []string{value}
		case f.Nargs == "+" || f.Nargs == "*":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				values = append(values, args[i])
			}
		case f.Nargs == "?":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				values = []string{args[i]}
			}
		default:
			if i+1 >= len(args) {
				out = append(out, Finding{i, fmt.Sprintf("%s %s needs a value", cmd, f.Flag)})
				continue
			}
			i++
			values = []string{args[i]}
		}
		for _, v := range values {
			if msg := checkValue(cmd, c.Label, f, v); msg != "" {
				out = append(out, Finding{i, msg})
			}
		}
	}
	return out
}

func checkValue(cmd, label string, f *Flag, v string) string {
	if len(f.Choices) > 0 && !inChoices(f.Choices, v) {
		return fmt.Sprintf("%s %s %s: vLLM %s accepts %s", cmd, f.Flag, v, label, choiceList(f.Choices))
	}
	if f.Type == "json" || (f.Type == "json_or_str" && strings.HasPrefix(strings.TrimSpace(v), "{")) {
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			if f.Type == "json" {
				return fmt.Sprintf("%s %s: value is not a JSON object: %v", cmd, f.Flag, err)
			}
			return ""
		}
		if f.JSONExtraKeys == "forbid" {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !hasField(f, k) {
					return unknownKey(cmd, label, f, k)
				}
			}
		}
	}
	return ""
}

func unknownKey(cmd, label string, f *Flag, key string) string {
	var names []string
	for _, jf := range f.JSONFields {
		names = append(names, jf.Name)
	}
	msg := fmt.Sprintf("%s %s has no key %q in vLLM %s", cmd, f.Flag, key, label)
	if s := suggest.Closest(names, key); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func hasField(f *Flag, key string) bool {
	for _, jf := range f.JSONFields {
		if jf.Name == key {
			return true
		}
	}
	return false
}

func inChoices(choices []any, v string) bool {
	for _, c := range choices {
		if fmt.Sprint(c) == v {
			return true
		}
	}
	return false
}

func choiceList(choices []any) string {
	var s []string
	for _, c := range choices {
		s = append(s, fmt.Sprint(c))
	}
	return strings.Join(s, ", ")
}

func closest(flags map[string]*Flag, name string) string {
	var names []string
	for n := range flags {
		if strings.HasPrefix(n, "--") {
			names = append(names, n)
		}
	}
	return suggest.Closest(names, name)
}
