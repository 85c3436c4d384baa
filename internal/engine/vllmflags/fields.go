package vllmflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

// A `vllm serve` option can be written as a field of a workload's serve
// block, named as the option in snake_case: enable_chunked_prefill: true is
// --enable-chunked-prefill. The release's catalog declares what the field
// may hold and how it renders: RenderField is that one reading, used by
// vet to check the field and by the loader to render it.

// OptionOf is the option a serve field names: --enable-chunked-prefill
// for enable_chunked_prefill.
func OptionOf(field string) string { return "--" + strings.ReplaceAll(field, "_", "-") }

// FieldOf is the serve field that names option opt.
func FieldOf(opt string) string {
	return strings.ReplaceAll(strings.TrimPrefix(opt, "--"), "-", "_")
}

// RenderField renders the serve field name set to v (a decoded CUE value:
// bool, string, int64, float64, []any or map[string]any) as the argv of
// the option it names in this release, and checks it the way CheckServe
// checks argv (choices, types, a JSON config's keys). A switch set to
// false renders nothing (argparse's default); a --x/--no-x option renders
// its --no- form. The error says what is wrong and what would fix it.
func (c *Catalog) RenderField(name string, v any) ([]string, error) {
	opt := OptionOf(name)
	f, ok := c.serve[opt]
	switch {
	case !ok:
		msg := fmt.Sprintf("%s is no option of vllm serve in vLLM %s (there is no %s)", name, c.Label, opt)
		if rels := releasesWith(opt); len(rels) > 0 {
			msg += fmt.Sprintf("; vLLM %s %s it: run an image of such a release, or drop the field", strings.Join(rels, ", "), map[bool]string{true: "has", false: "have"}[len(rels) == 1])
		} else if s := closest(c.serve, opt); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", FieldOf(s))
		} else {
			msg += "; check its spelling against the image's vLLM version"
		}
		return nil, fmt.Errorf("%s", msg)
	case f.Name() != opt:
		if f.Kind == vllmcatalog.Bool && opt == "--no-"+strings.TrimPrefix(f.Name(), "--") {
			return nil, fmt.Errorf("%s is the --no- form of %s; write %s: false", name, f.Name(), FieldOf(f.Name()))
		}
		return nil, fmt.Errorf("%s is an alias of %s in vLLM %s; write %s", opt, f.Name(), c.Label, FieldOf(f.Name()))
	}
	var args []string
	switch f.Kind {
	case vllmcatalog.Switch, vllmcatalog.Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s is a switch (%s takes no value): write true or false, not %s", name, opt, describe(v))
		}
		switch {
		case b:
			args = []string{opt}
		case f.Kind == vllmcatalog.Bool:
			args = []string{"--no-" + strings.TrimPrefix(opt, "--")}
		}
	case vllmcatalog.JSON, vllmcatalog.JSONOrStr:
		_, isMap := v.(map[string]any)
		_, isStr := v.(string)
		if !isMap && !(isStr && f.Kind == vllmcatalog.JSONOrStr) {
			return nil, fmt.Errorf("%s takes a JSON object (%s): write it as a struct, not %s", name, opt, describe(v))
		}
		args = []string{opt, cmdline.Token(v)}
	default:
		vals := []any{v}
		if list, isList := v.([]any); isList {
			if f.Nargs != "+" && f.Nargs != "*" {
				return nil, fmt.Errorf("%s takes one value (%s), not a list", name, opt)
			}
			vals = list
		}
		args = []string{opt}
		for _, x := range vals {
			switch x.(type) {
			case string, int64, int, float64:
			default:
				return nil, fmt.Errorf("%s takes %s (%s), not %s", name, want(f), opt, describe(x))
			}
			args = append(args, cmdline.Token(x))
		}
	}
	for _, fd := range c.CheckServe(args) {
		return nil, fmt.Errorf("%s", fd.Message)
	}
	return args, nil
}

// want names what a Value option takes, for messages.
func want(f *vllmcatalog.Flag) string {
	if len(f.Choices) > 0 {
		return "one of " + strings.Join(slices.DeleteFunc(slices.Clone(f.Choices), func(s string) bool { return s == "None" }), ", ")
	}
	switch f.Type {
	case vllmcatalog.TypeInt:
		return "an integer"
	case vllmcatalog.TypeFloat:
		return "a number"
	case vllmcatalog.TypeSize:
		return "an integer or a size such as 32k"
	case vllmcatalog.TypeSizeOrAuto:
		return "an integer, a size such as 32k, or auto"
	}
	return "a value"
}

func describe(v any) string {
	switch x := v.(type) {
	case bool:
		return fmt.Sprintf("the bool %t", x)
	case string:
		return fmt.Sprintf("the string %q", x)
	case map[string]any:
		return "a struct"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return fmt.Sprintf("the number %s", cmdline.Token(v))
}

// ServeOption is the canonical option a `vllm serve` argv token names in
// this release (aliases, abbreviations and --x_y read as vLLM's parser
// reads them); false for a token that is no option or names none.
func (c *Catalog) ServeOption(tok string) (string, bool) {
	m, ok := c.serveSpec.Resolve(tok)
	if !ok {
		return "", false
	}
	f, known := c.serve[m.Option]
	if !known {
		return "", false
	}
	return f.Name(), true
}

// releasesWith lists the built-in catalogs whose vllm serve has option
// opt as its canonical name, oldest first.
func releasesWith(opt string) []string {
	var out []string
	for _, c := range vllmcatalog.Builtin() {
		for _, f := range c.Serve {
			if f.Name() == opt {
				out = append(out, c.Label)
				break
			}
		}
	}
	return out
}
