package schema_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/schema"
)

// precisionFacts is every (architecture, precision) the catalog says vLLM
// can run, with how and the source it rests on (a tag of hardware.cue's
// source list). A fact added to the catalog without a row here, or a row
// the catalog contradicts, fails TestPrecisionFacts.
var precisionFacts = []struct {
	arch, precision, path, kernel, source string
}{
	{"sm_90", "bf16", "native", "cuBLAS", "vllm-quant"},
	{"sm_90", "fp16", "native", "cuBLAS", "vllm-quant"},
	{"sm_90", "fp8", "native", "CUTLASS FP8", "vllm-quant"},
	{"sm_90", "int8", "native", "CUTLASS INT8", "vllm-quant"},
	{"sm_90", "int4", "native", "Marlin", "vllm-quant"},
	{"sm_90", "mxfp4", "fallback", "weight-only MXFP4", "vllm-gptoss"},
	{"sm_90", "mxfp4_fp8", "fallback", "Marlin weight-only MXFP4", "vllm-gptoss"},
	// NVFP4 on Hopper: FP4 Marlin, weight-only; native needs SM100's FP4
	// tensor cores.
	{"sm_90", "nvfp4", "fallback", "FP4 Marlin", "vllm-fp4-marlin"},
	{"sm_100", "bf16", "native", "cuBLAS", "vllm-quant"},
	{"sm_100", "fp16", "native", "cuBLAS", "vllm-quant"},
	{"sm_100", "fp8", "native", "FP8", "vllm-quant"},
	{"sm_100", "int8", "native", "INT8", "vllm-quant"},
	{"sm_100", "int4", "native", "Marlin", "vllm-quant"},
	{"sm_100", "nvfp4", "native", "FP4", "vllm-quant"},
	{"sm_100", "mxfp4", "native", "MXFP4", "vllm-gptoss"},
	{"sm_100", "mxfp8", "native", "MXFP8", "vllm-quant"},
	{"sm_100", "mxfp4_fp8", "native", "MXFP4", "vllm-gptoss"},
	{"gfx942", "bf16", "native", "hipBLASLt", "vllm-quant"},
	{"gfx942", "fp16", "native", "hipBLASLt", "vllm-quant"},
	{"gfx942", "fp8", "native", "FP8", "vllm-quant"},
	{"gfx942", "int8", "native", "INT8", "vllm-quant"},
	{"gfx942", "int4", "fallback", "Triton", "vllm-quant"},
	{"gfx942", "mxfp4", "fallback", "weight-only MXFP4", "vllm-gptoss"},
	{"gfx942", "mxfp4_fp8", "fallback", "weight-only MXFP4", "vllm-gptoss"},
	{"gfx950", "bf16", "native", "hipBLASLt", "vllm-quant"},
	{"gfx950", "fp16", "native", "hipBLASLt", "vllm-quant"},
	{"gfx950", "fp8", "native", "FP8", "vllm-quant"},
	{"gfx950", "int8", "native", "INT8", "vllm-quant"},
	{"gfx950", "int4", "fallback", "Triton", "vllm-quant"},
	{"gfx950", "mxfp4", "native", "MXFP4", "amd-mi355x"},
	{"gfx950", "mxfp8", "native", "MXFP8", "amd-mi355x"},
	{"gfx950", "mxfp4_fp8", "native", "MXFP4", "amd-mi355x"},
	{"xe2", "bf16", "native", "oneDNN", "vllm-gptoss"},
	{"xe2", "fp16", "native", "oneDNN", "vllm-gptoss"},
	{"xe2", "int4", "native", "INT4", "vllm-quant"},
	{"xe2", "mxfp4", "fallback", "weight-only MXFP4", "vllm-gptoss"},
}

var sourceTag = regexp.MustCompile(`(?m)^//\s+\[([a-z0-9-]+)\]`)

func TestPrecisionFacts(t *testing.T) {
	v := buildSchema(t, cuecontext.New())
	var archs map[string]schema.ArchitectureFacts
	if err := v.LookupPath(cue.ParsePath("architectures")).Decode(&archs); err != nil {
		t.Fatal(err)
	}
	src, err := schema.Files.ReadFile("hardware.cue")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for _, m := range sourceTag.FindAllStringSubmatch(string(src), -1) {
		sources[m[1]] = true
	}
	covered := map[string]bool{}
	for _, f := range precisionFacts {
		key := f.arch + "/" + f.precision
		covered[key] = true
		t.Run(key, func(t *testing.T) {
			if !sources[f.source] {
				t.Errorf("source [%s] is not in hardware.cue's source list", f.source)
			}
			got, ok := archs[f.arch].Weights[f.precision]
			if !ok {
				t.Fatalf("the catalog has no %s on %s [%s]", f.precision, f.arch, f.source)
			}
			if got.Path != f.path || !strings.Contains(got.Kernel, f.kernel) {
				t.Errorf("%s on %s = %s (%s), want %s through …%s… [%s]", f.precision, f.arch, got.Path, got.Kernel, f.path, f.kernel, f.source)
			}
		})
	}
	var missing []string
	for a, facts := range archs {
		if a == "sm_103" {
			continue // Blackwell Ultra is sm_100's table [nv-b300]
		}
		for p := range facts.Weights {
			if !covered[a+"/"+p] {
				missing = append(missing, a+"/"+p)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("catalog facts without a row (and a source) here: %s", strings.Join(missing, ", "))
	}
	if fmt.Sprint(archs["sm_103"]) != fmt.Sprint(archs["sm_100"]) {
		t.Errorf("sm_103 differs from sm_100; give it its own rows")
	}
}
