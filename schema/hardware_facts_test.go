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
	// Triton W8A8 INT8 on XPU (_POSSIBLE_INT8_KERNELS[PlatformEnum.XPU]).
	{"xe2", "int8", "native", "TritonInt8ScaledMMLinearKernel", "vllm-xpu-int8"},
	// FP8 on Xe2: serialized FP8 weights load; the GEMM is W8A16.
	{"xe2", "fp8", "fallback", "fp8_gemm_w8a16", "vllm-xpu-fp8"},
	{"xe2", "mxfp4", "fallback", "weight-only MXFP4", "vllm-gptoss"},
}

var sourceTag = regexp.MustCompile(`(?m)^//\s+\[([a-z0-9-]+)\]`)

// hardwareSource is hardware.cue's text and the tags of its source list.
func hardwareSource(t *testing.T) (string, map[string]bool) {
	t.Helper()
	src, err := schema.Files.ReadFile("hardware.cue")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for _, m := range sourceTag.FindAllStringSubmatch(string(src), -1) {
		sources[m[1]] = true
	}
	return string(src), sources
}

func TestPrecisionFacts(t *testing.T) {
	v := buildSchema(t, cuecontext.New())
	var archs map[string]schema.ArchitectureFacts
	if err := v.LookupPath(cue.ParsePath("architectures")).Decode(&archs); err != nil {
		t.Fatal(err)
	}
	_, sources := hardwareSource(t)
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

// memoryFacts is every GPU's memory as its sources state it: the
// datasheet's amount and unit, the driver's report where known, and the
// usable GiB the catalog derives (worked out here by hand, not by the
// code under test). A datasheet's decimal "186 GB" is 173.2 GiB; the
// GB200's driver reports 189471 MiB = 185.03 GiB, which the checks use.
var memoryFacts = []struct {
	name            string
	amount          float64
	unit, source    string
	reported        float64 // 0: no driver report in the catalog
	reportedUnit    string
	wantGiB, wantGB float64
}{
	{"H100", 80, "GB", "nv-h100", 81559, "MiB", 79.6474609375, 85.520809984},
	{"H200", 141, "GB", "nv-h200", 143771, "MiB", 140.4013671875, 150.754820096},
	{"B200", 180, "GB", "nv-b200", 183359, "MiB", 179.0615234375, 192.265846784},
	{"B300", 268, "GB", "nv-b300", 0, "", 268e9 / (1 << 30), 268},
	{"GB200", 186, "GB", "nv-gb200", 189471, "MiB", 185.0302734375, 198.674743296},
	{"GB300", 288, "GB", "nv-gb300", 0, "", 288e9 / (1 << 30), 288},
	{"MI300X", 192, "GB", "amd-mi300x", 205822885888, "B", 191.6875, 205.822885888},
	{"MI325X", 256, "GB", "amd-mi325x", 0, "", 256e9 / (1 << 30), 256},
	{"MI355X", 288, "GB", "amd-mi355x", 0, "", 288e9 / (1 << 30), 288},
	{"ARC_PRO_B70", 32, "GB", "intel-b70", 0, "", 32e9 / (1 << 30), 32},
}

var hardwareLine = regexp.MustCompile(`(?m)^\s+([A-Z0-9_]+): \{vendor:.*// (\[.*\])$`)

func TestMemoryFacts(t *testing.T) {
	v := buildSchema(t, cuecontext.New())
	var hw map[string]schema.Hardware
	if err := v.LookupPath(cue.ParsePath("hardware")).Decode(&hw); err != nil {
		t.Fatal(err)
	}
	src, sources := hardwareSource(t)
	cites := map[string]string{}
	for _, m := range hardwareLine.FindAllStringSubmatch(src, -1) {
		cites[m[1]] = m[2]
	}
	near := func(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }
	seen := map[string]bool{}
	for _, f := range memoryFacts {
		seen[f.name] = true
		t.Run(f.name, func(t *testing.T) {
			h, ok := hw[f.name]
			if !ok {
				t.Fatalf("no %s in the catalog", f.name)
			}
			if !sources[f.source] || !strings.Contains(cites[f.name], "["+f.source+"]") {
				t.Errorf("%s cites %s, want [%s] from hardware.cue's source list", f.name, cites[f.name], f.source)
			}
			if h.Memory.Amount != f.amount || h.Memory.Unit != f.unit {
				t.Errorf("%s memory = %g %s, want %g %s as [%s] publishes it", f.name, h.Memory.Amount, h.Memory.Unit, f.amount, f.unit, f.source)
			}
			switch {
			case f.reported == 0 && h.Reported != nil:
				t.Errorf("%s has a driver report (%g %s) this table lacks", f.name, h.Reported.Amount, h.Reported.Unit)
			case f.reported != 0 && (h.Reported == nil || h.Reported.Amount != f.reported || h.Reported.Unit != f.reportedUnit):
				t.Errorf("%s reported = %+v, want %g %s [drv-report]", f.name, h.Reported, f.reported, f.reportedUnit)
			case f.reported != 0 && !strings.Contains(cites[f.name], "[drv-report]"):
				t.Errorf("%s's driver report cites no [drv-report]", f.name)
			}
			if !near(h.MemoryGiB, f.wantGiB) || !near(h.MemoryGB, f.wantGB) {
				t.Errorf("%s usable = %v GiB / %v GB, want %v GiB / %v GB", f.name, h.MemoryGiB, h.MemoryGB, f.wantGiB, f.wantGB)
			}
		})
	}
	for name := range hw {
		if !seen[name] {
			t.Errorf("catalog hardware %s has no memory row (and source) here", name)
		}
	}
	// The datasheet's decimal GB are converted, never read as GiB.
	if g := hw["GB200"].Memory.GiB; !near(g, 186e9/(1<<30)) {
		t.Errorf("GB200's published 186 GB = %v GiB, want %v", g, 186e9/(1<<30))
	}
}
