// Package resultcache keeps results of expensive, deterministic work (a
// shard of workloads evaluated against the schema) on disk, addressed by
// a digest of every input that produced them, as `go build` keeps its
// build cache: a result is reused only when nothing it was computed from
// has changed, so a reused result is the one the work would give again.
package resultcache

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Key addresses one result: the digest of its inputs (see Hasher).
type Key [sha256.Size]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// A Hasher digests a result's inputs. Each input is written with its
// length, so no two sequences of inputs give one key.
type Hasher struct {
	h   hash.Hash
	len []byte
}

// NewHasher starts the key of a kind of result; the kind keeps results of
// different work apart even when their inputs are equal.
func NewHasher(kind string) *Hasher {
	h := &Hasher{h: sha256.New(), len: make([]byte, 0, binary.MaxVarintLen64)}
	h.String(kind)
	return h
}

func (h *Hasher) length(n int) {
	h.len = binary.AppendUvarint(h.len[:0], uint64(n))
	h.h.Write(h.len)
}

// Bytes adds one input.
func (h *Hasher) Bytes(b []byte) {
	h.length(len(b))
	h.h.Write(b)
}

// String adds one input.
func (h *Hasher) String(s string) {
	h.length(len(s))
	io.WriteString(h.h, s)
}

// Key is the digest of the inputs added so far.
func (h *Hasher) Key() Key {
	var k Key
	h.h.Sum(k[:0])
	return k
}

// Cache is a directory of results.
type Cache struct{ dir string }

// Env is the environment variable that places the cache: a directory, or
// "off" to compute everything afresh.
const Env = "WLC_CACHE"

// FromEnv opens the cache getenv(Env) names, else <user cache dir>/wlc.
// It returns nil (no cache) for "off" or when no directory can be made:
// a cache only saves time, so its absence is not an error.
func FromEnv(getenv func(string) string) *Cache {
	dir := getenv(Env)
	switch {
	case dir == "off":
		return nil
	case dir == "":
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "wlc")
	case !filepath.IsAbs(dir):
		return nil // a relative cache would follow the working directory
	}
	c, err := Open(dir)
	if err != nil {
		return nil
	}
	return c
}

// Open opens (making it if need be) the cache in dir.
func Open(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	c := &Cache{dir: dir}
	c.trim(time.Now())
	return c, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// An entry is magic, the payload's digest, then the payload: a torn or
// corrupted file reads as a miss, never as a result.
var magic = []byte("wlc result v1\n")

func (c *Cache) path(k Key) string {
	s := k.String()
	return filepath.Join(c.dir, s[:2], s)
}

// Get returns the result stored under k.
func (c *Cache) Get(k Key) ([]byte, bool) {
	p := c.path(k)
	data, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(data, magic) || len(data) < len(magic)+sha256.Size {
		return nil, false
	}
	sum, payload := data[len(magic):len(magic)+sha256.Size], data[len(magic)+sha256.Size:]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return nil, false
	}
	c.used(p)
	return payload, true
}

// Put stores data under k. The file appears whole or not at all (written
// aside, then renamed), so a killed run or a concurrent one never leaves
// half a result.
func (c *Cache) Put(k Key, data []byte) error {
	p := c.path(k)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	_, err = f.Write(slices.Concat(magic, sum[:], data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Entries unused this long are removed, checked at most once per
// trimEvery (go's build cache uses the same figures).
const (
	unusedFor = 5 * 24 * time.Hour
	trimEvery = 24 * time.Hour
	// touchAfter keeps a hit from writing the file's time on every run.
	touchAfter = time.Hour
)

// used marks an entry as used now, so trimming keeps it.
func (c *Cache) used(p string) {
	now := time.Now()
	if fi, err := os.Stat(p); err == nil && now.Sub(fi.ModTime()) > touchAfter {
		os.Chtimes(p, now, now)
	}
}

// trim removes entries unused for unusedFor, once per trimEvery.
func (c *Cache) trim(now time.Time) {
	stamp := filepath.Join(c.dir, "trim.txt")
	if data, err := os.ReadFile(stamp); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && now.Sub(time.Unix(t, 0)) < trimEvery {
			return
		}
	}
	subs, _ := os.ReadDir(c.dir)
	for _, s := range subs {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(c.dir, s.Name()))
		for _, e := range entries {
			fi, err := e.Info()
			if err == nil && now.Sub(fi.ModTime()) > unusedFor {
				os.Remove(filepath.Join(c.dir, s.Name(), e.Name()))
			}
		}
	}
	os.WriteFile(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o666)
}

// ExecutableID identifies the running program's code: its Go build ID
// (which changes whenever anything it was built from changes), else a
// digest of the executable. Results depend on the code that computed
// them (the rules, the embedded schema and flag catalogs), so every key
// includes it.
var ExecutableID = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if id := goBuildID(exe); id != "" {
		return "go:" + id, nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
})

// goBuildID reads the build ID the go command writes into an ELF
// executable's .note.go.buildid, or "".
func goBuildID(exe string) string {
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	id, err := parseNote(data, f.ByteOrder)
	if err != nil {
		return ""
	}
	return id
}

// parseNote reads an ELF note: name size, description size, type, the
// name "Go\x00\x00" and the build ID as the description. A build ID
// without its content hash (built with -buildid=) is not an identity.
func parseNote(data []byte, order binary.ByteOrder) (string, error) {
	if len(data) < 16 {
		return "", errors.New("short note")
	}
	nameSize, descSize := order.Uint32(data[0:]), order.Uint32(data[4:])
	if nameSize != 4 || !bytes.Equal(data[12:16], []byte("Go\x00\x00")) || uint64(len(data)) < 16+uint64(descSize) {
		return "", errors.New("not a Go build ID note")
	}
	id := string(data[16 : 16+descSize])
	if strings.Count(id, "/") < 1 || strings.HasSuffix(id, "/") {
		return "", fmt.Errorf("build ID %q has no content hash", id)
	}
	return id, nil
}
