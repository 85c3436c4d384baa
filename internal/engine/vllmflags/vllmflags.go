// Package vllmflags checks argv against the catalog of the flags a vLLM
// version accepts (`vllm serve` and `vllm bench serve`), so a flag the
// image lacks, a value outside a flag's choices or an unknown key in a JSON
// config flag is a vet error instead of a crash on a GPU host hours later
// (perf-eval build 311: --attention-config.use_trtllm_ragged_... was
// unknown to the pinned nightly; builds 314/317: the pinned nightly's
// `vllm bench serve` had no --prompt-token-ids).
//
// The catalogs are vllmcatalog's: built in, or a team's for its image.
package vllmflags

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/diag/suggest"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

// Catalog checks argv against one vLLM version's options.
type Catalog struct {
	Label string
	// StandIn, when set, says which image the catalog stands in for and
	// why (the image has no catalog of its own); findings carry it.
	StandIn string
	serve   map[string]*vllmcatalog.Flag
	bench   map[string]*vllmcatalog.Flag
	// serveSpec and benchSpec resolve tokens to the catalog's options the
	// way vLLM's parser does (aliases, abbreviations, --no-x).
	serveSpec, benchSpec *cmdline.Spec
}

// New prepares a catalog for checking.
func New(c *vllmcatalog.Catalog) *Catalog {
	return &Catalog{
		Label: c.Label,
		serve: index(c.Serve), bench: index(c.Bench),
		serveSpec: spec("vllm serve", c.Label, c.Serve), benchSpec: spec("vllm bench serve", c.Label, c.Bench),
	}
}

// spec is the catalog's options as a release of a cmdline.Spec.
func spec(cmd, label string, fs []*vllmcatalog.Flag) *cmdline.Spec {
	rel := cmdline.Release{Label: label}
	for _, f := range fs {
		rel.Actions = append(rel.Actions, f.Options)
	}
	return &cmdline.Spec{Command: cmd, Releases: []cmdline.Release{rel}}
}

func index(fs []*vllmcatalog.Flag) map[string]*vllmcatalog.Flag {
	m := map[string]*vllmcatalog.Flag{}
	for _, f := range fs {
		for _, n := range f.Options {
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
func (c *Catalog) CheckServe(args []string) []Finding { return c.check(c.serveSpec, c.serve, args) }

// CheckBench checks `vllm bench serve` options.
func (c *Catalog) CheckBench(args []string) []Finding {
	return c.check(c.benchSpec, c.bench, args)
}

func (c *Catalog) check(sp *cmdline.Spec, flags map[string]*vllmcatalog.Flag, args []string) []Finding {
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
		fname := ""
		if ok {
			fname = f.Name()
		}
		if !ok {
			msg := fmt.Sprintf("%s in vLLM %s has no option %s", cmd, c.Label, name)
			if s := closest(flags, norm); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			out = append(out, Finding{i, msg + " (check the image's vLLM version, or drop the flag)"})
			continue
		}
		if f.Deprecated {
			out = append(out, Finding{i, fmt.Sprintf("%s %s is deprecated in vLLM %s", cmd, fname, c.Label)})
		}
		if sub != "" {
			if f.Kind != vllmcatalog.JSON && f.Kind != vllmcatalog.JSONOrStr {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no dotted keys (%s)", cmd, fname, tok)})
			} else if f.Keys != nil && !hasField(f, sub) {
				out = append(out, Finding{i, unknownKey(cmd, c.Label, f, sub)})
			}
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		switch f.Kind {
		case vllmcatalog.Switch:
			if hasValue {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no value", cmd, fname)})
			}
			continue
		case vllmcatalog.Bool:
			// BooleanOptionalAction: --x / --no-x, no value.
			if hasValue {
				out = append(out, Finding{i, fmt.Sprintf("%s %s takes no value (write %s or --no-%s)", cmd, fname, fname, strings.TrimPrefix(fname, "--"))})
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
				out = append(out, Finding{i, fmt.Sprintf("%s %s needs a value", cmd, fname)})
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

func checkValue(cmd, label string, f *vllmcatalog.Flag, v string) string {
	if len(f.Choices) > 0 && !slices.Contains(f.Choices, v) {
		return fmt.Sprintf("%s %s %s: vLLM %s accepts %s", cmd, f.Name(), v, label, strings.Join(f.Choices, ", "))
	}
	if want := typeError(f, v); want != "" && len(f.Choices) == 0 {
		return fmt.Sprintf("%s %s %s: vLLM %s takes %s", cmd, f.Name(), v, label, want)
	}
	if f.Kind == vllmcatalog.JSON || (f.Kind == vllmcatalog.JSONOrStr && strings.HasPrefix(strings.TrimSpace(v), "{")) {
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			if f.Kind == vllmcatalog.JSON {
				return fmt.Sprintf("%s %s: value is not a JSON object: %v", cmd, f.Name(), err)
			}
			return ""
		}
		if f.Keys != nil {
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

func unknownKey(cmd, label string, f *vllmcatalog.Flag, key string) string {
	msg := fmt.Sprintf("%s %s has no key %q in vLLM %s", cmd, f.Name(), key, label)
	if s := suggest.Closest(f.Keys, key); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func hasField(f *vllmcatalog.Flag, key string) bool { return slices.Contains(f.Keys, key) }

func closest(flags map[string]*vllmcatalog.Flag, name string) string {
	var names []string
	for n := range flags {
		if strings.HasPrefix(n, "--") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return suggest.Closest(names, name)
}

// typeError says what f's argparse type wants when v is not that, as
// vLLM parses it (int(), float(), human_readable_int); "" when v is fine.
func typeError(f *vllmcatalog.Flag, v string) string {
	switch f.Type {
	case vllmcatalog.TypeInt:
		if _, err := strconv.Atoi(v); err != nil {
			return "an integer"
		}
	case vllmcatalog.TypeFloat:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "a number"
		}
	case vllmcatalog.TypeSize:
		if _, err := cmdline.HumanInt(v); err != nil {
			return "an integer or a size such as 32k"
		}
	case vllmcatalog.TypeSizeOrAuto:
		if _, err := cmdline.HumanInt(v); err != nil && v != "auto" {
			return "an integer, a size such as 32k, or auto"
		}
	}
	return ""
}
