package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// source is what the packages are generated from: the bundled workloads
// (wlc's ports) and, for each, the perf-eval original it was ported from.
type source struct {
	stems     []string          // bundled workload keys = corpus file stems, sorted
	cue       map[string][]byte // stem → workloads/<stem>.cue
	yaml      map[string][]byte // stem → corpus workloads/<stem>.yaml
	profiles  []byte            // workloads/profiles.cue
	settings  []byte            // workloads/settings.cue (the flag catalogs it adds)
	gpuProfil []byte            // perf-eval lib/gpu_profiles.yaml covering every original's gpu
	generator []byte            // perf-eval .buildkite/generate_pipeline.py
}

// readSource reads the bundled package in root/workloads and the perf-eval
// corpus in corpus (<the reference corpus>/corpus/perf-eval).
func readSource(root, corpus string) (*source, error) {
	s := &source{cue: map[string][]byte{}, yaml: map[string][]byte{}}
	var err error
	if s.profiles, err = os.ReadFile(filepath.Join(root, "workloads", "profiles.cue")); err != nil {
		return nil, err
	}
	if s.settings, err = os.ReadFile(filepath.Join(root, "workloads", "settings.cue")); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "workloads", "*.cue"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".cue")
		if stem == "wlc" || stem == "profiles" || stem == "settings" {
			continue
		}
		if s.cue[stem], err = os.ReadFile(f); err != nil {
			return nil, err
		}
		orig := filepath.Join(corpus, "workloads", stem+".yaml")
		if s.yaml[stem], err = os.ReadFile(orig); err != nil {
			return nil, fmt.Errorf("workloads/%s.cue has no perf-eval original: %w", stem, err)
		}
		s.stems = append(s.stems, stem)
	}
	if len(s.stems) == 0 {
		return nil, fmt.Errorf("%s/workloads holds no workload files", root)
	}
	slices.Sort(s.stems)
	if s.generator, err = os.ReadFile(filepath.Join(corpus, "runtime", "main", ".buildkite", "generate_pipeline.py")); err != nil {
		return nil, err
	}
	// The main-line gpu_profiles.yaml lacks GB300_SLURM, which only PR #30's
	// variant defines (deepseek_v4_flash_gb300_slurm comes from that branch):
	// the main-line file plus that one profile is the fleet the originals name.
	mainline, err := os.ReadFile(filepath.Join(corpus, "lib", "gpu_profiles.yaml"))
	if err != nil {
		return nil, err
	}
	pr30, err := os.ReadFile(filepath.Join(corpus, "variants", "pr30-gb300-slurm", "lib", "gpu_profiles.yaml"))
	if err != nil {
		return nil, err
	}
	block, err := topLevelBlock(pr30, "GB300_SLURM")
	if err != nil {
		return nil, fmt.Errorf("variants/pr30-gb300-slurm/lib/gpu_profiles.yaml: %w", err)
	}
	s.gpuProfil = append(append(bytes.TrimRight(mainline, "\n"), "\n"...), block...)
	return s, nil
}

// topLevelBlock is the text of the top-level YAML mapping entry key: its
// line and every following indented, blank or comment line.
func topLevelBlock(data []byte, key string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if l != key+":\n" {
			continue
		}
		j := i + 1
		for j < len(lines) && (lines[j] == "\n" || strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "#")) {
			j++
		}
		return []byte(strings.Join(lines[i:j], "")), nil
	}
	return nil, fmt.Errorf("no top-level %s: entry", key)
}

// replicaName is the key of the i-th generated workload, a copy of stem.
func replicaName(stem string, i int) string { return fmt.Sprintf("%s_r%04d", stem, i) }

// renameCue rewrites the one `workloads: <stem>:` key of a bundled file,
// and its dashboard_name (the run name, which vet requires to be unique:
// replicas keeping the original's would be N errors, not N workloads).
func renameCue(src []byte, stem, name string) ([]byte, error) {
	old := "workloads: " + stem + ":"
	if n := bytes.Count(src, []byte(old)); n != 1 {
		return nil, fmt.Errorf("workloads/%s.cue: want exactly one %q, found %d", stem, old, n)
	}
	out := bytes.Replace(src, []byte(old), []byte("workloads: "+name+":"), 1)
	if n := len(cueDashboardName.FindAll(out, -1)); n > 1 {
		return nil, fmt.Errorf("workloads/%s.cue: want at most one dashboard_name, found %d", stem, n)
	}
	suffix := strings.TrimPrefix(name, stem)
	return cueDashboardName.ReplaceAll(out, []byte(`${1}"${2}`+suffix+`"`)), nil
}

var cueDashboardName = regexp.MustCompile(`(?m)^(\s*dashboard_name:\s*)"([^"\\]*)"`)

var (
	yamlName    = regexp.MustCompile(`(?m)^name:.*$`)
	yamlNightly = regexp.MustCompile(`(?m)^nightly:.*$`)
)

// renameYAML gives a perf-eval original the replica's name and makes it
// nightly, so the generator's default selection (nightly: true) takes every
// replica, as `wlc export --all` does; an explicit WORKLOADS list of 2,000
// names would approach Linux's 128 KiB limit on one environment string.
func renameYAML(src []byte, name string) []byte {
	out := yamlName.ReplaceAll(src, []byte("name: "+name))
	if yamlNightly.Match(out) {
		return yamlNightly.ReplaceAll(out, []byte("nightly: true"))
	}
	return append(append(bytes.TrimRight(out, "\n"), '\n'), "nightly: true\n"...)
}

// pkgs are the generated trees for one N.
type pkgs struct {
	n        int
	dir      string // holds the packages
	wlcDir   string // a CUE module from `wlc init`; the package is wlcDir/workloads
	baseDir  string // the same from the base build's `wlc init` (with -base)
	peDir    string // a perf-eval checkout: .buildkite/, lib/, workloads/
	expected int    // steps each export must print
}

// generate writes, under dir, the N-workload wlc module (made by `wlc
// init`, so it imports the schema the way a user's repository does), with
// -base a second one made by the base build's `wlc init` (its own schema
// copy and typing lines, so a schema change is measured before and after),
// and the perf-eval tree with the same N workloads as YAML.
func generate(s *source, wlc, base, dir string, n int) (*pkgs, error) {
	p := &pkgs{n: n, dir: dir, wlcDir: filepath.Join(dir, "wlc"), peDir: filepath.Join(dir, "perf-eval"), expected: n}
	modules := []struct{ dir, bin string }{{p.wlcDir, wlc}}
	if base != "" {
		p.baseDir = filepath.Join(dir, "wlc-base")
		modules = append(modules, struct{ dir, bin string }{p.baseDir, base})
	}
	files := map[string][]byte{
		filepath.Join(p.peDir, ".buildkite", "generate_pipeline.py"): s.generator,
		filepath.Join(p.peDir, "lib", "gpu_profiles.yaml"):           s.gpuProfil,
	}
	workloads := map[string][]byte{"profiles.cue": s.profiles, "settings.cue": s.settings} // in each module
	for i := range n {
		stem := s.stems[i%len(s.stems)]
		name := replicaName(stem, i)
		c, err := renameCue(s.cue[stem], stem, name)
		if err != nil {
			return nil, err
		}
		workloads[name+".cue"] = c
		files[filepath.Join(p.peDir, "workloads", name+".yaml")] = renameYAML(s.yaml[stem], name)
	}
	for _, m := range modules {
		if out, err := exec.Command(m.bin, "init", "--module", "example.com/wlcbench", m.dir).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s init: %v\n%s", m.bin, err, out)
		}
		// init's example workload and profile go; its wlc.cue (the typing
		// lines this build's schema wants) stays.
		wdir := filepath.Join(m.dir, "workloads")
		entries, err := os.ReadDir(wdir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Name() != "wlc.cue" {
				if err := os.RemoveAll(filepath.Join(wdir, e.Name())); err != nil {
					return nil, err
				}
			}
		}
		for name, data := range workloads {
			files[filepath.Join(wdir, name)] = data
		}
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return p, nil
}
