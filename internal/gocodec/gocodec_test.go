package gocodec_test

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/gocodec"
	"github.com/wlcdev/wlc/schema"
)

// exact makes cmp as strict as the codec promises to be: floats by their
// bits (cmp's == would take -0 for 0) and big numbers by value, precision,
// mode and accuracy. cmp already tells nil from empty and an interface's
// dynamic types apart.
var exact = cmp.Options{
	cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }),
	cmp.Comparer(func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }),
	cmp.Comparer(func(a, b *big.Int) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.Cmp(b) == 0
	}),
	cmp.Comparer(func(a, b *big.Float) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.Prec() == b.Prec() && a.Mode() == b.Mode() && a.Acc() == b.Acc() &&
			a.Signbit() == b.Signbit() && a.Text('p', 0) == b.Text('p', 0)
	}),
}

type Engine string

type RawBytes []byte

type Value interface{}

type Base struct {
	ID   int
	Tags []string
}

type Extra struct{ Note string }

type Leaf struct {
	Name  string
	Score *float64
}

type Everything struct {
	Base
	*Extra
	Engine    Engine
	Engines   []Engine
	T, F      bool
	I         int
	I8        int8
	I16       int16
	I32       int32
	I64       int64
	U         uint
	U8        uint8
	U16       uint16
	U32       uint32
	U64       uint64
	UP        uintptr
	F32       float32
	F64       float64
	NegZero   float64
	NegZero32 float32
	Inf       float64
	NegInf32  float32
	Denormal  float64
	Str       string
	EmptyStr  string

	NilPtr *Leaf
	Ptr    *Leaf
	PtrPtr **int

	NilSlice   []string
	EmptySlice []string
	Leaves     []Leaf
	Grid       [][]int
	NilBytes   []byte
	EmptyBytes []byte
	Bytes      []byte
	Raw        RawBytes
	Array      [3]int
	Hash       [4]byte
	NoInts     [0]int
	Unit       struct{}
	Units      []struct{}

	NilMap      map[string]int
	EmptyMap    map[string]int
	LeafMap     map[string]*Leaf
	Named       map[Engine][]int
	NilEnv      map[string]string
	EmptyEnv    map[string]string
	Env         map[string]string
	NilAnyMap   map[string]any
	EmptyAnyMap map[string]any
	AnyMap      map[string]any

	NilAny any
	Anys   []any
	Val    Value
	Vals   map[string]Value

	// Tags change nothing: every field is written.
	Tagged      string `json:"-"`
	Omitted     []int  `json:",omitempty"`
	OmittedZero int    `json:",omitempty"`
}

func bigFloats() []any {
	third := new(big.Float).SetPrec(200).SetMode(big.ToZero)
	third.Quo(big.NewFloat(1), big.NewFloat(3)) // inexact: Acc() == Below
	huge, _, err := big.ParseFloat("0x1p1000", 0, 1000, big.AwayFromZero)
	if err != nil {
		panic(err)
	}
	huge.Add(huge, big.NewFloat(1))
	return []any{
		third,
		huge,
		new(big.Float).Neg(huge),
		big.NewFloat(math.Copysign(0, -1)),
		new(big.Float).SetInf(true),
		new(big.Float), // precision 0
		new(big.Float).SetPrec(7).SetMode(big.ToPositiveInf),
		(*big.Float)(nil),
	}
}

func everything() *Everything {
	score := 0.25
	seven := 7
	p7 := &seven
	return &Everything{
		Base:      Base{ID: 42, Tags: []string{"a", "", "ü"}},
		Extra:     &Extra{Note: "embedded pointer"},
		Engine:    "vllm",
		Engines:   []Engine{"vllm", "sglang"},
		T:         true,
		I:         math.MinInt,
		I8:        math.MinInt8,
		I16:       math.MaxInt16,
		I32:       -1,
		I64:       math.MaxInt64,
		U:         math.MaxUint,
		U8:        math.MaxUint8,
		U16:       1 << 15,
		U32:       math.MaxUint32,
		U64:       math.MaxUint64,
		UP:        0xdeadbeef,
		F32:       1.1,
		F64:       math.Pi,
		NegZero:   math.Copysign(0, -1),
		NegZero32: float32(math.Copysign(0, -1)),
		Inf:       math.Inf(1),
		NegInf32:  float32(math.Inf(-1)),
		Denormal:  math.SmallestNonzeroFloat64,
		Str:       "hello\x00world\xff",

		Ptr:    &Leaf{Name: "leaf", Score: &score},
		PtrPtr: &p7,

		EmptySlice: []string{},
		Leaves:     []Leaf{{}, {Name: "x", Score: new(float64)}},
		Grid:       [][]int{nil, {}, {1, -2, 3}},
		EmptyBytes: []byte{},
		Bytes:      []byte{0, 1, 0x7f, 0x80, 0xff},
		Raw:        RawBytes("raw"),
		Array:      [3]int{-1, 0, 1},
		Hash:       [4]byte{0xde, 0xad, 0xbe, 0xef},
		Units:      make([]struct{}, 5),

		EmptyMap: map[string]int{},
		LeafMap:  map[string]*Leaf{"nil": nil, "empty": {}, "full": {Name: "f", Score: &score}},
		Named:    map[Engine][]int{"vllm": {1}, "sglang": nil, "": {}},
		EmptyEnv: map[string]string{},
		Env:      map[string]string{"B": "2", "A": "1", "": ""},

		EmptyAnyMap: map[string]any{},
		AnyMap: map[string]any{
			"nil":   nil,
			"int64": int64(1),
			"float": 1.0,
			"list":  []any{map[string]any{"a": int64(1), "b": 1.0, "c": []any{}}},
		},

		Anys: append([]any{
			nil, true, false, "", "s",
			int64(1), int64(math.MinInt64), 1, math.MaxInt,
			1.0, math.Copysign(0, -1), math.Inf(-1),
			[]any(nil), []any{}, []any{[]any{nil}},
			map[string]any(nil), map[string]any{},
			[]byte(nil), []byte{}, []byte("bytes"),
			[]any{map[string]any{"a": int64(1), "b": 1.0, "c": []any{}}},
			big.NewInt(0), big.NewInt(-1), new(big.Int).Lsh(big.NewInt(-3), 200), (*big.Int)(nil),
		}, bigFloats()...),
		Val:  int64(3),
		Vals: map[string]Value{"nil": nil, "str": "s", "map": map[string]any{"k": []byte{1}}},

		Tagged:  "written anyway",
		Omitted: []int{},
	}
}

func filledWorkload() *schema.Workload {
	yes := true
	return &schema.Workload{
		Name:          "llama-70b-fp8-tp4",
		Description:   "Llama 3.3 70B, FP8, TP4",
		DashboardName: "llama70b_fp8",
		Profile:       "h100-k8s",
		Recipe: &schema.RecipeRef{
			Model: "meta-llama/Llama-3.3-70B-Instruct", Variant: "fp8", Strategy: "tp",
			Features: []string{"prefix-caching"}, NoFeatures: []string{},
		},
		Nodes:            1,
		GPUsPerNode:      4,
		Model:            "meta-llama/Llama-3.3-70B-Instruct",
		Precision:        "fp8",
		PrecisionPath:    "weights/fp8",
		Image:            "vllm/vllm-openai:v0.11.0",
		PinImage:         true,
		Env:              map[string]string{"VLLM_USE_V1": "1", "NCCL_DEBUG": "WARN", "HF_HUB_OFFLINE": "1"},
		Secrets:          []string{"HF_TOKEN"},
		StartupTimeoutS:  1800,
		TimeoutInMinutes: 120,
		Nightly:          true,
		Port:             8000,
		CheckpointGiB:    70.55,
		ParamsB:          70.6,
		MemoryHeadroom:   0.1,
		Engine:           schema.EngineVLLM,
		Serve: schema.Serve{
			TensorParallelSize:   4,
			DataParallelSize:     1,
			PipelineParallelSize: 1,
			KVCacheDtype:         "fp8",
			MaxModelLen:          int64(32768),
			MaxNumSeqs:           256,
			MaxNumBatchedTokens:  8192,
			GPUMemoryUtilization: 0.9,
			BlockSize:            16,
			EnablePrefixCaching:  &yes,
			TrustRemoteCode:      true,
			ToolCallParser:       "llama3_json",
			EnableAutoToolChoice: true,
			SpeculativeConfig: map[string]any{
				"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B",
				"num_speculative_tokens": int64(3),
			},
			CompilationConfig: map[string]any{
				"cudagraph_mode":          "FULL_AND_PIECEWISE",
				"level":                   int64(3),
				"cudagraph_capture_sizes": []any{int64(1), int64(2), int64(4), int64(8)},
				"pass_config":             map[string]any{"enable_fusion": true, "ratio": 0.5, "empty": []any{}},
				"custom_ops":              []any{},
			},
			AttentionConfig: map[string]any{},
			ExtraArgs:       []string{"--disable-log-requests"},
		},
		LMEval: &schema.LMEval{
			ModelArgs: map[string]any{"max_length": int64(4096), "tokenized_requests": false},
			Tasks: []schema.LMEvalTask{
				{Name: "gsm8k", NumFewshot: 5, ModelArgs: map[string]any{}},
				{Name: "mmlu", NumFewshot: 0},
			},
		},
		VLLMBench: &schema.VLLMBench{
			Metadata: map[string]any{"owner": "perf", "tier": int64(1)},
			Configs: []schema.BenchConfig{{
				Name: "isl1024-osl128", Dataset: "random", InputLen: 1024, OutputLen: 128,
				MaxConcurrency: schema.IntOrList{Values: []int{1, 8, 64}},
				NumPrompts:     schema.IntOrList{Values: []int{200}, Scalar: true},
				Repetitions:    3,
				Args:           map[string]any{"ignore_eos": true, "temperature": 0.0},
			}},
			Sweep: &schema.BenchSweep{
				Shapes:                []schema.SweepShape{{InputLen: 8192, OutputLen: 1024}, {InputLen: 1024, OutputLen: 8192}},
				Concurrency:           schema.Concurrency{Ladder: &schema.ConcurrencyLadder{Start: 1, End: 256, Factor: 2}},
				PromptsPerConcurrency: 10,
				MinPrompts:            50,
				Repetitions:           1,
				Args:                  map[string]any{},
			},
		},
		BFCL: &schema.BFCL{
			TestCategories:   []string{"simple", "multiple"},
			NumThreads:       8,
			Temperature:      0.001,
			MaximumStepLimit: 20,
			MaxTestCases:     map[string]any{"simple": int64(100), "multiple": int64(50)},
		},
		Disagg: &schema.Disagg{
			Prefill: schema.DisaggRole{
				Count: 2, Nodes: 1, Port: 8100,
				KVTransfer: &schema.KVTransfer{
					KVConnector: "NixlConnector", KVRole: "kv_producer", KVBufferDevice: "cuda",
					KVConnectorExtraConfig: map[string]any{"backends": []any{"UCX"}, "num_threads": int64(4)},
				},
				Serve: schema.Serve{TensorParallelSize: 2, MaxModelLen: "auto", ExtraArgs: []string{}},
				Env:   map[string]string{"UCX_TLS": "all"},
			},
			Decode: schema.DisaggRole{Count: 1, Nodes: 1, Port: 8200, Serve: schema.Serve{TensorParallelSize: 4}},
			Router: schema.Router{
				Command: []string{"vllm-router"}, Policy: "round_robin", IntraNodeDataParallelSize: 1,
				StartupTimeoutS: 600, Env: map[string]string{}, ExtraArgs: nil,
			},
		},
		IdleGPUs:     &schema.IdleGPUs{Count: 4, Reason: "disagg leaves half the node idle"},
		BackendSweep: &schema.BackendSweep{Attention: []string{"FLASH_ATTN", "FLASHINFER"}, MoE: []string{}},
		CustomSteps: []schema.CustomStep{
			{Name: "warm", Where: "before", Script: "echo warm\n", Env: map[string]string{}},
			{Name: "probe", Where: "after", Command: []string{"curl", "-sf", "localhost:8000/health"}},
		},
		CustomJob: &schema.CustomJob{Where: "node", Command: []string{"nvidia-smi"}, Env: nil},
	}
}

// sglangWorkload fills the fields filledWorkload leaves out.
func sglangWorkload() *schema.Workload {
	return &schema.Workload{
		Name: "qwen-sglang", Profile: "b200", Nodes: 2, GPUsPerNode: 8,
		Model: "Qwen/Qwen3-235B-A22B", Precision: "bf16", Engine: schema.EngineSGLang,
		Env: map[string]string{}, Secrets: []string{}, BenchOnly: true,
		Serve: schema.Serve{MaxModelLen: "auto", CompilationConfig: map[string]any{}},
		SGLang: &schema.SGLangServe{
			TPSize: 8, PPSize: 2, DPSize: 1, EPSize: 8, EnableDPAttention: true,
			ContextLength: 131072, MemFractionStatic: 0.85, KVCacheDtype: "fp8_e4m3",
			AttentionBackend: "fa3", MoEA2ABackend: "deepep", SpeculativeAlgorithm: "EAGLE",
			SpeculativeNumSteps: 3, SpeculativeEagleTopK: 1, SpeculativeNumDraftTokens: 4,
			ReasoningParser: "qwen3", ExtraArgs: []string{},
		},
		SGLangBench: &schema.SGLangBench{
			Metadata: nil,
			Configs: []schema.SGLangBenchConfig{{
				Name: "short", InputLen: 128, OutputLen: 128,
				MaxConcurrency: schema.IntOrList{Values: []int{16}, Scalar: true},
				NumPrompts:     schema.IntOrList{Values: []int{}},
				Backend:        "sglang-oai", Dataset: "random", Args: map[string]any{"seed": int64(0)},
			}},
		},
		VLLMBench: &schema.VLLMBench{Sweep: &schema.BenchSweep{Concurrency: schema.Concurrency{List: []int{1, 2}}}},
		BFCL:      &schema.BFCL{MaxTestCases: int64(25)},
	}
}

// roundTrip encodes v, decodes into a new T, compares exactly, and checks
// that re-encoding gives the same bytes.
func roundTrip[T any](t *testing.T, v *T) []byte {
	t.Helper()
	data, err := gocodec.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if k := reflect.TypeFor[T]().Kind(); k != reflect.Pointer && k != reflect.Interface {
		byValue, err := gocodec.Marshal(*v)
		if err != nil || !bytes.Equal(byValue, data) {
			t.Fatalf("Marshal(*v) = %x, %v; want Marshal(v)", byValue, err)
		}
	}
	got := new(T)
	if err := gocodec.Unmarshal(data, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v, got, exact); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	again, err := gocodec.Marshal(got)
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("re-encoding differs (err %v)", err)
	}
	return data
}

func TestRoundTrip(t *testing.T) {
	t.Run("everything", func(t *testing.T) { roundTrip(t, everything()) })
	t.Run("zero", func(t *testing.T) { roundTrip(t, &Everything{}) })
	t.Run("overwrites", func(t *testing.T) {
		// Decoding replaces what was there: nothing of it may show
		// through (a kept map entry, a non-nil slice, a pointer).
		data, err := gocodec.Marshal(&Everything{})
		if err != nil {
			t.Fatal(err)
		}
		got := everything()
		if err := gocodec.Unmarshal(data, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&Everything{}, got, exact); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
	})
	t.Run("pointer", func(t *testing.T) {
		p := &Leaf{Name: "p"}
		roundTrip(t, &p)
		var nilLeaf *Leaf
		roundTrip(t, &nilLeaf)
	})
	t.Run("top-level any", func(t *testing.T) {
		var x any = []any{int64(1), "x", map[string]any{}}
		roundTrip(t, &x)
	})
}

func TestRoundTripWorkload(t *testing.T) {
	for name, w := range map[string]*schema.Workload{
		"filled": filledWorkload(),
		"sglang": sglangWorkload(),
		"zero":   {},
	} {
		t.Run(name, func(t *testing.T) { roundTrip(t, w) })
	}
}

// TestFormat pins the encoding of a small value (after the header), so a
// change of format is deliberate (and bumps the version byte).
func TestFormat(t *testing.T) {
	v := struct {
		I   int
		S   string
		P   *bool
		L   []uint8
		M   map[string]int
		A   any
		F32 float32
	}{I: -2, S: "hi", L: []uint8{}, M: map[string]int{"b": 1, "a": 300}, A: int64(-1), F32: 1}
	data, err := gocodec.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "GOC\x01") {
		t.Fatalf("header %q", data[:4])
	}
	const want = "03" + // I: zigzag -2
		"026869" + // S: "hi"
		"00" + // P: nil
		"01" + // L: empty, not nil
		"03" + "0161" + "d804" + "0162" + "02" + // M: 2 entries, sorted
		"03" + "01" + // A: tagInt64, zigzag -1
		"0000803f" // F32: 1
	if got := hex.EncodeToString(data[12:]); got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

func TestDeterministic(t *testing.T) {
	build := func(reverse bool) *Everything {
		v := &Everything{Env: map[string]string{}, AnyMap: map[string]any{}, Named: map[Engine][]int{}, LeafMap: map[string]*Leaf{}}
		for i := range 50 {
			if reverse {
				i = 49 - i
			}
			k := strings.Repeat("k", i%7) + string(rune('A'+i))
			v.Env[k] = k
			v.AnyMap[k] = map[string]any{k: int64(i), "z" + k: []any{k}}
			v.Named[Engine(k)] = []int{i}
			v.LeafMap[k] = &Leaf{Name: k}
		}
		return v
	}
	first, err := gocodec.Marshal(build(false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		again, err := gocodec.Marshal(build(i%2 == 1))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("encoding %d differs from the first", i)
		}
	}
}

type withUnexported struct {
	Serve struct {
		X int
		x int
	}
}

type withChan struct{ Jobs []struct{ C chan int } }

type node struct{ Next *node }

func TestMarshalErrors(t *testing.T) {
	cycle := &node{}
	cycle.Next = cycle
	selfList := []any{nil}
	selfList[0] = selfList
	type anys struct {
		M map[string]any
		A any
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{withUnexported{}, "gocodec: withUnexported.Serve.x: unexported field"},
		{&withChan{}, "gocodec: withChan.Jobs[].C: unsupported type chan int"},
		{struct{ F func() }{}, ".F: unsupported type func()"},
		{struct{ C complex128 }{}, ".C: unsupported type complex128"},
		{struct{ M map[int]string }{}, ".M: unsupported type map[int]string (map keys must be strings)"},
		{struct{ E error }{}, ".E: unsupported type error (only the empty interface is)"},
		{struct{ L []struct{ _ int } }{}, ".L[]._: unexported field"},
		{anys{M: map[string]any{"k": []any{int64(1), int32(2)}}}, `gocodec: anys.M["k"][1]: unsupported dynamic type int32`},
		{anys{A: Leaf{}}, "gocodec: anys.A: unsupported dynamic type gocodec_test.Leaf"},
		{anys{A: Engine("vllm")}, "gocodec: anys.A: unsupported dynamic type gocodec_test.Engine"},
		{anys{A: map[string]string{}}, "gocodec: anys.A: unsupported dynamic type map[string]string"},
		{anys{A: []string{}}, "gocodec: anys.A: unsupported dynamic type []string"},
		{anys{A: uint64(1)}, "gocodec: anys.A: unsupported dynamic type uint64"},
		{anys{A: math.NaN()}, "gocodec: anys.A: NaN is not supported"},
		{anys{A: selfList}, "nested more than 1000 deep"},
		{struct{ F float32 }{float32(math.NaN())}, ".F: NaN is not supported"},
		{cycle, "gocodec: node.Next.Next"},
		{nil, "gocodec: Marshal(nil)"},
		{(*Leaf)(nil), "gocodec: Marshal(nil *gocodec_test.Leaf)"},
	} {
		_, err := gocodec.Marshal(c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Marshal(%T): error %v, want it to contain %q", c.v, err, c.want)
		}
	}
	// The same type errors from Unmarshal, which never gets to the data.
	if err := gocodec.Unmarshal(nil, &withUnexported{}); err == nil || err.Error() != "gocodec: withUnexported.Serve.x: unexported field" {
		t.Errorf("Unmarshal into withUnexported: %v", err)
	}
}

type shape struct {
	A int
	B []string
}

type sameShape struct {
	A int      `json:"a"`
	B []string `json:"b,omitempty"`
}

func TestUnmarshalOtherType(t *testing.T) {
	data, err := gocodec.Marshal(shape{A: 1, B: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	// The fingerprint is the structure: another name (or tags) for the
	// same structure decodes, any change of a name, kind or element fails.
	for _, into := range []any{
		new(sameShape),
		new(struct {
			A int
			B []Engine
		}),
	} {
		if err := gocodec.Unmarshal(data, into); err != nil {
			t.Errorf("Unmarshal into %T: %v", into, err)
		}
	}
	for _, into := range []any{
		new(struct {
			A int
			C []string
		}),
		new(struct {
			A int64
			B []string
		}),
		new(struct {
			A int
			B []int
		}),
		new(struct {
			A int
			B [1]string
		}),
		new(struct {
			A int
			B []string
			C bool
		}),
		new(struct{ A int }),
		new(struct {
			B []string
			A int
		}),
		new(Everything),
		new(schema.Workload),
		new(int),
	} {
		err := gocodec.Unmarshal(data, into)
		if err == nil || !strings.Contains(err.Error(), "another type") {
			t.Errorf("Unmarshal into %T: error %v, want another type", into, err)
		}
	}
	for _, into := range []any{nil, shape{}, (*shape)(nil)} {
		if err := gocodec.Unmarshal(data, into); err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
			t.Errorf("Unmarshal into %#v: %v", into, err)
		}
	}
}

func TestUnmarshalCorrupt(t *testing.T) {
	data := roundTrip(t, filledWorkload())
	for i := range data {
		var w schema.Workload
		if err := gocodec.Unmarshal(data[:i], &w); err == nil {
			t.Fatalf("prefix of %d of %d bytes decoded", i, len(data))
		}
	}
	if err := gocodec.Unmarshal(append(data, 0), new(schema.Workload)); err == nil || !strings.Contains(err.Error(), "1 bytes after") {
		t.Errorf("trailing byte: %v", err)
	}
	other := append([]byte("GOC\x02"), data[4:]...)
	if err := gocodec.Unmarshal(other, new(schema.Workload)); err == nil || !strings.Contains(err.Error(), "not gocodec data") {
		t.Errorf("format version 2: %v", err)
	}

	// Every byte set to a few values: an error or, if the result decodes,
	// the exact bytes back (checkDecode), and an error leaves the value as
	// it was.
	for _, data := range [][]byte{data, roundTrip(t, everything())} {
		for i := range data {
			for _, b := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, data[i] ^ 1, data[i] + 1} {
				mutated := bytes.Clone(data)
				mutated[i] = b
				checkDecode[schema.Workload](t, mutated)
				checkDecode[Everything](t, mutated)
			}
		}
	}
	// Nesting deeper than Marshal writes: an error, not a stack overflow.
	var x any
	deep, err := gocodec.Marshal(&x)
	if err != nil {
		t.Fatal(err)
	}
	deep = deep[:len(deep)-1]
	for range 1001 {
		deep = append(deep, 6, 2) // a []any of one element
	}
	deep = append(deep, 0)
	if err := gocodec.Unmarshal(deep, &x); err == nil || !strings.Contains(err.Error(), "nested more than 1000 deep") {
		t.Errorf("deep data: %v", err)
	}

	w := filledWorkload()
	bad := bytes.Clone(data)
	bad[len(bad)-1] = 7 // CustomJob.Env: an impossible map length
	if err := gocodec.Unmarshal(bad, w); err == nil {
		t.Fatal("decoded corrupt data")
	}
	if diff := cmp.Diff(filledWorkload(), w, exact); diff != "" {
		t.Errorf("failed Unmarshal changed the value (-want +got):\n%s", diff)
	}
}

// checkDecode decodes data into a T; if that succeeds, the value must
// encode back to data: decoding accepts only what Marshal writes.
func checkDecode[T any](t *testing.T, data []byte) {
	t.Helper()
	v := new(T)
	if err := gocodec.Unmarshal(data, v); err != nil {
		return
	}
	again, err := gocodec.Marshal(v)
	if err != nil {
		t.Fatalf("decoded %x, which does not encode: %v", data, err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("decoded %x, which encodes as %x", data, again)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, v := range []any{everything(), &Everything{}, filledWorkload(), sglangWorkload(), &schema.Workload{}} {
		data, err := gocodec.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode[Everything](t, data)
		checkDecode[schema.Workload](t, data)
	})
}

func BenchmarkRoundTrip(b *testing.B) {
	w := filledWorkload()
	data, err := gocodec.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		data, err := gocodec.Marshal(w)
		if err != nil {
			b.Fatal(err)
		}
		var got schema.Workload
		if err := gocodec.Unmarshal(data, &got); err != nil {
			b.Fatal(err)
		}
	}
}
