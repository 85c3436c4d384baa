package load

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"weak"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestShardTreesReleased: once a shard is evaluated, nothing holds its
// workload files' trees any more (not the instance cue/load returned, the
// parser that parsed them ahead, the shard plan or the loader), while the
// load goes on: a thousand workload files' trees are some 14 MB that the
// collector would otherwise mark, and the heap grow by, to the end. (A
// package cue/load is handed whole, for an @extern file or a syntax
// error, keeps them: cue/load's own file cache holds what it parsed.)
func TestShardTreesReleased(t *testing.T) {
	root := testenv.RepoRoot(t)
	var (
		mu         sync.Mutex
		trees      [][]weak.Pointer[ast.File]
		seen, live int
		released   int
	)
	testHookShards = &struct {
		planned  func(*shardPlan)
		released func(int)
	}{
		planned: func(p *shardPlan) {
			for _, sh := range p.shards {
				var ws []weak.Pointer[ast.File]
				for _, f := range sh {
					ws = append(ws, weak.Make(f))
				}
				trees = append(trees, ws)
				seen += len(ws)
			}
		},
		released: func(i int) {
			mu.Lock()
			defer mu.Unlock()
			released++
			// runtime.GC returns before its sweep is done when another
			// cycle starts meanwhile (the other shards allocate), and a
			// dead tree's weak pointer answers until its span is swept:
			// a tree still answering after a few cycles is held.
			for cycle := 1; ; cycle++ {
				runtime.GC()
				held := 0
				for _, w := range trees[i] {
					if w.Value() != nil {
						held++
					}
				}
				if held == 0 || cycle == 5 {
					live += held
					return
				}
			}
		},
	}
	defer func() { testHookShards = nil }()
	r := Load(cuecontext.New(), filepath.Join(root, "workloads"), root, WithShardFiles(Options{}, 3))
	if r.shards < 2 || !r.fromHeaders {
		t.Fatalf("want a sharded load from headers, got %d shards (from headers: %v)", r.shards, r.fromHeaders)
	}
	if seen == 0 || released != r.shards {
		t.Fatalf("the plan held %d workload files, and %d of %d shards were released", seen, released, r.shards)
	}
	if live != 0 {
		t.Errorf("%d of the %d workload files' trees were still held after their shard was evaluated", live, seen)
	}
}
