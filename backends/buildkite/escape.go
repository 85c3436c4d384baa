package buildkite

import (
	"fmt"
	"strings"

	"github.com/buildkite/go-pipeline"
)

// escapeDollar makes s reach the job unchanged through the agent's
// upload-time interpolation: every `$` is written `$$`. That holds for
// plain references, `${X:-y}` and bash-only forms such as `${#A[@]}`
// (pinned by internal/testrig/bktest), but not for a `$` nested inside `${...}`:
// agent v3.78.0 copies the inside of an escaped `$${...}` verbatim, so the
// inner `$$` would reach the job doubled. Such values are refused.
func escapeDollar(s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			break
		}
		if inner := s[i+2 : i+2+end]; strings.Contains(inner, "$") {
			return "", fmt.Errorf("%q has a $ nested inside ${...}, which buildkite-agent's upload-time interpolation cannot pass through unchanged; move it into the workload env (the script carries it) or drop the nesting", s)
		}
		i += 1 + end
	}
	return strings.ReplaceAll(s, "$", "$$"), nil
}

// escapeStep escapes every string of s that the agent interpolates, except
// the command, which holds no `$` by construction.
func escapeStep(s *pipeline.CommandStep) error {
	var err error
	if s.Label, err = escapeDollar(s.Label); err != nil {
		return fmt.Errorf("label: %w", err)
	}
	for k, v := range s.Env {
		if strings.Contains(k, "$") {
			return fmt.Errorf("env: variable name %q contains $", k)
		}
		if s.Env[k], err = escapeDollar(v); err != nil {
			return fmt.Errorf("env %s: %w", k, err)
		}
	}
	for _, p := range s.Plugins {
		if p.Config, err = escapeAny(p.Config); err != nil {
			return fmt.Errorf("plugin %s: %w", p.Source, err)
		}
	}
	for k, v := range s.RemainingFields {
		if s.RemainingFields[k], err = escapeAny(v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// escapeAny escapes the strings of a value built by this package or decoded
// from JSON (the HF cache override). Keys holding `$` are refused.
func escapeAny(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return escapeDollar(x)
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			s, err := escapeDollar(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := escapeAny(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case *omap:
		out := om()
		for k, e := range x.All {
			if strings.Contains(k, "$") {
				return nil, fmt.Errorf("key %q contains $", k)
			}
			s, err := escapeAny(e)
			if err != nil {
				return nil, err
			}
			out.Set(k, s)
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if strings.Contains(k, "$") {
				return nil, fmt.Errorf("key %q contains $", k)
			}
			s, err := escapeAny(e)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			if strings.Contains(k, "$") {
				return nil, fmt.Errorf("key %q contains $", k)
			}
			s, err := escapeDollar(e)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	return v, nil
}
