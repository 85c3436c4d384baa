package bktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAMLToJSON converts one YAML document into the generic JSON value Buildkite
// sees: map[string]any, []any, string, bool, nil and Go integer or float64
// numbers. Scalars keep their YAML type (60 stays a number, "60" a string),
// which is the point: the schema checks types. It is stricter than the agent,
// which silently keeps the last of two equal keys and ignores every document
// after the first; both are generator bugs, so both are errors here.
func YAMLToJSON(src []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("pipeline YAML is empty")
		}
		return nil, fmt.Errorf("pipeline YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("pipeline YAML: line %d: a second YAML document; buildkite-agent reads only the first", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pipeline YAML: %w", err)
	}
	return nodeValue(&doc, 0)
}

// maxDepth bounds alias expansion so a YAML "billion laughs" cannot hang a test.
const maxDepth = 200

func nodeValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: YAML nested deeper than %d (alias loop?)", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return nodeValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return nodeValue(n.Alias, depth+1)
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		seen := map[string]int{} // key -> line, for duplicate-key errors
		if err := mergeMapping(n, out, seen, true, depth); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node kind %d", n.Line, n.Kind)
}

// mergeMapping copies n's pairs into out. Explicit keys win over keys pulled
// in by `<<` merges (YAML merge-key spec); only explicit keys can clash.
func mergeMapping(n *yaml.Node, out map[string]any, seen map[string]int, explicit bool, depth int) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key, err := mapKey(k)
		if err != nil {
			return err
		}
		if line, dup := seen[key]; dup {
			if !explicit {
				continue
			}
			return fmt.Errorf("line %d: key %q already defined at line %d (buildkite-agent would silently keep the last one)", k.Line, key, line)
		}
		val, err := nodeValue(v, depth+1)
		if err != nil {
			return err
		}
		seen[key] = k.Line
		out[key] = val
	}
	for _, m := range merges {
		if err := mergeSource(m, out, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func mergeSource(m *yaml.Node, out map[string]any, seen map[string]int, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: YAML merges nested deeper than %d", m.Line, maxDepth)
	}
	switch m.Kind {
	case yaml.AliasNode:
		return mergeSource(m.Alias, out, seen, depth+1)
	case yaml.MappingNode:
		return mergeMapping(m, out, seen, false, depth)
	case yaml.SequenceNode:
		for _, c := range m.Content {
			if err := mergeSource(c, out, seen, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: `<<` must merge a mapping or a list of mappings", m.Line)
}

// mapKey canonicalises scalar keys the way go-pipeline's ordered decoder does
// (0xb and 11 are the same key), since JSON only has string keys.
func mapKey(k *yaml.Node) (string, error) {
	if k.Kind == yaml.AliasNode {
		return mapKey(k.Alias)
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: map key is not a scalar", k.Line)
	}
	switch k.ShortTag() {
	case "!!null":
		return "", fmt.Errorf("line %d: null map key", k.Line)
	case "!!bool", "!!int", "!!float":
		v, err := scalarValue(k)
		if err != nil {
			return "", err
		}
		switch v := v.(type) {
		case float64:
			return fmt.Sprintf("%e", v), nil
		default:
			return fmt.Sprint(v), nil
		}
	}
	return k.Value, nil
}

func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return u, nil
		}
		// Out of int64/uint64 range: yaml.v3 itself falls back to float.
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: integer %q: %w", n.Line, n.Value, err)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %q has no JSON representation", n.Line, n.Value)
		}
		return f, nil
	}
	// !!str, !!timestamp, !!binary and custom tags: JSON only has the text.
	return n.Value, nil
}

// canonicalJSON re-encodes v so values built from different Go types (int64
// from YAML, float64 from encoding/json) compare equal with cmp.Diff.
func canonicalJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// describe renders a JSON pointer into doc and names the innermost step it
// passes through, so a failure says which step without counting by hand.
func describe(doc any, ptr []string) string {
	var b strings.Builder
	step := ""
	cur := doc
	parentKey := ""
	for _, tok := range ptr {
		b.WriteString("/" + tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
			parentKey = tok
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				cur = nil
				continue
			}
			cur = c[i]
			if parentKey == "steps" {
				step = stepName(b.String(), cur)
			}
			parentKey = ""
		default:
			cur = nil
		}
	}
	if len(ptr) == 0 {
		return "/ (pipeline root)"
	}
	if step != "" {
		return b.String() + " (in " + step + ")"
	}
	return b.String()
}

// stepName identifies a step by the fields a reader searches the YAML for.
func stepName(ptr string, step any) string {
	m, ok := step.(map[string]any)
	if !ok {
		if s, ok := step.(string); ok {
			return fmt.Sprintf("step %s %q", ptr, s)
		}
		return "step " + ptr
	}
	var parts []string
	for _, k := range []string{"key", "id", "identifier", "label", "name", "group"} {
		if s, ok := m[k].(string); ok && s != "" {
			parts = append(parts, fmt.Sprintf("%s %q", k, s))
		}
	}
	if len(parts) == 0 {
		return "step " + ptr
	}
	return "step " + ptr + " " + strings.Join(parts, ", ")
}
