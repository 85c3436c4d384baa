// Package check holds wlc's Go rules over decoded workloads and profiles:
// the ones CUE cannot express (they compare list entries or two roles,
// read argv tokens through the engines' option tables, check every string
// a generated script will carry, or only warn). Each rule is a pure
// function of decoded values (the schema's Go mirror, the vLLM flag
// catalogs, the export-time overrides) that returns its findings by field
// path; internal/load places each at the user's file:line:col, as it does
// the backends' Vetter findings.
//
// Every constraint the design asks for of a single value or between
// fields (NVFP4 needs Blackwell, TP×DP = GPUs×nodes, …) stays in the CUE
// schema, where plain `cue vet` enforces it; these rules are the rest.
// The package evaluates no CUE and reads no file (deps_test.go).
package check

import (
	"fmt"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// Diagnostic is one finding of a rule.
type Diagnostic struct {
	// Path is the field's CUE path relative to the workload or profile
	// (env.A, serve.extra_args[2], "vllm_bench.configs[0].args.\"x y\"");
	// "" is the workload or profile itself.
	Path     string
	Severity diag.Severity
	Message  string
	// Value marks a finding on a string's value (the value rules): a
	// schema rule may have refused the same value already, and then the
	// loader reports only that one.
	Value bool
}

// Workload is a decoded workload and what the rules need to know of how
// it was written, which the decoded value does not say.
type Workload struct {
	schema.Workload
	// Own is the index of the first serve.extra_args entry the workload
	// wrote: a recipe's argv comes first and was checked where derived.
	Own int
	// Decoded says the whole workload decoded (it passed the schema);
	// otherwise only the fields that decode alone are set, and ArgKeys
	// holds the keys of each vllm_bench config's args, SweepArgs the
	// sweep's args (a value that does not decode alone as true).
	Decoded   bool
	ArgKeys   [][]string
	SweepArgs map[string]any
	// ServeWritten are the serve fields the user wrote, in order (serve
	// always exists, with vLLM's defaults): on an SGLang server each is
	// an option for the other engine.
	ServeWritten []string
}

// Env is what the rules read beyond the workload.
type Env struct {
	Profiles map[string]schema.Profile
	Hardware map[string]schema.Hardware
	// VLLMFlags are the flag catalogs a vLLM workload's argv is checked
	// against, the catalog of the image it runs (nil: not checked).
	VLLMFlags *vllmflags.Set
	// Overrides are the export-time image overrides: they decide the
	// image, hence the catalog.
	Overrides plan.Overrides
}

// findings collects a rule's findings in the order they are made.
type findings []Diagnostic

func (fs *findings) errorf(path, format string, args ...any) {
	*fs = append(*fs, Diagnostic{Path: path, Severity: diag.Error, Message: fmt.Sprintf(format, args...)})
}

func (fs *findings) warnf(path, format string, args ...any) {
	*fs = append(*fs, Diagnostic{Path: path, Severity: diag.Warning, Message: fmt.Sprintf(format, args...)})
}

// Label writes a name as a CUE path element: as it is when it is an
// identifier, else quoted.
func Label(s string) string {
	if isIdent(s) {
		return s
	}
	return fmt.Sprintf("%q", s)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || r == '#' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}
