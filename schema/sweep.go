package schema

import (
	"encoding/json"
	"fmt"
	"math"
)

// Concurrency decodes #BenchSweep.concurrency: a list of values or a
// ladder (start, ×factor, up to end).
type Concurrency struct {
	List   []int
	Ladder *ConcurrencyLadder
}

func (c *Concurrency) UnmarshalJSON(b []byte) error {
	var list []int
	if err := json.Unmarshal(b, &list); err == nil {
		*c = Concurrency{List: list}
		return nil
	}
	var l ConcurrencyLadder
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("want a list of concurrencies or {start, end, factor}: %w", err)
	}
	*c = Concurrency{Ladder: &l}
	return nil
}

func (c Concurrency) MarshalJSON() ([]byte, error) {
	if c.Ladder != nil {
		return json.Marshal(c.Ladder)
	}
	return json.Marshal(c.List)
}

// Values are the concurrencies in order: the list, or the ladder's rungs
// start, start×factor, … up to end.
func (c Concurrency) Values() []int {
	if c.Ladder == nil {
		return c.List
	}
	f := c.Ladder.Factor
	if f < 2 {
		f = 2
	}
	var out []int
	for v := c.Ladder.Start; v >= 1 && v <= c.Ladder.End; v *= f {
		out = append(out, v)
		if v > c.Ladder.End/f {
			break // the next rung is past end, or past int: not a wrapped one
		}
	}
	return out
}

// mulSat is a × b for counts ≥ 0, math.MaxInt where that overflows. The
// schema bounds every factor (#MaxPrompts, #MaxConcurrency), so a vetted
// workload never gets there; a product must still never wrap to a small
// count.
func mulSat(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// Configs are the benchmark configs a vllm_bench block runs: the written
// ones, then the sweep's, one per (shape, concurrency) with
// num_prompts = max(min_prompts, prompts_per_concurrency × c) and
// --num-warmups c (perf-eval #82's expansion).
func (b *VLLMBench) AllConfigs() []BenchConfig {
	out := append([]BenchConfig(nil), b.Configs...)
	s := b.Sweep
	if s == nil {
		return out
	}
	for _, sh := range s.Shapes {
		for _, c := range s.Concurrency.Values() {
			args := map[string]any{}
			for k, v := range s.Args {
				args[k] = v
			}
			args["num_warmups"] = c
			np := max(s.MinPrompts, mulSat(s.PromptsPerConcurrency, c))
			out = append(out, BenchConfig{
				Name:           fmt.Sprintf("isl%d-osl%d", sh.InputLen, sh.OutputLen),
				Backend:        s.Backend,
				Dataset:        "random",
				InputLen:       sh.InputLen,
				OutputLen:      sh.OutputLen,
				MaxConcurrency: IntOrList{Values: []int{c}, Scalar: true},
				NumPrompts:     IntOrList{Values: []int{np}, Scalar: true},
				Repetitions:    max(s.Repetitions, 1),
				Args:           args,
			})
		}
	}
	return out
}
