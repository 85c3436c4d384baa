package buildkite

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner"
)

// Shipping the scripts (issue 39). The export holds, beside the pipeline,
// each workload's runner script (scripts/<runner's file name>), the helpers
// the steps share (helpers/) and upload.sh. A docker or native script is
// the workload's own part (runner.Split): it sources the runner's shared
// runtime (lib.sh, the embedded tools, the ingest, the runtime's
// functions: 60 of its 72 KB), which is a helper named by its content,
// helpers/runtime-<runner>-<12 hex of its sha256>.sh, written once however
// many steps use it. The script finds it beside itself (../helpers/ from
// scripts/, as downloaded). A Slurm step's sbatch script stays whole:
// sbatch copies the script alone to the compute node's spool directory,
// where no file beside it exists. The pipeline's upload step, the
// one with key UploadStepKey, runs upload.sh: it uploads scripts/ and
// helpers/ as that step's artifacts, then the pipeline. A step's command is
// a few readable lines: download its own files from that step
// (`buildkite-agent artifact download PATH .wlc --step KEY`), check them
// against the sha256 written in the command, run. So each step runs exactly
// the script exported for it, a retry downloads the same files again, and a
// file that changed since (a re-run upload step of a newer export, storage
// tampered with) is refused before anything runs. The command holds no `$`
// at all (no upload-time interpolation can touch it; Lower asserts it).

// UploadStepKey is the key of the pipeline step that runs upload.sh: the
// step every wlc step downloads its files from.
const UploadStepKey = "wlc-upload"

// UploadStepVar, set at export time, names another upload step key (a
// pipeline whose upload step has a key of its own).
const UploadStepVar = "WLC_UPLOAD_STEP"

// UploadFile is the script the upload step runs from the export directory.
const UploadFile = "upload.sh"

// ScriptsDir holds the workloads' runner scripts and helpersDir the helpers
// the steps share, both relative to the export directory and as artifact
// paths. Workload names have no '/', so no script can be a helper.
const (
	ScriptsDir = "scripts"
	helpersDir = "helpers"
)

// fetchDir is where a step downloads its files, relative to the job's
// working directory (the checkout): .wlc/scripts/<file>, .wlc/helpers/<file>.
const fetchDir = ".wlc"

// file is one file a step downloads and runs: its artifact path, bytes
// and their sha256.
type file struct {
	path string
	data []byte
	sum  [32]byte
}

func newFile(path string, data []byte) file { return file{path, data, sha256.Sum256(data)} }

// stepKeyPattern is Buildkite's step key (its pipeline schema's pattern)
// without `$`, `{` and `}`, which upload-time interpolation would read.
var stepKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_\-:.,]{1,100}$`)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// uploadStepKey is the upload step's key: UploadStepKey, or UploadStepVar.
func uploadStepKey(env map[string]string) (string, error) {
	v := strings.TrimSpace(env[UploadStepVar])
	if v == "" {
		return UploadStepKey, nil
	}
	if !stepKeyPattern.MatchString(v) || uuidPattern.MatchString(v) {
		return "", fmt.Errorf("%s=%q: want the key of the step that runs %s: 1 to 100 of letters, digits and _ - : . , (Buildkite's step key, without $ { }), not shaped like a UUID", UploadStepVar, v, UploadFile)
	}
	return v, nil
}

// tokenScript fetches the ingest token from the agent's secret store and
// runs the job with it (perf-eval's steps run `buildkite-agent secret get
// INGEST_BEARER_TOKEN` before lib/run.sh). It is a file, not a line of the
// command, because the command holds no `$`.
//
//go:embed token.sh
var tokenScript []byte

// submitScript is the login-node wrapper of Slurm steps: submit, poll,
// the job log streamed into the step, scancel when the step is cancelled.
//
//go:embed submit.sh
var submitScript []byte

var (
	tokenFile  = newFile(helpersDir+"/token.sh", tokenScript)
	submitFile = newFile(helpersDir+"/submit.sh", submitScript)
)

// IsStepFile reports whether an export's file is one the steps download
// (upload.sh uploads it as an artifact).
func IsStepFile(artifactPath string) bool {
	return strings.HasPrefix(artifactPath, ScriptsDir+"/") || strings.HasPrefix(artifactPath, helpersDir+"/")
}

// fetched is where a step finds an artifact once downloaded.
func fetched(artifactPath string) string { return fetchDir + "/" + artifactPath }

// command is the step's command: what runs and where to read it, the
// downloads, the sha256 check, the run line. ps.files[0] is the script,
// then its runtime when it has one.
func (ps *pendingStep) command(key string) string {
	w, script := ps.w, ps.files[0].path
	var b strings.Builder
	if ps.runtime != "" {
		fmt.Fprintf(&b, "# wlc: workload %s runs the %s runner's script %s (with the shared %s), artifacts of step %s.\n", w.Name, ps.runner, script, ps.runtime, key)
	} else {
		fmt.Fprintf(&b, "# wlc: workload %s runs the %s runner's script %s, an artifact of step %s.\n", w.Name, ps.runner, script, key)
	}
	fmt.Fprintf(&b, "# Read it there, or: wlc export --backend buildkite --workloads %s -o out && less out/%s\n", w.Name, script)
	b.WriteString("set -eu\n")
	fmt.Fprintf(&b, "mkdir -p %s\n", fetchDir)
	for _, f := range ps.files {
		fmt.Fprintf(&b, "buildkite-agent artifact download %s %s --step %s\n", shellWord(f.path), fetchDir, shellWord(key))
	}
	b.WriteString("sha256sum --check --strict --quiet <<'WLC_SHA256' || { echo 'wlc: refusing to run files that are not the ones this step was exported with (sha256 above)' >&2; exit 1; }\n")
	for _, f := range ps.files {
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(f.sum[:]), fetched(f.path))
	}
	b.WriteString("WLC_SHA256\n")
	b.WriteString(ps.run)
	return b.String()
}

// direct: the step runs the runner's script with bash on the machine it
// lands on (the docker host, or inside the k8s pod), with the ingest token;
// the script sources rt (nil: it stands alone), downloaded beside it.
func (ps *pendingStep) direct(scriptName string, script []byte, rt *runner.SharedRuntime) {
	f := newFile(ScriptsDir+"/"+scriptName, script)
	ps.files = []file{f}
	if rt != nil {
		ps.runtime = helpersDir + "/" + rt.Name
		ps.files = append(ps.files, file{ps.runtime, rt.Data, rt.Sum})
	}
	ps.files = append(ps.files, tokenFile)
	ps.run = fmt.Sprintf("bash %s bash %s\n", fetched(tokenFile.path), shellWord(fetched(f.path)))
}

// slurm: the step runs the submit wrapper on the login node from the
// checkout root (where the sbatch script expects to be submitted; its log
// goes to the results directory), the ingest token in its environment,
// which sbatch hands to the job.
func (ps *pendingStep) slurm(scriptName string, script []byte) {
	f := newFile(ScriptsDir+"/"+scriptName, script)
	ps.files = []file{f, submitFile, tokenFile}
	ps.run = fmt.Sprintf("bash %s bash %s %s %s\n", fetched(tokenFile.path), fetched(submitFile.path),
		shellWord(fetched(f.path)), shellWord(ps.w.ResultsPath))
}

// files are the export's scripts and helpers, each once, in the steps'
// order (a workload selected twice is one script), then the helpers by
// name (a runtime many steps source is one file).
func files(steps []*pendingStep) ([]backends.Artifact, error) {
	var scripts, helpers []backends.Artifact
	seen := map[string][32]byte{}
	for _, s := range steps {
		for _, f := range s.files {
			if prev, ok := seen[f.path]; ok {
				if prev != f.sum {
					return nil, fmt.Errorf("%s: two different scripts would be %s", s.w.Name, f.path)
				}
				continue
			}
			seen[f.path] = f.sum
			a := backends.Artifact{Path: f.path, Data: f.data, Mode: 0o644}
			if !strings.HasPrefix(f.path, ScriptsDir+"/") {
				helpers = append(helpers, a)
			} else {
				scripts = append(scripts, a)
			}
		}
	}
	slices.SortFunc(helpers, func(a, b backends.Artifact) int { return strings.Compare(a.Path, b.Path) })
	return append(scripts, helpers...), nil
}

// uploadScript is upload.sh: check the step's key, upload the scripts as
// its artifacts, then each pipeline, in order. Artifacts first: a step
// must never start before its script can be downloaded.
func uploadScript(key string, pipelines []string) []byte {
	var b strings.Builder
	b.WriteString(`#!/usr/bin/env bash
# Generated by wlc export --backend buildkite. The pipeline's upload step runs it
# after the export, e.g.:
#   - key: ` + key + `
#     command: wlc export --backend buildkite -o .wlc-export && bash .wlc-export/upload.sh
# It uploads the workloads' scripts (scripts/, helpers/) as this step's artifacts, then
# the pipeline. Each step downloads its own script from step ` + key + `, checks its sha256
# and runs it; read a step's script in this step's Artifacts tab.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
`)
	q := shellWord(key)
	fmt.Fprintf(&b, "if [ \"${BUILDKITE_STEP_KEY:-}\" != %s ]; then\n", q)
	fmt.Fprintf(&b, "  echo \"wlc: the exported steps download their scripts from the step with key %s, but this step's key is '${BUILDKITE_STEP_KEY:-}': give this step key: %s, or export with %s=<its key>\" >&2\n", key, key, UploadStepVar)
	b.WriteString("  exit 1\nfi\n")
	fmt.Fprintf(&b, "buildkite-agent artifact upload '%s/*;%s/*'\n", ScriptsDir, helpersDir)
	for _, p := range pipelines {
		fmt.Fprintf(&b, "buildkite-agent pipeline upload %s\n", shellWord(p))
	}
	return []byte(b.String())
}

// Idle implements backends.Idler: an upload.sh that uploads nothing, for
// the upload step of a build in which no job changed.
func (*Backend) Idle(why string) []backends.Artifact {
	script := "#!/usr/bin/env bash\n" +
		"# Generated by wlc export --backend buildkite: no job to upload.\n" +
		"echo " + shellWord("wlc: "+why+"; nothing to upload") + "\n"
	return []backends.Artifact{{Path: UploadFile, Data: []byte(script), Mode: 0o644}}
}
