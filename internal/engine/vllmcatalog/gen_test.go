package vllmcatalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// corpusFlag is a flag of a corpus/vllm-flags catalog (see its SOURCE.md).
type corpusFlag struct {
	Flag          string   `json:"flag"`
	Aliases       []string `json:"aliases"`
	Type          string   `json:"type"`
	Choices       []any    `json:"choices"`
	BoolPair      bool     `json:"bool_pair"`
	Nargs         string   `json:"nargs"`
	Deprecated    any      `json:"deprecated"`
	JSONExtraKeys string   `json:"json_extra_keys"`
	JSONFields    []struct {
		Name string `json:"name"`
	} `json:"json_fields"`
}

// fromCorpus converts one corpus catalog file into a Catalog.
func fromCorpus(t *testing.T, path string) *Catalog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Meta struct {
			Label  string `json:"label"`
			Commit string `json:"commit"`
		} `json:"meta"`
		Serve []corpusFlag `json:"serve"`
		Bench []corpusFlag `json:"bench_serve"`
	}
	if err := json.Unmarshal(data, &f); err != nil || len(f.Serve) == 0 || f.Meta.Label == "" {
		t.Fatalf("%s: not a flag catalog (%v)", path, err)
	}
	conv := func(fs []corpusFlag) []*Flag {
		var out []*Flag
		for _, cf := range fs {
			fl := &Flag{Options: append([]string{cf.Flag}, cf.Aliases...), Kind: Value, Nargs: cf.Nargs}
			switch cf.Type {
			case "flag":
				fl.Kind = Switch
			case "bool":
				fl.Kind = Bool
			case "json":
				fl.Kind = JSON
			case "json_or_str":
				fl.Kind = JSONOrStr
			case "int":
				fl.Type = TypeInt
			case "float":
				fl.Type = TypeFloat
			case "human_int":
				fl.Type = TypeSize
			case "human_int_or_auto":
				fl.Type = TypeSizeOrAuto
			}
			if cf.BoolPair {
				fl.Options = append(fl.Options, "--no-"+strings.TrimPrefix(cf.Flag, "--"))
			}
			for _, c := range cf.Choices {
				fl.Choices = append(fl.Choices, fmt.Sprint(c))
			}
			fl.Deprecated = cf.Deprecated != nil && cf.Deprecated != false
			if cf.JSONExtraKeys == "forbid" {
				fl.Keys = []string{}
				for _, jf := range cf.JSONFields {
					fl.Keys = append(fl.Keys, jf.Name)
				}
			}
			out = append(out, fl)
		}
		return out
	}
	return &Catalog{Label: f.Meta.Label, Commit: f.Meta.Commit, Serve: conv(f.Serve), Bench: conv(f.Bench)}
}

// corpusCatalogs reads every catalog of corpus/vllm-flags, oldest first.
func corpusCatalogs(t *testing.T) []*Catalog {
	dir := filepath.Join(testenv.SharedDir(t), "corpus", "vllm-flags")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var cs []*Catalog
	for _, f := range files {
		cs = append(cs, fromCorpus(t, f))
	}
	if len(cs) == 0 {
		t.Fatalf("%s holds no catalog", dir)
	}
	sort.Slice(cs, func(i, j int) bool { return Less(cs[i].Label, cs[j].Label) })
	return cs
}

// TestCatalogsFile regenerates catalogs.txt, the built-in catalogs, from
// the flag catalogs of the reference corpus (corpus/vllm-flags, extracted
// from vLLM's source; see its SOURCE.md) and fails when the committed file
// differs (WLC_UPDATE=1 rewrites it). It keeps only what checking an argv
// needs: option strings, kind, nargs, choices, deprecation, the keys of a
// JSON config that refuses unknown ones.
func TestCatalogsFile(t *testing.T) {
	cs := corpusCatalogs(t)
	got := Format(header, cs)
	if os.Getenv("WLC_UPDATE") != "" {
		if err := os.WriteFile("catalogs.txt", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, _ := os.ReadFile("catalogs.txt"); string(want) != got {
		t.Errorf("catalogs.txt is stale against the corpus flag catalogs; regenerate with WLC_UPDATE=1 go test ./internal/engine/vllmcatalog")
	}
	// The compact form loses nothing the checks read.
	parsed, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		a, _ := json.Marshal(c)
		b, _ := json.Marshal(parsed[i])
		if string(a) != string(b) {
			t.Errorf("%s does not round-trip through the compact form", c.Label)
		}
	}
}

const header = `The vLLM releases wlc knows: the options of ` + "`vllm serve`" + ` and
` + "`vllm bench serve`" + ` per release, one argparse action a line (format: see
Parse in catalog.go). Generated from the flag catalogs extracted from
vLLM's source at the commits listed, by TestCatalogsFile
(WLC_UPDATE=1 go test ./internal/engine/vllmcatalog); do not edit.`
