package selection

import (
	"reflect"
	"strings"
	"testing"
)

var cands = []Candidate{
	{Name: "qwen_b200", File: "workloads/qwen_b200.cue", Nightly: true},
	{Name: "llama_h200", File: "workloads/llama_h200.cue", Nightly: true},
	{Name: "gpt_oss_h200", File: "workloads/gpt_oss_h200.cue"},
	{Name: "kimi_gb300", File: "workloads/kimi_gb300.cue"},
	{Name: "two_a", File: "workloads/two.cue"},
	{Name: "two_b", File: "workloads/two.cue"},
}

func TestSplit(t *testing.T) {
	got := Split(" a, b\n\nc ,\r\n, ")
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %q, want %q", got, want)
	}
	if got := Split(" , \n"); len(got) != 0 {
		t.Errorf("blank WORKLOADS = %q, want no entries", got)
	}
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		entries []string
		want    []string
	}{
		{[]string{"llama_h200", "qwen_b200"}, []string{"llama_h200", "qwen_b200"}}, // order given
		{[]string{"workloads/qwen_b200.cue"}, []string{"qwen_b200"}},               // path
		{[]string{"./workloads/qwen_b200.cue"}, []string{"qwen_b200"}},             // ./path
		{[]string{"workloads/qwen_b200.yaml"}, []string{"qwen_b200"}},              // perf-eval path
		{[]string{"two"}, []string{"two_a", "two_b"}},                              // stem of a file with two workloads
		{[]string{"qwen_b200", "qwen_b200"}, []string{"qwen_b200"}},                // duplicates run once
	} {
		got, err := Pick(cands, tc.entries)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Pick(%q) = %q, %v; want %q", tc.entries, got, err, tc.want)
		}
	}
}

func TestPickUnknownSuggests(t *testing.T) {
	_, err := Pick(cands, []string{"qwen_b20", "llama_h200", "workloads/lama_h200.cue", "zzzzzzzzzzzzzzzzzzzz"})
	want := []string{
		`unknown workload "qwen_b20"; did you mean qwen_b200?`,
		`unknown workload "workloads/lama_h200.cue"; did you mean llama_h200?`,
		`unknown workload "zzzzzzzzzzzzzzzzzzzz"`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Pick error:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

func TestNightly(t *testing.T) {
	got, err := Nightly(cands)
	if want := []string{"llama_h200", "qwen_b200"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Nightly = %q, %v; want %q", got, err, want)
	}
	if _, err := Nightly(cands[2:]); err == nil || !strings.Contains(err.Error(), "no workload is marked nightly") {
		t.Errorf("Nightly without nightly workloads: %v", err)
	}
}
