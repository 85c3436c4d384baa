package schema_test

import (
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
)

// TestCUERuleLimits records, as minimal repros against the CUE version
// go.mod pins, why some of the schema's cross-field rules still report
// through the hidden _check instead of on the field they blame: an error
// on a field is the field's value, so in CUE v0.17.1
//
//   - a rule whose `if` reads the field it blames vanishes (no error at
//     all) when the field's type is a disjunction (a default, an enum), and
//     so does one that tests the field's existence (f != _|_);
//
//   - another rule that reads a blamed field, or a sibling through the
//     blamed field's parent, prints unevaluated references in its message;
//
//   - an error on a field makes its enclosing block == _|_, so a rule
//     guarded by `block == _|_` fires beside it;
//
//   - a rule on a field whose own type carries an error() disjunction (an
//     enum, port) is reported beside that type's message.
//
//   - a validator | error() on a field whose type is a disjunction also
//     reports its message for a value that type refuses, and its message
//     cannot compute with the field's own value.
//
// The schema's rules that do blame the user's field avoid these shapes:
// the `if` reads other fields only, and the field gets #Refuse | error(),
// a literal | error() or, on a block, an embedded #Refuse | error(). When a
// case here stops reproducing, the rules it names can move.
func TestCUERuleLimits(t *testing.T) {
	const prelude = "import (\"list\", \"math\")\n_imports: [list.Sum([]), math.Pi]\n#Refuse: matchN(0, [_])\n"
	cases := []struct {
		name, src string
		want      []string // substrings of the error details, in any order
		absent    []string // substrings that must not appear
		ok        bool     // Validate succeeds (the rule vanished)
	}{{
		// repetitions.odd before #Odd: the rule read the field it blames.
		name: "self-reading rule vanishes",
		src:  `w: {rep: int | *1, if rem(rep, 2) == 0 {rep: #Refuse | error("even")}} & {rep: 2}`,
		ok:   true,
	}, {
		name: "validator on the field reports",
		src:  `w: {rep: int | *1, rep: matchN(0, [math.MultipleOf(2)]) | error("repetitions is \(rep)")} & {rep: 2}`,
		want: []string{"w.rep: repetitions is 2"},
	}, {
		// vllm_bench.configs.empty: configs is optional.
		name: "existence-testing rule vanishes",
		src:  `w: {c?: [...int], if c != _|_ if len(c) == 0 {c: #Refuse | error("empty")}} & {c: []}`,
		ok:   true,
	}, {
		// nodes, gpus_per_node, precision, serve.*_parallel_size, sglang.*:
		// every message that reads them.
		name: "other rule's message reads a blamed field",
		src: `w: {x: int, z: int | *0
			if x > 3 {z: #Refuse | error("z: x is \(x)")}
			if x != 12 {x: #Refuse | error("x is \(x)")}
		} & {x: 5, z: 1}`,
		want: []string{"w.x: x is 5", "w.z: z: x is x"},
	}, {
		// serve.attention_config beside rules reading serve's parallel sizes.
		name: "sibling read through a blamed field's parent",
		src: `w: {s: {a: int, b?: _}, z: int | *0
			s: b?: matchN(0, [_]) | error("no b")
			if s.a > 3 {z: #Refuse | error("z: a is \(s.a)")}
		} & {s: {a: 5, b: 1}, z: 1}`,
		want: []string{"w.s.b: no b", "w.z: z: a is s.a"},
	}, {
		// idle_gpus.*, disagg.*, custom_job.*, backend_sweep.*: the
		// single-server rules test idle_gpus == _|_, disagg == _|_ ...
		name: "blamed child makes its block _|_",
		src: `w: {b?: {r: string & =~"[^ ]" | error("blank")}, n: int
			if b == _|_ && n != 1 {n: #Refuse | error("n must be 1 without b")}
		} & {b: r: " ", n: 2}`,
		want: []string{"w.b.r: blank", "w.n: n must be 1 without b"},
	}, {
		// serve.kv_cache_dtype and sglang.kv_cache_dtype (enums), port, and
		// bfcl.max_test_cases (int or struct).
		name: "rule beside the type's error disjunction",
		src: `w: {k: string & matchN(1, ["a", "b"]) | error("k must be a or b")
			k: matchN(1, ["a"]) | error("b is not supported here")
		} & {k: "b"}`,
		want: []string{"errors in empty disjunction", "k must be a or b", "b is not supported here"},
	}, {
		// repetitions and num_prompts: a validator | error() beside a type
		// that is a disjunction (a default) also reports the rule's
		// message for a value the type refuses (0 is not odd, but the
		// finding is that it is below 1).
		name: "rule beside a type the value fails",
		src:  `w: {rep: int & >=1 | *1, rep: matchN(0, [math.MultipleOf(2)]) | error("use an odd number")} & {rep: 0}`,
		want: []string{"out of bound >=1", "use an odd number"},
	}, {
		// params_b.memory: the message computes the checkpoint's GiB.
		name: "own message computing with the blamed field",
		src:  `w: {p: number, p: <=10 | error("p doubled is \(p*2)")} & {p: 20}`,
		want: []string{"w.p: p doubled is (p * 2)"},
	}, {
		name: "list validator on a list with a bad element",
		src:  `w: {c: [...{r: int & <5}], c: list.MinItems(1) | error("empty")} & {c: [{r: 7}]}`,
		want: []string{"errors in empty disjunction", "w.c: empty"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := cuecontext.New().CompileString(prelude + c.src)
			err := v.Validate(cue.Concrete(true))
			if c.ok {
				if err != nil {
					t.Fatalf("the rule reports now (CUE changed: the rules this case names can move):\n%s", cueerrors.Details(err, nil))
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			got := cueerrors.Details(err, nil)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(got, a) {
					t.Errorf("unexpected %q in:\n%s", a, got)
				}
			}
		})
	}
}
