package bktest

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// validPipeline has the shapes the backend will emit: a Kubernetes-plugin
// step with a podSpec like perf-eval's B200 step (../shared/reference/
// perf-eval.md §3.6), a Slurm-style step serialised by concurrency_group,
// a docker-plugin step, a matrix, wait and group. Every runtime `$` is
// written `$$` so it reaches the job untouched, except a `$(` inside an
// escaped `$${...}`, which must stay single (see TestDollarNestedInEscapedBraces).
const validPipeline = `env:
  VLLM_USE_V1: "1"
steps:
  - label: ':b200: qwen3_5-b200'
    key: qwen3_5-b200
    agents:
      queue: b200-k8s
    timeout_in_minutes: 120
    command: |-
      INGEST_BEARER_TOKEN="$$(buildkite-agent secret get INGEST_BEARER_TOKEN)" && export INGEST_BEARER_TOKEN
      export HF_HOME="$${HF_HOME:-$(pwd)/.hf-cache}" PATH="$$(pwd)/.venv/bin:$$HOME/.local/bin:$$PATH"
      ./lib/run.sh workloads/qwen3_5_b200.yaml
    artifact_paths:
      - results/**/*
    plugins:
      - kubernetes:
          podSpec:
            runtimeClassName: nvidia
            hostNetwork: true
            dnsPolicy: ClusterFirstWithHostNet
            imagePullSecrets:
              - name: k8s-ecr-login-renew-docker-secret
            containers:
              - image: public.ecr.aws/q9t5s3a7/vllm-release-repo:0123456789abcdef0123
                resources:
                  limits:
                    nvidia.com/gpu: 8
                securityContext:
                  capabilities:
                    add: [IPC_LOCK, SYS_RESOURCE]
                volumeMounts:
                  - {name: devshm, mountPath: /dev/shm}
                  - {name: shared, mountPath: /mnt/shared}
                env:
                  - {name: VLLM_USAGE_SOURCE, value: ci-test}
                  - {name: NCCL_CUMEM_HOST_ENABLE, value: "0"}
                  - name: HF_TOKEN
                    valueFrom:
                      secretKeyRef: {name: hf-token-secret, key: token}
            volumes:
              - {name: devshm, emptyDir: {medium: Memory}}
              - {name: shared, hostPath: {path: /mnt/shared, type: DirectoryOrCreate}}
    env:
      VLLM_IMAGE: public.ecr.aws/q9t5s3a7/vllm-release-repo:0123456789abcdef0123
      VLLM_COMMIT: "0123456789abcdef0123"
  - label: ':slurm: kimi_k3-gb300-pd'
    key: kimi_k3-gb300-pd
    agents: {queue: gb300-slurm}
    timeout_in_minutes: 240
    command: sbatch --wait --parsable job.sbatch && echo "job $${SLURM_JOB_ID:-none}"
    concurrency: 1
    concurrency_group: perf-eval/gb300-slurm
    concurrency_method: eager
    retry:
      automatic:
        - {exit_status: -1, limit: 2}
  - wait
  - group: docker
    key: docker
    steps:
      - label: 'bench {{matrix.concurrency}}'
        command: vllm bench serve --max-concurrency {{matrix.concurrency}}
        plugins:
          - docker#v5.12.0:
              image: vllm/vllm-openai:latest
              gpus: all
        matrix:
          setup:
            concurrency: ["1", "8"]
        depends_on: [qwen3_5-b200]
        soft_fail: true
`

// uploadEnv is a plausible uploader environment: values here must never reach
// a step that escaped its `$`.
var uploadEnv = map[string]string{"HOME": "/home/uploader", "HF_HOME": "/uploader/hf"}

func schemaPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.SharedDir(t), SchemaFile)
}

func decode(t *testing.T, j []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatalf("agent JSON: %v\n%s", err, j)
	}
	return m
}

func stepField(t *testing.T, doc map[string]any, path ...any) any {
	t.Helper()
	var cur any = doc
	for _, p := range path {
		switch p := p.(type) {
		case string:
			cur = cur.(map[string]any)[p]
		case int:
			cur = cur.([]any)[p]
		}
	}
	return cur
}

func TestValidPipelinePassesAllValidators(t *testing.T) {
	y := []byte(validPipeline)
	ValidateSchema(t, y)
	p := RoundTrip(t, y)
	if len(p.Steps) != 4 {
		t.Errorf("parsed %d steps, want 4", len(p.Steps))
	}
	lib := Interpolated(t, y, uploadEnv)
	agent := DryRun(t, y, uploadEnv)

	// The agent (go-pipeline v0.10.0 inside) and go-pipeline v0.18.1 agree
	// on these shapes, so either can stand in for "what gets uploaded".
	if d := cmp.Diff(decode(t, lib), decode(t, agent)); d != "" {
		t.Errorf("go-pipeline Interpolate vs agent dry-run (-lib +agent):\n%s", d)
	}

	doc := decode(t, agent)
	wantCmd := `INGEST_BEARER_TOKEN="$(buildkite-agent secret get INGEST_BEARER_TOKEN)" && export INGEST_BEARER_TOKEN
export HF_HOME="${HF_HOME:-$(pwd)/.hf-cache}" PATH="$(pwd)/.venv/bin:$HOME/.local/bin:$PATH"
./lib/run.sh workloads/qwen3_5_b200.yaml`
	if got := stepField(t, doc, "steps", 0, "command"); got != wantCmd {
		t.Errorf("k8s step command after upload:\n got %q\nwant %q", got, wantCmd)
	}
	if got := stepField(t, doc, "steps", 1, "command"); got != `sbatch --wait --parsable job.sbatch && echo "job ${SLURM_JOB_ID:-none}"` {
		t.Errorf("slurm step command after upload: %q", got)
	}
	for _, k := range []string{"concurrency", "concurrency_group", "concurrency_method"} {
		if stepField(t, doc, "steps", 1, k) == nil {
			t.Errorf("agent dropped %s", k)
		}
	}
	plugin := stepField(t, doc, "steps", 0, "plugins", 0).(map[string]any)
	spec := plugin["github.com/buildkite-plugins/kubernetes-buildkite-plugin"].(map[string]any)["podSpec"].(map[string]any)
	if got := spec["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)["nvidia.com/gpu"]; got != 8.0 {
		t.Errorf("nvidia.com/gpu limit = %#v, want the number 8", got)
	}
}

func TestSchemaRejects(t *testing.T) {
	sp := schemaPath(t)
	for _, tc := range []struct {
		name, yaml string
		want       []Violation // Pointer and Message only
	}{{
		name: "timeout as string",
		yaml: "steps:\n  - command: x\n    key: a\n    timeout_in_minutes: \"x\"\n",
		want: []Violation{{Pointer: "/steps/0/timeout_in_minutes", Message: "got string, want integer"}},
	}, {
		name: "quoted number is a string too",
		yaml: "steps:\n  - command: x\n    timeout_in_minutes: \"60\"\n",
		want: []Violation{{Pointer: "/steps/0/timeout_in_minutes", Message: "got string, want integer"}},
	}, {
		name: "unknown step type",
		yaml: "steps:\n  - command: x\n  - frobnicate: {}\n",
		want: []Violation{{Pointer: "/steps/1", Message: "additional properties 'frobnicate' not allowed"}},
	}, {
		name: "unknown command-step field",
		yaml: "steps:\n  - label: b\n    command: x\n    bogus: 1\n",
		want: []Violation{{Pointer: "/steps/0", Message: "additional properties 'bogus' not allowed"}},
	}, {
		name: "bad matrix dimension name inside a group",
		yaml: "steps:\n  - group: g\n    steps:\n      - command: x\n        key: inner\n        matrix: {setup: {a-b: [\"1\"]}}\n",
		want: []Violation{{Pointer: "/steps/0/steps/0/matrix/setup/a-b", Message: "'a-b' does not match pattern '^[a-zA-Z0-9_]+$'"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSchema(sp, []byte(tc.yaml))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("CheckSchema = %v, want a *SchemaError", err)
			}
			var got []Violation
			for _, v := range se.Violations {
				got = append(got, Violation{Pointer: v.Pointer, Message: v.Message})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("violations (-want +got):\n%s\nfull error:\n%v", d, err)
			}
		})
	}
}

func TestSchemaErrorNamesTheStep(t *testing.T) {
	err := CheckSchema(schemaPath(t), []byte("steps:\n  - command: x\n  - command: y\n    key: bench-b\n    label: B\n    timeout_in_minutes: 0\n"))
	if err == nil {
		t.Fatal("timeout_in_minutes: 0 accepted")
	}
	want := `at /steps/1/timeout_in_minutes (in step /steps/1 key "bench-b", label "B"): `
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func TestSchemaConversionRejectsWhatTheAgentSilentlyAccepts(t *testing.T) {
	sp := schemaPath(t)
	for name, y := range map[string]string{
		"duplicate key":   "steps:\n  - command: x\n    key: a\n    key: b\n",
		"second document": "steps:\n  - command: x\n---\nsteps:\n  - command: y\n",
	} {
		if err := CheckSchema(sp, []byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
