package check_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/schema"
)

// TestRenderOptions: the option fields of a serve block become argv in
// the order written; each finding sits at the field (or extra_args entry)
// that caused it, and a refused field renders nothing.
func TestRenderOptions(t *testing.T) {
	cat := vllmflags.Builtin().For("vllm/vllm-openai:v0.13.0")
	if cat.StandIn != "" {
		t.Fatalf("v0.13.0 has a catalog of its own, got a stand-in: %s", cat.StandIn)
	}
	argv, ds := check.RenderOptions(cat, "disagg.prefill.serve", []check.Option{
		{Name: "enable_chunked_prefill", Value: true},
		{Name: "port", Value: int64(9000)},
		{Name: "enable_chunked_prefil", Value: true},
		{Name: "swap_space", Err: errors.New("cannot use value 1.5 (type float) as int")},
		{Name: "max_num_partial_prefills", Value: int64(2)},
	}, []string{"--max-num-partial-prefills", "4", "--seed", "1"})
	if want := []string{"--enable-chunked-prefill", "--max-num-partial-prefills", "2"}; !slices.Equal(argv, want) {
		t.Errorf("argv %q, want %q", argv, want)
	}
	var paths []string
	for _, d := range ds {
		if d.Severity != diag.Error {
			t.Errorf("%s: severity %v, want an error", d.Path, d.Severity)
		}
		paths = append(paths, d.Path)
	}
	want := []string{"disagg.prefill.serve.port", "disagg.prefill.serve.enable_chunked_prefil", "disagg.prefill.serve.swap_space", "disagg.prefill.serve.extra_args[0]"}
	if d := cmp.Diff(want, paths); d != "" {
		t.Fatalf("finding paths (-want +got)\n%s", d)
	}
	for i, sub := range []string{"--port is set by", "did you mean enable_chunked_prefill?", "as int", "repeats disagg.prefill.serve.max_num_partial_prefills"} {
		if !strings.Contains(ds[i].Message, sub) {
			t.Errorf("%s: %q does not say %q", ds[i].Path, ds[i].Message, sub)
		}
	}
	// A name that is no identifier is quoted in the path, which the
	// loader looks up to place the finding.
	if _, ds := check.RenderOptions(cat, "serve", []check.Option{{Name: "x-y", Value: true}}, nil); len(ds) != 1 || ds[0].Path != `serve."x-y"` {
		t.Errorf("findings %+v, want one at serve.\"x-y\"", ds)
	}
	// A catalog standing in for the image's own says so in each finding.
	old := vllmflags.Builtin().For("vllm/vllm-openai:v0.12.0")
	if old.StandIn == "" {
		t.Fatal("v0.12.0 has no catalog of its own: want a stand-in")
	}
	_, ds = check.RenderOptions(old, "serve", []check.Option{{Name: "no_such_option", Value: true}}, nil)
	if len(ds) != 1 || !strings.HasSuffix(ds[0].Message, " ["+old.StandIn+"]") {
		t.Errorf("findings %+v, want one ending in [%s]", ds, old.StandIn)
	}
}

// TestCatalog: the catalog is the one of the image the workload runs,
// which the profile and the export-time overrides decide.
func TestCatalog(t *testing.T) {
	if c := check.Catalog(&check.Workload{}, &check.Env{}); c != nil {
		t.Errorf("no flag catalogs: got %s, want nil", c.Label)
	}
	env := &check.Env{VLLMFlags: vllmflags.Builtin()}
	w := &check.Workload{Workload: schema.Workload{Image: "vllm/vllm-openai:v0.11.0"}}
	if c := check.Catalog(w, env); c.Label != "v0.11.0" || c.StandIn != "" {
		t.Errorf("image v0.11.0: catalog %s (stand-in %q), want v0.11.0's own", c.Label, c.StandIn)
	}
}
