package buildkite_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/schema"
)

// weird holds the `$` forms upload-time interpolation breaks: a plain
// reference (replaced by the uploader's value), a default (replaced by the
// default) and a bash-only form (fails the whole upload on agent v3.78.0).
const weird = `$HOME ${X:-y} ${#A[@]} '"quoted"'`

func dockerWorkload(name string, env ...plan.EnvVar) plan.Workload {
	return plan.Workload{
		Name:           name,
		RunName:        name,
		Profile:        schema.Profile{Name: "H200", Runtime: "docker", Queue: "H200", Docker: &schema.DockerHost{}},
		Hardware:       schema.Hardware{Name: "H200", Vendor: "nvidia"},
		Platform:       "cuda",
		Nodes:          1,
		GPUsPerNode:    8,
		GPUs:           8,
		Image:          plan.Image{Ref: "vllm/vllm-openai:nightly", Pull: "vllm/vllm-openai:nightly", Source: "default"},
		Env:            env,
		Secrets:        []string{"HF_TOKEN"},
		TimeoutMinutes: 60,
		ResultsPath:    "results/" + name,
	}
}

func k8sWorkload(name, plugin string, env ...plan.EnvVar) plan.Workload {
	w := dockerWorkload(name, env...)
	if !slices.ContainsFunc(env, func(e plan.EnvVar) bool { return e.Name == "HF_HOME" }) {
		// What the plan carries from the schema's k8s hf_home default.
		w.Env = append(w.Env, plan.EnvVar{Name: "HF_HOME", Value: "/root/.cache/huggingface"})
	}
	w.Profile = schema.Profile{Name: "B200", Runtime: "k8s", Queue: "b200-k8s", K8s: &schema.K8s{
		Plugin: plugin, HFCacheVolume: map[string]any{"emptyDir": map[string]any{}},
		ImagePullSecret: "pull-secret", HFTokenSecret: schema.SecretKeyRef{Name: "hf", Key: "token"},
	}}
	if plugin == "amd" {
		w.Profile.Name = "MI355X"
		w.Hardware = schema.Hardware{Name: "MI355X", Vendor: "amd"}
		w.Platform = "rocm"
	}
	return w
}

// TestDollarReachesRuntime: values holding `$HOME`, `${X:-y}` and
// `${#A[@]}` (in the workload env, which the script carries; in the step
// env; in the pod spec) reach the job unchanged after the real agent's
// dry-run upload, run in an environment where HOME and X differ from the
// uploader's. The step command the agent would hand to bash is executed
// with the real agent downloading the scripts from an Agent API stand-in, so
// the script it downloads, checks and runs is the one the job gets.
func TestDollarReachesRuntime(t *testing.T) {
	ws := []plan.Workload{
		dockerWorkload("weird_docker", plan.EnvVar{Name: "HF_HOME", Value: "/mnt/hf"}, plan.EnvVar{Name: "WEIRD", Value: weird}),
		k8sWorkload("weird_k8s", "nvidia", plan.EnvVar{Name: "HF_HOME", Value: "/cache/$USER/${X:-hf}"}, plan.EnvVar{Name: "WEIRD", Value: weird}),
		k8sWorkload("weird_amd", "amd", plan.EnvVar{Name: "WEIRD", Value: weird}),
	}
	exportEnv := map[string]string{
		"VLLM_COMMIT": weird, // passed through into the step env
		"HOME":        "/home/uploader",
		"X":           "from-uploader",
		"USER":        "uploader",
	}
	pipelineYAML := lowerPipeline(t, buildkite.New(fakeRunners()), ws, exportEnv)
	pub := publish(t, lowerPipelines(t, buildkite.New(fakeRunners()), ws, exportEnv))
	bktest.ValidateSchema(t, pipelineYAML)
	bktest.RoundTrip(t, pipelineYAML)
	uploaded := bktest.DryRun(t, pipelineYAML, exportEnv)

	steps := uploadedSteps(t, uploaded)
	if len(steps) != len(ws) {
		t.Fatalf("agent uploaded %d steps, want %d", len(steps), len(ws))
	}
	for i, s := range steps {
		w := ws[i]
		if strings.Contains(s.Command, "$") {
			t.Errorf("%s: the command holds a $ (everything with a $ must travel in the scripts)", w.Name)
		}
		if got := s.Env["VLLM_COMMIT"]; got != weird {
			t.Errorf("%s: step env VLLM_COMMIT after upload = %q, want %q", w.Name, got, weird)
		}

		out := filepath.Join(t.TempDir(), "seen")
		r := pub.run(t, s, s.Command, "WLC_FAKE_OUT="+out)
		if r.err != nil {
			t.Fatalf("%s: running the uploaded command: %v\n%s", w.Name, r.err, r.out)
		}
		seen, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want := "A=3\nX=y\nresults=results/" + w.Name + "\n"
		for _, e := range w.Env {
			want += e.Name + "=" + e.Value + "\n"
		}
		if string(seen) != want {
			t.Errorf("%s: the job saw\n%s\nwant\n%s", w.Name, seen, want)
		}
		if !strings.Contains(r.out, "it's 3 items; X=y HOME=/home/job") {
			t.Errorf("%s: job output %q lacks the runtime expansion", w.Name, r.out)
		}
	}

	// The pod spec's HF_HOME (env value and mount path) survives as well.
	var doc struct {
		Steps []struct {
			Plugins []map[string]json.RawMessage `json:"plugins"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(uploaded, &doc); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Steps[1].Plugins[0]["github.com/buildkite-plugins/kubernetes-buildkite-plugin"]); err != nil {
		t.Fatal(err)
	}
	pod := compact.String()
	for _, want := range []string{`"mountPath":"/cache/$USER/${X:-hf}"`, `"value":"/cache/$USER/${X:-hf}"`} {
		if !strings.Contains(pod, want) {
			t.Errorf("uploaded pod spec lacks %s:\n%s", want, pod)
		}
	}
}

// TestNestedDollarRefused: a `$` nested in `${...}` cannot pass agent
// v3.78.0 unchanged in any spelling (internal/testrig/bktest), so a value that
// would need it outside the script is an export error, not a silent change.
func TestNestedDollarRefused(t *testing.T) {
	w := k8sWorkload("nested", "nvidia", plan.EnvVar{Name: "HF_HOME", Value: "${HF:-$HOME/hf}"})
	_, err := buildkite.New(fakeRunners()).Lower([]plan.Workload{w}, optsEnv(nil))
	if err == nil || !strings.Contains(err.Error(), "nested inside ${...}") {
		t.Fatalf("Lower: %v, want the nested-$ refusal", err)
	}
	// In the workload env of a docker workload it only travels in the
	// script: fine.
	d := dockerWorkload("nested_docker", plan.EnvVar{Name: "CACHE", Value: "${HF:-$HOME/hf}"})
	if _, err := buildkite.New(fakeRunners()).Lower([]plan.Workload{d}, optsEnv(nil)); err != nil {
		t.Fatalf("Lower: %v", err)
	}
}
