package bktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/buildkite/go-pipeline"
	"github.com/buildkite/go-pipeline/warning"
	"github.com/google/go-cmp/cmp"
)

// RoundTrip parses pipelineYAML with go-pipeline (the library the agent
// embeds, newer version), fails t on any parse error or warning, re-marshals
// the result and fails t if any step's content changed beyond go-pipeline's
// documented canonical forms (see CheckRoundTrip). It returns the parsed
// pipeline for further assertions.
func RoundTrip(t testing.TB, pipelineYAML []byte) *pipeline.Pipeline {
	t.Helper()
	p, err := CheckRoundTrip(pipelineYAML)
	if err != nil {
		t.Fatalf("go-pipeline round trip: %v", err)
	}
	return p
}

// CheckRoundTrip is RoundTrip returning an error.
//
// go-pipeline rewrites some inputs into canonical forms: `commands: [a, b]`
// becomes `command: "a\nb"`, the aliases id/identifier and name become key
// and label, plugin sources are expanded ("docker#v5" ->
// "github.com/buildkite-plugins/docker-buildkite-plugin#v5"), plugins given as
// a map become a list, a plugin's empty config becomes null and plugin-only
// steps gain `command: ""`. The input is put into those forms before
// comparing, so only real changes (a dropped field, a changed value) fail.
func CheckRoundTrip(pipelineYAML []byte) (*pipeline.Pipeline, error) {
	in, err := YAMLToJSON(pipelineYAML)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.Parse(bytes.NewReader(pipelineYAML))
	if w := warning.As(err); w != nil {
		return nil, fmt.Errorf("parsed with warnings (buildkite-agent prints these as WARN):\n%v", w)
	}
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("re-marshal: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	want, err := canonicalJSON(canonicalPipeline(in))
	if err != nil {
		return nil, err
	}
	if err := diffPipelines(want, out); err != nil {
		return nil, err
	}
	return p, nil
}

// diffPipelines compares step by step so the message names the step.
func diffPipelines(want, got any) error {
	wm, ok1 := want.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if !ok1 || !ok2 {
		if d := cmp.Diff(want, got); d != "" {
			return fmt.Errorf("pipeline changed (-input +re-marshalled):\n%s", d)
		}
		return nil
	}
	var errs []string
	diffSteps(want, "/steps", wm["steps"], gm["steps"], &errs)
	wrest, grest := without(wm, "steps"), without(gm, "steps")
	if d := cmp.Diff(wrest, grest); d != "" {
		errs = append(errs, fmt.Sprintf("top-level fields changed (-input +re-marshalled):\n%s", d))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

func diffSteps(doc any, ptr string, want, got any, errs *[]string) {
	ws, ok1 := want.([]any)
	gs, ok2 := got.([]any)
	if !ok1 || !ok2 || len(ws) != len(gs) {
		if d := cmp.Diff(want, got); d != "" {
			*errs = append(*errs, fmt.Sprintf("%s changed (-input +re-marshalled):\n%s", ptr, d))
		}
		return
	}
	for i := range ws {
		sp := fmt.Sprintf("%s/%d", ptr, i)
		wstep, _ := ws[i].(map[string]any)
		gstep, _ := gs[i].(map[string]any)
		if wstep != nil && gstep != nil && wstep["steps"] != nil {
			// A group: compare its own fields here, its steps recursively.
			diffSteps(doc, sp+"/steps", wstep["steps"], gstep["steps"], errs)
			if d := cmp.Diff(without(wstep, "steps"), without(gstep, "steps")); d != "" {
				*errs = append(*errs, fmt.Sprintf("%s changed (-input +re-marshalled):\n%s", stepName(sp, ws[i]), d))
			}
			continue
		}
		if d := cmp.Diff(ws[i], gs[i]); d != "" {
			*errs = append(*errs, fmt.Sprintf("%s changed (-input +re-marshalled):\n%s", stepName(sp, ws[i]), d))
		}
	}
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// canonicalPipeline applies go-pipeline's canonical rewrites to a generic
// pipeline document (a copy; the input is not modified).
func canonicalPipeline(doc any) any {
	m, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	out := without(m, "")
	if steps, ok := m["steps"].([]any); ok {
		out["steps"] = canonicalSteps(steps)
	}
	return out
}

func canonicalSteps(steps []any) []any {
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = canonicalStep(s)
	}
	return out
}

func canonicalStep(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := without(m, "")
	if steps, ok := m["steps"].([]any); ok {
		out["steps"] = canonicalSteps(steps)
		return out
	}
	if _, isCommand := commandStepKind(m); !isCommand {
		return out
	}
	for alias, canon := range map[string]string{"id": "key", "identifier": "key", "name": "label"} {
		if v, ok := out[alias]; ok {
			if _, has := out[canon]; !has {
				out[canon] = v
			}
			delete(out, alias)
		}
	}
	if cmds, ok := out["commands"]; ok {
		delete(out, "commands")
		switch c := cmds.(type) {
		case []any:
			parts := make([]string, len(c))
			for i, x := range c {
				parts[i] = fmt.Sprint(x)
			}
			out["command"] = strings.Join(parts, "\n")
		default:
			out["command"] = c
		}
	}
	if c, ok := out["command"].([]any); ok {
		parts := make([]string, len(c))
		for i, x := range c {
			parts[i] = fmt.Sprint(x)
		}
		out["command"] = strings.Join(parts, "\n")
	}
	if _, ok := out["command"]; !ok {
		out["command"] = ""
	}
	if pl, ok := out["plugins"]; ok {
		out["plugins"] = canonicalPlugins(pl)
	}
	return out
}

// commandStepKind reports whether a step map is a command step, mirroring
// go-pipeline's inference (command, commands or plugins present).
func commandStepKind(m map[string]any) (string, bool) {
	for _, k := range []string{"command", "commands", "plugins"} {
		if _, ok := m[k]; ok {
			return k, true
		}
	}
	return "", false
}

func canonicalPlugins(pl any) any {
	var list []any
	switch p := pl.(type) {
	case []any:
		list = p
	case map[string]any:
		// Map form has no order; go-pipeline's ordered map keeps the YAML
		// order, which a generic map has lost. Sorted order is what a
		// map-form input without ordering can be compared with.
		for _, k := range slices.Sorted(maps.Keys(p)) {
			list = append(list, map[string]any{k: p[k]})
		}
	default:
		return pl
	}
	out := make([]any, 0, len(list))
	for _, item := range list {
		switch it := item.(type) {
		case string:
			out = append(out, map[string]any{fullSource(it): nil})
		case map[string]any:
			if len(it) != 1 {
				out = append(out, it)
				continue
			}
			for k, v := range it {
				if cfg, ok := v.(map[string]any); ok && len(cfg) == 0 {
					v = nil
				}
				out = append(out, map[string]any{fullSource(k): v})
			}
		default:
			out = append(out, it)
		}
	}
	return out
}

func fullSource(src string) string {
	return (&pipeline.Plugin{Source: src}).FullSource()
}

// Interpolated returns, as indented JSON, what go-pipeline's Interpolate makes
// of pipelineYAML when env is the whole upload-time environment (nothing is
// inherited from the test process). It is the library's view of the `$`
// rules; DryRun is the real agent's, which embeds an older go-pipeline.
func Interpolated(t testing.TB, pipelineYAML []byte, env map[string]string) []byte {
	t.Helper()
	out, err := Interpolate(pipelineYAML, env)
	if err != nil {
		t.Fatalf("go-pipeline interpolation: %v", err)
	}
	return out
}

// Interpolate is Interpolated returning an error, e.g. for `${#A[@]}`, which
// the interpolator rejects.
func Interpolate(pipelineYAML []byte, env map[string]string) ([]byte, error) {
	p, err := pipeline.Parse(bytes.NewReader(pipelineYAML))
	if w := warning.As(err); w != nil {
		return nil, fmt.Errorf("parsed with warnings:\n%v", w)
	}
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	e := make(mapEnv, len(env))
	maps.Copy(e, env)
	// preferRuntimeEnv=false is the agent's default (the experiment is off).
	if err := p.Interpolate(e, false); err != nil {
		return nil, err
	}
	return json.MarshalIndent(p, "", "  ")
}

// mapEnv is a case-sensitive environment, as the agent's is on Linux.
type mapEnv map[string]string

func (e mapEnv) Get(name string) (string, bool) { v, ok := e[name]; return v, ok }
func (e mapEnv) Set(name, value string)         { e[name] = value }
