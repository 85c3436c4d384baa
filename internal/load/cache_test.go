package load_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/resultcache"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// openCache is an empty result cache of the test's own.
func openCache(t *testing.T) *resultcache.Cache {
	t.Helper()
	c, err := resultcache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cachedLoad loads root with cache c and requires what a user sees
// (findings, workloads, every backend's artifacts) to be byte for byte
// what the one-package load without a cache gives. It returns the
// shards read from the cache and the ones evaluated.
func cachedLoad(t *testing.T, root string, o load.Options, c *resultcache.Cache) (hits, misses int) {
	t.Helper()
	_, want := loadOutput(t, root, load.WithShardFiles(o, -1))
	o.Cache = c
	r, got := loadOutput(t, root, o)
	if got != want {
		t.Errorf("the cached load differs from the load without a cache:\n%s", lineDiff(want, got))
	}
	return r.CacheCounts()
}

// TestCachedLoad: a second load reads every shard from the cache and
// gives what evaluating them gives, for the bundled workloads and for a
// package of broken workloads (its findings come from the cache too).
func TestCachedLoad(t *testing.T) {
	for name, root := range map[string]string{
		"bundled": testenv.RepoRoot(t),
		"broken":  writePkg(t, brokenFiles),
	} {
		t.Run(name, func(t *testing.T) {
			c := openCache(t)
			hits, misses := cachedLoad(t, root, load.Options{}, c)
			if hits != 0 || misses == 0 {
				t.Fatalf("first load: %d shards from the cache, %d evaluated; want 0 and some", hits, misses)
			}
			hits, misses2 := cachedLoad(t, root, load.Options{}, c)
			if hits != misses || misses2 != 0 {
				t.Errorf("second load: %d shards from the cache, %d evaluated; want %d and 0", hits, misses2, misses)
			}
		})
	}
}

// TestCachedLoadRecipes: a shard that derives a workload from a recipe
// reads the recipes checkout, which no key covers, so it is evaluated
// every time; the output is still the uncached one's.
func TestCachedLoadRecipes(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(t), "testdata", "recipe-workloads")
	o := load.Options{RecipesDir: recipesDir(t)}
	c := openCache(t)
	cachedLoad(t, root, o, c)
	if hits, _ := cachedLoad(t, root, o, c); hits != 0 {
		t.Errorf("%d recipe-derived shards were read from the cache", hits)
	}
}

// TestCacheSeesEdits: editing a workload file re-evaluates its shard
// only; editing a shared file, cue.mod/module.cue or the options
// re-evaluates every shard; each load gives what a load without a cache
// gives.
func TestCacheSeesEdits(t *testing.T) {
	root := writePkg(t, brokenFiles)
	c := openCache(t)
	perFile := load.WithShardFiles(load.Options{}, 1) // a shard per file (the duplicate's two share one)
	_, shards := cachedLoad(t, root, perFile, c)
	if shards < 4 {
		t.Fatalf("%d shards; want one per workload file", shards)
	}
	edit := func(name, old, new string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), old) {
			t.Fatalf("%s lacks %q (%v)", name, old, err)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, o load.Options, wantHits int) {
		t.Helper()
		if hits, misses := cachedLoad(t, root, o, c); hits != wantHits || hits+misses != shards {
			t.Errorf("after %s: %d shards from the cache, %d evaluated; want %d from the cache of %d", what, hits, misses, wantHits, shards)
		}
	}
	edit("workloads/a.cue", "tensor_parallel_sise", "tensor_parallel_size")
	expect("fixing a workload file", perFile, shards-1)
	edit("workloads/helpers.cue", `"gsm8k"`, `"mmlu"`)
	expect("editing a shared helper", perFile, 0)
	edit("cue.mod/module.cue", "module:", "// a comment\nmodule:")
	expect("editing cue.mod/module.cue", perFile, 0)
	expect("nothing", perFile, shards)
	other := perFile
	other.Overrides = plan.Overrides{VLLMImage: "vllm/vllm-openai:v0.11.0"}
	expect("another image", other, 0)
}

// TestCacheCorruptEntry: a damaged entry is a miss, never a result.
func TestCacheCorruptEntry(t *testing.T) {
	root := writePkg(t, brokenFiles)
	dir := t.TempDir()
	c, err := resultcache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, shards := cachedLoad(t, root, load.Options{}, c)
	entries, _ := filepath.Glob(filepath.Join(dir, "??", "*"))
	if len(entries) != shards {
		t.Fatalf("%d entries for %d shards: %v", len(entries), shards, entries)
	}
	for i, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			data[len(data)-1] ^= 1
		} else {
			data = data[:len(data)/2]
		}
		if err := os.WriteFile(e, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := cachedLoad(t, root, load.Options{}, c); hits != 0 || misses != shards {
		t.Errorf("damaged entries: %d shards from the cache, %d evaluated; want 0 and %d", hits, misses, shards)
	}
}

// TestCacheOffForUnkeyedInputs: a package that imports a package of its
// own module (files CUE reads itself) is never cached, and still loads
// as without a cache.
func TestCacheOffForUnkeyedInputs(t *testing.T) {
	files := map[string]string{}
	for k, v := range brokenFiles {
		files[k] = v
	}
	files["lib/lib.cue"] = "package lib\n\n#Model: \"meta-llama/Llama-3.1-70B-Instruct\"\n"
	files["workloads/helpers.cue"] = strings.Replace(brokenFiles["workloads/helpers.cue"], "package workloads\n", "package workloads\n\nimport \"github.com/wlcdev/wlc/lib\"\n", 1)
	files["workloads/helpers.cue"] = strings.Replace(files["workloads/helpers.cue"], `"meta-llama/Llama-3.1-70B-Instruct"`, "lib.#Model", 1)
	root := writePkg(t, files)
	c := openCache(t)
	for range 2 {
		if hits, misses := cachedLoad(t, root, load.Options{}, c); hits != 0 || misses != 0 {
			t.Errorf("a package importing its module's own package: %d shards from the cache, %d offered to it; want none", hits, misses)
		}
	}
}
