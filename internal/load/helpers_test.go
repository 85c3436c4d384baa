package load_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

const moduleCUE = `module: "github.com/wlcdev/wlc@v0"
language: version: "v0.17.1"
`

// testProfiles covers every runtime and vendor the constraints read.
const testProfiles = `package workloads

profiles: {
	H200: {hardware: "H200", runtime: "docker", queue: "h200", docker: {}}
	B200: {hardware: "B200", runtime: "k8s", queue: "b200", k8s: plugin: "nvidia"}
	MI300X: {hardware: "MI300X", runtime: "k8s", queue: "mi300x", k8s: plugin: "amd"}
	GB300: {hardware: "GB300", runtime: "slurm", queue: "gb300", slurm: max_nodes: 2}
	B70: {hardware: "ARC_PRO_B70", runtime: "docker", queue: "b70", docker: {}}
}
`

// wlcCUE is workloads/wlc.cue of the repository, the two lines that type
// a workloads package.
var wlcCUE = func() string {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "workloads", "wlc.cue"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// writePkg writes a module with a workloads package holding files (name →
// content; "profiles.cue" defaults to testProfiles) and returns the root.
func writePkg(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{
		"cue.mod/module.cue":     moduleCUE,
		"workloads/wlc.cue":      wlcCUE,
		"workloads/profiles.cue": testProfiles,
	}
	for k, v := range files {
		all[k] = v
	}
	testenv.WriteFiles(t, root, all)
	return root
}

// loadPkg loads root/workloads with positions relative to root.
func loadPkg(t testing.TB, root string) *load.Result {
	t.Helper()
	return load.Load(cuecontext.New(), filepath.Join(root, "workloads"), root, load.Options{Vetters: []load.Vetter{slurm.Backend{}}})
}

// diagLines renders every finding as `file:line:col: severity: path: message`.
func diagLines(r *load.Result) []string {
	var out []string
	for _, d := range r.Diags {
		out = append(out, d.String())
	}
	return out
}

// workload wraps fields (tab-indented lines) as workload w in
// workloads/w.cue; the first field is on line 4.
func workload(fields string) string {
	return workloadKey("w", fields)
}

// workloadKey is workload with another key (a CUE label).
func workloadKey(key, fields string) string {
	return "package workloads\n\nworkloads: " + key + ": {\n" + strings.TrimLeft(fields, "\n") + "}\n"
}
