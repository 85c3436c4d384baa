// Package atomicdir replaces a directory's whole content in one step: a
// reader (or a process killed half way) sees the previous set of files or
// the new one, never a mix, and nothing of a failed replacement remains.
//
// The new set is written into a staging directory beside the target (same
// file system, so a rename is possible) and then swapped in: renamed onto
// the target when it does not exist, exchanged with it (renameat2
// RENAME_EXCHANGE, renamex_np RENAME_SWAP) when it does. Only then is the
// previous set, now at the staging name, removed. Staging names start with
// "." and the target's name, and the next replacement sweeps any left by a
// killed run; a lock on the parent directory keeps two replacements of
// directories in the same parent from sweeping each other's staging.
//
// A directory is replaced only when it is empty or everything in it is
// listed by the marker file a previous replacement wrote, so files wlc did
// not write are never deleted.
package atomicdir

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Marker is the file every replaced directory carries: it says who wrote
// the set and lists it, so the next replacement knows the directory is
// its own to replace.
const Marker = ".wlc-export"

// File is one file of the new set; Path is slash-separated and relative.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode // 0 means 0644
}

// Result says what Replace did beyond placing the set.
type Result struct {
	// Stale is an error removing the previous set after the new one was in
	// place (the new set is complete; the old one is left at its staging
	// name and swept by the next replacement).
	Stale error
}

// Replace makes dir hold exactly files (plus Marker, whose first line is
// header). On error nothing changed: dir holds what it held before and no
// staging directory remains.
func Replace(dir, header string, files []File) (Result, error) {
	target, err := resolve(dir)
	if err != nil {
		return Result{}, err
	}
	parent, base := filepath.Dir(target), filepath.Base(target)
	if err := checkFiles(files); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Result{}, fmt.Errorf("create %s: %w", parent, err)
	}
	unlock, err := lock(parent)
	if err != nil {
		return Result{}, fmt.Errorf("lock %s: %w", parent, err)
	}
	defer unlock()
	sweep(parent, base)

	exists, err := replaceable(target, dir)
	if err != nil {
		return Result{}, err
	}
	stage, err := mkStage(parent, base, dirMode(target, exists))
	if err != nil {
		return Result{}, fmt.Errorf("stage beside %s: %w", dir, err)
	}
	if err := fill(stage, header, files); err != nil {
		os.RemoveAll(stage)
		return Result{}, err
	}
	if !exists {
		// rename(2) onto a missing path is atomic; if something created the
		// target meanwhile it fails (or replaces an empty directory), and
		// the target is never a mix.
		if err := os.Rename(stage, target); err != nil {
			os.RemoveAll(stage)
			return Result{}, fmt.Errorf("place %s: %w", dir, err)
		}
		return Result{}, nil
	}
	if err := exchange(stage, target); err != nil {
		os.RemoveAll(stage)
		return Result{}, fmt.Errorf("swap the new set into %s: %w", dir, err)
	}
	// stage now holds the previous set.
	if err := os.RemoveAll(stage); err != nil {
		return Result{Stale: fmt.Errorf("remove the previous set (moved to %s): %w", stage, err)}, nil
	}
	return Result{}, nil
}

// resolve returns the absolute path to replace: a symlink is followed, so
// the directory it names is replaced and the link kept.
func resolve(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return "", fmt.Errorf("%s: %w", dir, err)
		}
	}
	if filepath.Dir(abs) == abs {
		return "", fmt.Errorf("%s: cannot replace the root directory", dir)
	}
	return abs, nil
}

// replaceable reports whether target exists, and refuses a target that is
// not a directory or holds anything a replacement did not write: an
// existing directory is replaced only if it is empty, or if its marker
// lists every file in it (directories holding listed files are the
// replacement's too). The first entry that is not, in walk order, is
// named: a user's notes beside a previous export's set are never deleted.
func replaceable(target, dir string) (bool, error) {
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s exists and is not a directory; choose a directory for the output", dir)
	}
	ents, err := os.ReadDir(target)
	if err != nil {
		return false, err
	}
	if len(ents) == 0 {
		return true, nil
	}
	listed, err := readMarker(filepath.Join(target, Marker))
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%s holds files wlc export did not write (%s); its whole content is replaced by each export, so choose a new or empty directory", dir, sample(ents))
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(dir, Marker), err)
	}
	// Directories that hold a listed file.
	parents := map[string]bool{}
	for f := range listed {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	var foreign string
	err = filepath.WalkDir(target, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(target, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "." || rel == Marker:
			return nil
		case d.IsDir() && parents[rel]:
			return nil
		case d.Type().IsRegular() && listed[rel]:
			return nil
		}
		foreign = rel
		return fs.SkipAll
	})
	if err != nil {
		return false, err
	}
	if foreign != "" {
		return false, fmt.Errorf("%s was not written by wlc export (%s lists the files of the export it replaces, and not this %s); each export replaces the whole directory, so move it out of %s or choose a new or empty directory", filepath.Join(dir, filepath.FromSlash(foreign)), Marker, entryKind(target, foreign), dir)
	}
	return true, nil
}

// maxMarker bounds the marker read: a list of a thousand workloads' files
// is some 50 KB.
const maxMarker = 16 << 20

// readMarker returns the files a marker lists: its lines that are not
// comments (fill writes the header and a note as # lines).
func readMarker(name string) (map[string]bool, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file, so not a marker wlc wrote; remove it, or choose a new or empty directory")
	}
	if fi.Size() > maxMarker {
		return nil, fmt.Errorf("%d bytes, over the %d a marker wlc writes can reach; remove it, or choose a new or empty directory", fi.Size(), maxMarker)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && path.Clean(l) == l && !path.IsAbs(l) && l != ".." && !strings.HasPrefix(l, "../") {
			listed[l] = true
		}
	}
	return listed, nil
}

func entryKind(target, rel string) string {
	fi, err := os.Lstat(filepath.Join(target, filepath.FromSlash(rel)))
	switch {
	case err != nil:
		return "entry"
	case fi.IsDir():
		return "directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "symbolic link"
	case fi.Mode().IsRegular():
		return "file"
	}
	return "entry"
}

func sample(ents []fs.DirEntry) string {
	var names []string
	for i, e := range ents {
		if i == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}

func checkFiles(files []File) error {
	seen := map[string]bool{Marker: true}
	for _, f := range files {
		clean := path.Clean(f.Path)
		if f.Path == "" || clean != f.Path || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("unsafe output path %q", f.Path)
		}
		if seen[clean] {
			return fmt.Errorf("output path %q given twice (or it is the marker %s)", f.Path, Marker)
		}
		seen[clean] = true
	}
	return nil
}

func fill(stage, header string, files []File) error {
	var list []string
	for _, f := range files {
		p := filepath.Join(stage, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("stage %s: %w", f.Path, err)
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return fmt.Errorf("stage %s: %w", f.Path, err)
		}
		if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is filtered by the umask
			return fmt.Errorf("stage %s: %w", f.Path, err)
		}
		list = append(list, f.Path)
	}
	sort.Strings(list)
	m := header + "\n# This directory is replaced as a whole by the next export. Files:\n" + strings.Join(list, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(stage, Marker), []byte(m), 0o644); err != nil {
		return fmt.Errorf("stage %s: %w", Marker, err)
	}
	return nil
}

// dirMode keeps an existing directory's permissions; 0 lets a new one
// get 0755 less the umask, as mkdir would.
func dirMode(target string, exists bool) fs.FileMode {
	if exists {
		if fi, err := os.Stat(target); err == nil {
			return fi.Mode().Perm()
		}
	}
	return 0
}

// mkStage creates a fresh staging directory beside the target.
func mkStage(parent, base string, mode fs.FileMode) (string, error) {
	for range 100 {
		p := filepath.Join(parent, stagePrefix(base)+strconv.FormatUint(uint64(rand.Uint32()), 36))
		err := os.Mkdir(p, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil && mode != 0 {
			if err = os.Chmod(p, mode); err != nil {
				os.Remove(p)
			}
		}
		return p, err
	}
	return "", fmt.Errorf("no free staging name in %s", parent)
}

func stagePrefix(base string) string { return "." + base + ".wlc-stage-" }

// sweep removes staging directories a killed replacement of base left.
func sweep(parent, base string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), stagePrefix(base)) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
