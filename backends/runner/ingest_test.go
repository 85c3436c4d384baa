package runner

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/results/ingest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// goodRows are one valid row per definition.
var goodRows = map[string]string{
	ingest.PerfRow: `{"date":"2026-12-01 10:00:00","device":"b200","conc":8,"image":"vllm/vllm-openai:nightly","model":"m",
		"framework":"vllm","precision":"fp4","spec_decoding":"false","disagg":"false","isl":1024,"osl":128,
		"is_multinode":"false","tp":8,"ep":1,"dp_attention":"false","dp":1,"num_nodes":1,"gpus_per_node":8,"gpu_count":8,
		"tput_per_gpu":10.5,"output_tput_per_gpu":2,"input_tput_per_gpu":8.5,"nightly":true,
		"mean_ttft":0.1,"p99.9_itl":0.2,"median_intvty":40}`,
	ingest.EvalResultsRow: `{"kind":"results","source_file":"results/w/lm_eval/gsm8k/m/results_1.json","workload":"w","task":"gsm8k",
		"buildkite_build_number":"7","image":"i","vllm_commit":"abc","nightly":true,
		"data":{"results":{"gsm8k":{"exact_match,strict-match":0.9}},"config":{"model":"local-completions"}}}`,
	ingest.EvalSamplesRow: `{"kind":"samples","source_file":"results/w/lm_eval/gsm8k/m/samples_gsm8k_1.jsonl","workload":"w","task":"gsm8k",
		"samples":[{"doc_id":0,"exact_match":1},{"doc_id":1}]}`,
}

// badValues replace each field in turn: every one of them breaks some field.
var badValues = []any{"", "x", "true", 1, 0, -1, 1.5, true, false, nil, []any{}, map[string]any{}}

// variants are the good row and, for every field, the row without it and
// with each bad value, plus unknown and pattern fields.
func variants(t *testing.T, good string) []map[string]any {
	var base map[string]any
	if err := json.Unmarshal([]byte(good), &base); err != nil {
		t.Fatal(err)
	}
	clone := func() map[string]any {
		var m map[string]any
		b, _ := json.Marshal(base)
		json.Unmarshal(b, &m)
		return m
	}
	out := []map[string]any{clone()}
	for k := range base {
		m := clone()
		delete(m, k)
		out = append(out, m)
		for _, v := range badValues {
			m := clone()
			m[k] = v
			out = append(out, m)
		}
	}
	for _, extra := range []map[string]any{
		{"zzz": 1}, {"mean_foo": 3}, {"mean_foo": -3}, {"mean_foo": "s"}, {"p50_ttft": 0}, {"pxx_ttft": 1},
		{"samples": []any{}}, {"samples": []any{1}}, {"data": map[string]any{"config": map[string]any{}}},
		{"data": map[string]any{"results": map[string]any{}, "extra": 1}}, {"date": "2026-12-01T10:00:00"},
	} {
		m := clone()
		for k, v := range extra {
			m[k] = v
		}
		out = append(out, m)
	}
	return out
}

// TestIngestCheckAgreesWithCUE: the job's check (ingest.py against the
// description internal/results/ingest derives) and CUE itself (schema/ingest.cue)
// accept and refuse exactly the same rows.
func TestIngestCheckAgreesWithCUE(t *testing.T) {
	testenv.LookPath(t, "python3")
	shapes, err := ingest.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range ingest.Rows {
		t.Run(strings.TrimPrefix(def, "#"), func(t *testing.T) {
			rows := variants(t, goodRows[def])
			var in bytes.Buffer
			for _, r := range rows {
				b, _ := json.Marshal(r)
				in.Write(append(b, '\n'))
			}
			cmd := exec.Command("python3", "-c", ingestPy, "check", shapes, def)
			cmd.Stdin = &in
			out, _ := cmd.Output()
			verdicts := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(verdicts) != len(rows) {
				t.Fatalf("ingest.py check printed %d verdicts for %d rows:\n%s", len(verdicts), len(rows), out)
			}
			refused := 0
			for i, r := range rows {
				b, _ := json.Marshal(r)
				cueErr := ingest.Validate(def, b)
				if (cueErr == nil) != (verdicts[i] == "ok") {
					t.Errorf("row %s: CUE says %v, ingest.py says %s", b, cueErr, verdicts[i])
				}
				if cueErr != nil {
					refused++
				}
			}
			if refused == 0 || refused == len(rows) || verdicts[0] != "ok" {
				t.Errorf("%d of %d variants refused (the good row: %s): the table proves nothing", refused, len(rows), verdicts[0])
			}
			t.Logf("%d rows, %d refused by both", len(rows), refused)
		})
	}
}
