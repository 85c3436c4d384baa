// Package sglang models how SGLang's two command lines parse their
// arguments, as perf-eval runs them: `python3 -m sglang.launch_server` (the
// server) and `python3 -m sglang.bench_serving` (the benchmark client).
// Each Table holds every option its argparse parser accepts (spellings,
// how the value is read, choices) and parses argv as argparse does
// (unambiguous prefixes of long options, `--opt=value`, nargs, refusals).
// Which options map to typed workload fields is cmdline.SGLangServe's
// declaration, whose option strings come from these tables; vet checks
// values through them, and the test double in internal/testrig/stub parses with
// them, so an option is spelled in one place.
package sglang

import (
	"fmt"
	"strings"
)

// Kind is how argparse reads an option's value.
type Kind int

const (
	Flag       Kind = iota // store_true: no value
	Value                  // one value of any text
	Int                    // one value, type=int
	Float                  // one value, type=float
	List                   // nargs '+': one or more values, up to the next option
	AnyList                // nargs '*': zero or more values
	Optional               // nargs '?': a value when the next token is not an option
	Deprecated             // DeprecatedAction: using it is an error naming the replacement
)

// Option is one option of a parser: its spellings (the first is the
// primary one), how its value is read, and its choices when argparse checks
// them.
type Option struct {
	Names   []string
	Kind    Kind
	Choices []string
}

// Name is the option's primary spelling.
func (o *Option) Name() string { return o.Names[0] }

// Table is every option one parser accepts.
type Table struct {
	// Prog is the command, for messages.
	Prog    string
	options []*Option
	byName  map[string]*Option
}

func newTable(prog, spec string, choices map[string][]string) *Table {
	t := &Table{Prog: prog, byName: map[string]*Option{}}
	kinds := map[string]Kind{"b": Flag, "v": Value, "i": Int, "f": Float, "n": List, "z": AnyList, "o": Optional, "d": Deprecated}
	for _, line := range strings.Split(spec, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		k, ok := kinds[f[len(f)-1]]
		if !ok || len(f) < 2 {
			panic(fmt.Sprintf("sglang: bad option line %q", line))
		}
		o := &Option{Names: f[:len(f)-1], Kind: k, Choices: choices[f[0]]}
		for _, n := range o.Names {
			if _, dup := t.byName[n]; dup {
				panic("sglang: option declared twice: " + n)
			}
			t.byName[n] = o
		}
		t.options = append(t.options, o)
	}
	for n := range choices {
		if t.byName[n] == nil {
			panic("sglang: choices for an undeclared option: " + n)
		}
	}
	return t
}

// Options lists every option in declaration order.
func (t *Table) Options() []*Option { return t.options }

// Exact returns the option spelled exactly name (with its dashes).
func (t *Table) Exact(name string) *Option { return t.byName[name] }

// Lookup finds the option a long-option token names the way argparse
// does: an exact spelling, else the one option it is a prefix of. An
// ambiguous prefix returns the spellings it could mean and no option.
func (t *Table) Lookup(name string) (*Option, []string) {
	if o := t.byName[name]; o != nil {
		return o, nil
	}
	if !strings.HasPrefix(name, "--") || len(name) < 3 {
		return nil, nil
	}
	var match *Option
	var cands []string
	distinct := 0
	for _, o := range t.options {
		hit := false
		for _, n := range o.Names {
			if strings.HasPrefix(n, name) {
				cands = append(cands, n)
				hit = true
			}
		}
		if hit {
			match = o
			distinct++
		}
	}
	if distinct == 1 {
		return match, nil
	}
	return nil, cands
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
