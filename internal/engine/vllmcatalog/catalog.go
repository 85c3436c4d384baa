// Package vllmcatalog is what each known vLLM version's `vllm serve` and
// `vllm bench serve` accept: option strings, whether an option takes a
// value, its choices and the keys of its JSON config. The catalogs of the
// releases wlc knows are built in (catalogs.txt, generated from vLLM's
// argparse definitions, see TestCatalogsFile); a team adds one for its own
// image from the image's --help output (ParseHelp).
package vllmcatalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Kind is how an option takes its value.
type Kind string

const (
	// Value takes one value (or several, see Flag.Nargs).
	Value Kind = "value"
	// Switch is store_true/store_false: no value, no --no- form.
	Switch Kind = "flag"
	// Bool is argparse.BooleanOptionalAction: --x and --no-x, no value.
	Bool Kind = "bool"
	// JSON takes a JSON object (dotted --x.key=value too).
	JSON Kind = "json"
	// JSONOrStr takes a JSON object or a plain string.
	JSONOrStr Kind = "json_or_str"
)

// Flag is one argparse action of a vLLM command.
type Flag struct {
	// Options are its option strings: the canonical long name first, then
	// aliases and the --no- form of a Bool.
	Options []string `json:"-"`
	Kind    Kind     `json:"k,omitempty"`
	// Nargs is argparse's nargs ("", "?", "+", "*").
	Nargs      string   `json:"n,omitempty"`
	Choices    []string `json:"c,omitempty"`
	Deprecated bool     `json:"d,omitempty"`
	// Keys, when set, are the only keys the JSON config accepts (pydantic
	// extra="forbid"); nil accepts any key.
	Keys []string `json:"keys,omitempty"`
	// Type is what a Value option's argparse type accepts: TypeInt,
	// TypeFloat, TypeSize or TypeSizeOrAuto; "" is any string.
	Type string `json:"t,omitempty"`
}

// The types of Value options that accept less than any string.
const (
	TypeInt   = "int"
	TypeFloat = "float"
	// TypeSize is vLLM's human_readable_int: an integer or a size such as
	// 32k (k = 1000, K = 1024; m/M, g/G, t/T alike).
	TypeSize = "size"
	// TypeSizeOrAuto is a TypeSize, or "auto" (also -1).
	TypeSizeOrAuto = "size_or_auto"
)

// Name is the canonical long option.
func (f *Flag) Name() string { return f.Options[0] }

// Catalog is the options of one vLLM version.
type Catalog struct {
	// Label names the version: a release tag (v0.13.0), main-<date> for
	// an upstream snapshot, or a team's name for its image.
	Label string
	// Commit is the vLLM commit the catalog was read from, when known.
	Commit string
	Serve  []*Flag
	Bench  []*Flag
}

// Release reports whether the catalog is of a vLLM release tag.
func (c *Catalog) Release() bool { return releaseTag.MatchString(c.Label) }

//go:embed catalogs.txt
var builtinText string

var builtin = sync.OnceValue(func() []*Catalog {
	cs, err := Parse(builtinText)
	if err != nil {
		panic("vllmcatalog: the built-in catalogs.txt is corrupt: " + err.Error())
	}
	return cs
})

// Builtin returns the catalogs built into wlc, oldest first. Callers must
// not modify them.
func Builtin() []*Catalog { return builtin() }

// The compact text form of a list of catalogs, one argparse action a line:
//
//	releases <label>...
//	commits <commit>...
//	<serve|bench> <one digit per release: 1 = present> <option strings...>[\t<attributes as JSON>]
//
// An action whose attributes changed between releases has one line per
// variant. Lines starting with # are comments.

// Format writes catalogs in the compact text form, header first.
func Format(header string, cs []*Catalog) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString("# " + l + "\n")
	}
	b.WriteString("releases")
	for _, c := range cs {
		b.WriteString(" " + c.Label)
	}
	b.WriteString("\ncommits")
	for _, c := range cs {
		commit := c.Commit
		if commit == "" {
			commit = "-"
		}
		b.WriteString(" " + commit)
	}
	b.WriteString("\n")
	for _, cmd := range []string{"serve", "bench"} {
		present := map[string][]bool{}
		var keys []string
		for i, c := range cs {
			for _, f := range c.flags(cmd) {
				key := strings.Join(f.Options, " ")
				attrs, _ := json.Marshal(f)
				if s := string(attrs); s != "{}" {
					key += "\t" + s
				}
				if present[key] == nil {
					present[key] = make([]bool, len(cs))
					keys = append(keys, key)
				}
				present[key][i] = true
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			bits := make([]byte, len(cs))
			for i, p := range present[k] {
				bits[i] = "01"[btoi(p)]
			}
			fmt.Fprintf(&b, "%s %s %s\n", cmd, bits, k)
		}
	}
	return b.String()
}

// Parse reads the compact text form.
func Parse(text string) ([]*Catalog, error) {
	var cs []*Catalog
	for n, line := range strings.Split(text, "\n") {
		opts, attrs, _ := strings.Cut(line, "\t")
		f := strings.Fields(opts)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "releases":
			for _, label := range f[1:] {
				cs = append(cs, &Catalog{Label: label})
			}
		case f[0] == "commits":
			for i, commit := range f[1:] {
				if i < len(cs) && commit != "-" {
					cs[i].Commit = commit
				}
			}
		case (f[0] == "serve" || f[0] == "bench") && len(f) > 2 && len(f[1]) == len(cs):
			fl := &Flag{Kind: Value}
			if attrs != "" {
				if err := json.Unmarshal([]byte(attrs), fl); err != nil {
					return nil, fmt.Errorf("line %d: %v", n+1, err)
				}
				if fl.Kind == "" {
					fl.Kind = Value
				}
			}
			fl.Options = f[2:]
			for i, present := range f[1] {
				if present == '1' {
					if f[0] == "serve" {
						cs[i].Serve = append(cs[i].Serve, fl)
					} else {
						cs[i].Bench = append(cs[i].Bench, fl)
					}
				}
			}
		default:
			return nil, fmt.Errorf("line %d: want `serve|bench <%d digits> --option...`, got %q", n+1, len(cs), line)
		}
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("no releases line")
	}
	return cs, nil
}

func (c *Catalog) flags(cmd string) []*Flag {
	if cmd == "serve" {
		return c.Serve
	}
	return c.Bench
}

// MarshalJSON leaves the default kind out of the compact form.
func (f *Flag) MarshalJSON() ([]byte, error) {
	type plain Flag
	p := plain(*f)
	if p.Kind == Value {
		p.Kind = ""
	}
	return json.Marshal(p)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
