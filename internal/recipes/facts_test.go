package recipes

import (
	"fmt"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// The facts vet rests on, one table per fact, each row checked against
// the source cited beside the code that states it.

var strategyFiles = map[string]string{
	"single_node_tp":   "deploy_type: single_node\nhardware_match: {min_gpus: 1, max_gpus: 8, multi_node: false}\nparallel_flag: \"--tensor-parallel-size\"\n",
	"single_node_dep":  "deploy_type: single_node\nhardware_match: {min_gpus: 2, max_gpus: 8, multi_node: false, architecture: moe}\nvllm_args: [\"--enable-expert-parallel\"]\nparallel_flag: \"--data-parallel-size\"\n",
	"multi_node_tp":    "deploy_type: multi_node\nhardware_match: {min_gpus: 16, multi_node: true}\nparallel_flag: \"--tensor-parallel-size\"\n",
	"multi_node_tp_dp": "deploy_type: multi_node\nhardware_match: {min_gpus: 16, multi_node: true}\nparallelism: tp_dp\nparallel_flag: \"--tensor-parallel-size\"\n",
}

// synth vets a checkout of the given taxonomy profiles (YAML lines under
// hardware_profiles), the strategies above and one recipe, models/org/m.yaml,
// made of meta.hardware entries, the model block's extra lines and the rest.
func synth(t *testing.T, profiles, hardware, model, rest string, strategies ...string) Findings {
	t.Helper()
	files := map[string]string{
		"taxonomy.yaml": "hardware_profiles:\n" + profiles +
			"tasks:\n  - {id: text, display_name: Text, description: d}\nstrategies: [" + strings.Join(strategies, ", ") + "]\n",
		"models/org/m.yaml": "meta:\n  title: t\n  slug: s\n  provider: p\n  description: d\n  date_added: 2026-05-01\n  date_updated: 2026-05-02\n  difficulty: advanced\n  tasks: [text]\n  hardware:\n" + hardware +
			"model:\n  model_id: org/m\n  min_vllm_version: \"0.20.0\"\n  parameter_count: 30B\n  context_length: 4096\n  base_args: []\n" + model +
			rest + "compatible_strategies: [" + strings.Join(strategies, ", ") + "]\nguide: g\n",
	}
	for _, s := range strategies {
		files["strategies/"+s+".yaml"] = "name: " + s + "\ndisplay_name: S\norientation: latency\ndescription: d\n" + strategyFiles[s]
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, files)
	s, err := Load(cuecontext.New(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := Vet(s)
	for _, f := range out {
		if f.Kind == KindSchema {
			t.Fatalf("synthetic checkout rejected: %s", f.Diagnostic)
		}
	}
	return out
}

func ofKind(fs Findings, kind string) Findings {
	var out Findings
	for _, f := range fs {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

const h200 = "  h200: {brand: NVIDIA, generation: hopper, display_name: H200, description: d, gpu_count: 8, vram_gb: 1128, multi_node: true}\n"

// A MoE model's experts are sharded over every TP×DP rank
// (FusedMoEParallelConfig.make, vllm/model_executor/layers/fused_moe/
// config.py), so multi_node_tp_dp adds memory across nodes for MoE models
// only; a dense model keeps a full replica per node.
func TestMultiNodeTPDPMemory(t *testing.T) {
	for _, c := range []struct {
		arch      string
		vram      int
		wantError bool // nothing offered spans nodes and the weights exceed a node
		wantShort bool // memory-per-strategy-nodes: tp_dp cannot hold it
	}{
		{"moe", 1800, false, false}, // two H200 nodes hold 2256 GB of experts
		{"moe", 2400, false, true},  // ... but not 2400 GB: 3 nodes needed
		{"dense", 1800, true, true}, // one replica per node: 1128 GB
		{"dense", 1000, false, false},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.arch, c.vram), func(t *testing.T) {
			active := ""
			if c.arch == "moe" {
				active = "  active_parameters: 3B\n"
			}
			fs := synth(t, h200, "    h200: verified\n", "  architecture: "+c.arch+"\n"+active,
				fmt.Sprintf("variants:\n  default: {precision: bf16, vram_minimum_gb: %d}\n", c.vram), "single_node_tp", "multi_node_tp_dp")
			gotError := len(ofKind(fs, KindMemoryNode)) > 0 && ofKind(fs, KindMemoryNode)[0].Severity == diag.Error
			if gotError != c.wantError {
				t.Errorf("error = %v, want %v: %v", gotError, c.wantError, fs)
			}
			if got := len(ofKind(fs, KindMemoryNodes)) > 0; got != c.wantShort {
				t.Errorf("short multi-node capacity reported = %v, want %v: %v", got, c.wantShort, fs)
			}
		})
	}
}

// The kernel tables: Xe2 runs INT8 W8A8 through Triton (_POSSIBLE_INT8_
// KERNELS[PlatformEnum.XPU] in vllm/model_executor/kernels/linear/
// __init__.py), and the Arc Pro B60 (Xe2, Intel's product brief) uses the
// same table as the B70, so its variants are checked too.
func TestKernelTables(t *testing.T) {
	sch, err := CompileSchema(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, precision string
		arch          string
		runs          bool
	}{
		{"arc_pro_b70", "int8", "xe2", true},
		{"arc_pro_b60", "int8", "xe2", true},
		{"arc_pro_b60", "int4", "xe2", true},
		{"arc_pro_b60", "nvfp4", "xe2", false},
		{"h200", "int8", "sm_90", true},
		{"trillium", "int8", "", false}, // no kernel table: unchecked
	} {
		arch, _, ok := sch.Architecture(&Profile{ID: c.id})
		if arch != c.arch || ok != (c.arch != "") {
			t.Errorf("%s: architecture %q (%v), want %q", c.id, arch, ok, c.arch)
			continue
		}
		if !ok {
			continue
		}
		if _, runs := sch.Architectures[arch].Weights[c.precision]; runs != c.runs {
			t.Errorf("%s (%s) runs %s = %v, want %v", c.id, arch, c.precision, runs, c.runs)
		}
	}
}

// A per-GPU figure labelled GB may be decimal GB or GiB: the taxonomy's
// figure is consistent when it lies between the device's memory in GiB and
// in GB (the driver's report where known, schema/hardware.cue).
func TestTaxonomyMemoryUnits(t *testing.T) {
	sch, err := CompileSchema(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hw     string
		perGPU float64
		ok     bool
	}{
		{"GB200", 192, true},  // taxonomy 768/4; driver 189471 MiB = 185.0 GiB = 198.7 GB
		{"GB200", 186, true},  // the NVL72 spec's figure
		{"GB200", 200, false}, // more than the device has in either unit
		{"GB200", 180, false},
		{"H200", 141, true}, // 143771 MiB = 140.4 GiB
		{"H200", 160, false},
		{"B200", 180, true},   // 183359 MiB = 179.1 GiB
		{"MI325X", 256, true}, // datasheet only: 238.4–274.9
		{"MI325X", 300, false},
	} {
		lo, hi, _ := memoryReadings(sch.Hardware[c.hw])
		if ok := c.perGPU >= lo-0.5 && c.perGPU <= hi+0.5; ok != c.ok {
			t.Errorf("%s %g GB per GPU consistent = %v, want %v (range %.1f–%.1f)", c.hw, c.perGPU, ok, c.ok, lo, hi)
		}
	}
}

// Any meta.hardware value declares a GPU; only verified and unsupported
// mean anything else. On a restricted profile the entry is what puts the
// GPU in the picker (CommandBuilder.jsx hwByBrand), so the advice must not
// be to remove it.
func TestHardwareStatusAdvice(t *testing.T) {
	profiles := h200 + "  spark: {brand: NVIDIA, generation: blackwell, display_name: S, description: d, gpu_count: 1, vram_gb: 128, multi_node: false, restricted: true}\n"
	fs := ofKind(synth(t, profiles, "    h200: supported\n    spark: supported\n", "  architecture: dense\n",
		"variants:\n  default: {precision: bf16, vram_minimum_gb: 20}\n", "single_node_tp"), KindHardwareStatus)
	if len(fs) != 2 {
		t.Fatalf("want 2 hardware-status findings, got %v", fs)
	}
	for _, c := range []struct {
		path      string
		want, not string
	}{
		{"meta.hardware.h200", "else remove the entry", "keep the entry"},
		{"meta.hardware.spark", "keep the entry (removing it would hide spark)", "else remove the entry"},
	} {
		for _, f := range fs {
			if f.Path != c.path {
				continue
			}
			if f.Severity != diag.Warning || !strings.Contains(f.Message, c.want) || strings.Contains(f.Message, c.not) {
				t.Errorf("%s: %s", c.path, f.Diagnostic)
			}
		}
	}
}

// The install block shows a dependency on hardware whose brand its list
// includes (CommandBuilder.jsx), so any brand of the taxonomy's profiles
// is valid, Huawei included, and a brand no profile has is never shown.
func TestDependencyBrands(t *testing.T) {
	profiles := h200 + "  ascend: {brand: Huawei, generation: npu, display_name: A, description: d, gpu_count: 8, vram_gb: 1024, multi_node: false, restricted: true}\n"
	for _, c := range []struct {
		brand string
		ok    bool
	}{
		{"NVIDIA", true},
		{"Huawei", true},
		{"[NVIDIA, Huawei]", true},
		{"AMD", false}, // no AMD profile in this taxonomy
		// (a spelling outside #RecipeBrand, e.g. nvidia, is a schema error)
	} {
		fs := ofKind(synth(t, profiles, "    h200: verified\n", "  architecture: dense\n",
			"dependencies:\n  - {note: n, command: \"pip install x\", brand: "+c.brand+"}\nvariants:\n  default: {precision: bf16, vram_minimum_gb: 20}\n", "single_node_tp"), KindVocabulary)
		if got := len(fs) == 0; got != c.ok {
			t.Errorf("brand %s accepted = %v, want %v: %v", c.brand, got, c.ok, fs)
		}
	}
}

// A single-node VRAM finding is about the verified mark, so it stands only
// when no variant offered on the hardware fits one node; it is an error
// only when nothing offered spans nodes and the weights alone (vram / 1.2)
// exceed the node, and suggests fixing vram_minimum_gb when they fit.
func TestSingleNodeVRAM(t *testing.T) {
	for _, c := range []struct {
		name       string
		variants   string
		strategies []string
		want       int // findings of kind memory-per-node
		sev        diag.Severity
		fixVRAM    bool
	}{
		{"sibling fits", "  default: {precision: bf16, vram_minimum_gb: 1200}\n  fp8: {precision: fp8, vram_minimum_gb: 600}\n", []string{"single_node_tp", "multi_node_tp"}, 0, diag.Warning, false},
		{"none fits, spans", "  default: {precision: bf16, vram_minimum_gb: 1500}\n", []string{"single_node_tp", "multi_node_tp"}, 1, diag.Warning, false},
		{"only headroom short", "  default: {precision: bf16, vram_minimum_gb: 1300}\n", []string{"single_node_tp", "multi_node_tp"}, 1, diag.Warning, true},
		{"weights exceed, nothing spans", "  default: {precision: bf16, vram_minimum_gb: 1400}\n", []string{"single_node_tp"}, 1, diag.Error, false},
		{"headroom short, nothing spans", "  default: {precision: bf16, vram_minimum_gb: 1300}\n", []string{"single_node_tp"}, 1, diag.Warning, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := ofKind(synth(t, h200, "    h200: verified\n", "  architecture: dense\n", "variants:\n"+c.variants, c.strategies...), KindMemoryNode)
			if len(fs) != c.want {
				t.Fatalf("want %d memory-per-node findings, got %v", c.want, fs)
			}
			if c.want == 0 {
				return
			}
			if fs[0].Severity != c.sev {
				t.Errorf("severity %v, want %v: %s", fs[0].Severity, c.sev, fs[0].Diagnostic)
			}
			if got := strings.Contains(fs[0].Message, "vram_minimum_gb overstates"); got != c.fixVRAM {
				t.Errorf("suggests fixing vram_minimum_gb = %v, want %v: %s", got, c.fixVRAM, fs[0].Diagnostic)
			}
		})
	}
}

// The layout a rendering needs per node: data-parallel ranks on the node
// times their TP×PP group, a group spanning --nnodes nodes split over them
// (get_device_indices, vllm/v1/engine/utils.py).
func TestGPUsPerNode(t *testing.T) {
	for _, c := range []struct {
		args string
		want int
	}{
		{"--tensor-parallel-size 8", 8},
		{"--data-parallel-size 4", 4},
		{"--data-parallel-size 8 --tensor-parallel-size 2", 16},
		{"--tensor-parallel-size 16 --nnodes 2 --node-rank 0", 8},
		{"--tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2", 8},
		{"--data-parallel-size 16 --data-parallel-size-local 8 --tensor-parallel-size 8", 64},
		{"--tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1", 8},
		{"-tp=2 --data-parallel-size 4", 8},
	} {
		toks := strings.Fields(c.args)
		got, _, _ := gpusPerNode(Group(toks, make([]Pos, len(toks)), "recipe"))
		if got != c.want {
			t.Errorf("%s: %d GPUs per node, want %d", c.args, got, c.want)
		}
	}
}
