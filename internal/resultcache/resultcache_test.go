package resultcache

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func key(parts ...string) Key {
	h := NewHasher("test")
	for _, p := range parts {
		h.String(p)
	}
	return h.Key()
}

// open is an empty cache in a directory of the test's own.
func open(t *testing.T) *Cache {
	t.Helper()
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKeysSeparateInputs(t *testing.T) {
	if key("ab", "c") == key("a", "bc") || key("a") == key("a", "") {
		t.Error("inputs that split differently gave one key")
	}
	if NewHasher("x").Key() == NewHasher("y").Key() {
		t.Error("two kinds gave one key")
	}
	if key("a", "b") != key("a", "b") {
		t.Error("one input gave two keys")
	}
}

func TestPutGet(t *testing.T) {
	c := open(t)
	if _, ok := c.Get(key("a")); ok {
		t.Fatal("an empty cache had a result")
	}
	for _, data := range [][]byte{[]byte("result"), {}} {
		if err := c.Put(key("a"), data); err != nil {
			t.Fatal(err)
		}
		got, ok := c.Get(key("a"))
		if !ok || string(got) != string(data) {
			t.Fatalf("Get = %q, %v; want %q", got, ok, data)
		}
	}
	if _, ok := c.Get(key("b")); ok {
		t.Error("another key read a result")
	}
	if tmp, _ := filepath.Glob(filepath.Join(c.Dir(), "*", ".tmp-*")); len(tmp) != 0 {
		t.Errorf("Put left %v", tmp)
	}
}

// TestDamagedEntries: a torn, flipped or foreign file reads as a miss.
func TestDamagedEntries(t *testing.T) {
	c := open(t)
	k := key("a")
	if err := c.Put(k, []byte("a result of some length")); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.path(k))
	if err != nil {
		t.Fatal(err)
	}
	damaged := map[string][]byte{"empty": {}, "foreign": []byte("not a cache entry at all, but long enough to hold a digest")}
	for i := range good {
		damaged["prefix "+string(rune('0'+i%10))+strings.Repeat(".", i/10)] = good[:i]
		flipped := append([]byte(nil), good...)
		flipped[i] ^= 0x20
		damaged["flip "+string(rune('0'+i%10))+strings.Repeat(".", i/10)] = flipped
	}
	for name, data := range damaged {
		if err := os.WriteFile(c.path(k), data, 0o666); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Get(k); ok {
			t.Errorf("%s: read %q", name, got)
		}
	}
}

func TestTrim(t *testing.T) {
	c := open(t)
	old, recent := key("old"), key("recent")
	for _, k := range []Key{old, recent} {
		if err := c.Put(k, []byte(k.String())); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	long := now.Add(-unusedFor - time.Hour)
	if err := os.Chtimes(c.path(old), long, long); err != nil {
		t.Fatal(err)
	}
	c.trim(now) // Open just trimmed: the stamp keeps this one from running
	if _, ok := c.Get(old); !ok {
		t.Fatal("trimmed again within a day")
	}
	if err := os.Chtimes(c.path(old), long, long); err != nil {
		t.Fatal(err)
	}
	c.trim(now.Add(trimEvery + time.Minute))
	if _, ok := c.Get(old); ok {
		t.Error("an entry unused for more than five days was kept")
	}
	if _, ok := c.Get(recent); !ok {
		t.Error("a recent entry was removed")
	}
}

// TestGetMarksUse: a hit on an entry last used long ago keeps it from the
// next trim.
func TestGetMarksUse(t *testing.T) {
	c := open(t)
	k := key("a")
	if err := c.Put(k, []byte("x")); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-unusedFor - time.Hour)
	if err := os.Chtimes(c.path(k), long, long); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(k); !ok {
		t.Fatal("miss")
	}
	c.trim(time.Now().Add(trimEvery + time.Minute))
	if _, ok := c.Get(k); !ok {
		t.Error("an entry just read was trimmed")
	}
}

func TestFromEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == Env {
				return v
			}
			return ""
		}
	}
	if c := FromEnv(env("off")); c != nil {
		t.Error("WLC_CACHE=off opened a cache")
	}
	if c := FromEnv(env("relative/dir")); c != nil {
		t.Error("a relative WLC_CACHE opened a cache")
	}
	if c := FromEnv(env(dir)); c == nil || c.Dir() != dir {
		t.Errorf("WLC_CACHE=%s opened %v", dir, c)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the cache directory was not made: %v", err)
	}
	if c := FromEnv(env(filepath.Join(dir, "trim.txt", "sub"))); c != nil {
		t.Error("a cache was opened under a file")
	}
}

func TestExecutableID(t *testing.T) {
	id, err := ExecutableID()
	if err != nil || !strings.HasPrefix(id, "go:") && !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("ExecutableID = %q, %v", id, err)
	}
	if again, _ := ExecutableID(); again != id {
		t.Errorf("ExecutableID changed: %q, then %q", id, again)
	}
}

func TestParseNote(t *testing.T) {
	note := func(name, desc string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, 4)
		return append(append(b, name...), desc...)
	}
	if id, err := parseNote(note("Go\x00\x00", "action/content"), binary.LittleEndian); err != nil || id != "action/content" {
		t.Errorf("parseNote = %q, %v", id, err)
	}
	for name, data := range map[string][]byte{
		"short":      {1, 2, 3},
		"other name": note("GNU\x00", "a/b"),
		"no content": note("Go\x00\x00", "action"),
		"torn":       note("Go\x00\x00", "action/content")[:20],
	} {
		if id, err := parseNote(data, binary.LittleEndian); err == nil {
			t.Errorf("%s: parseNote = %q", name, id)
		}
	}
}
