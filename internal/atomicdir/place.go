package atomicdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Place writes files into dir among files it does not own (wlc init, wlc
// import -o): each file appears whole, and on error every file placed is
// taken back and every file it replaced is put back, so dir is as it was.
// Unlike Replace it is not one step for the set: a process killed while
// placing leaves the files placed so far (and a ".wlc-place-" directory,
// swept by the next Place into dir).
func Place(dir string, files []File) (err error) {
	if err := checkFiles(files); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := lock(dir)
	if err != nil {
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	defer unlock()
	sweep(dir, "wlc-place")
	stage, err := mkStage(dir, "wlc-place", 0o700)
	if err != nil {
		return err
	}
	keep := false // the stage holds previous versions undo could not restore
	defer func() {
		if keep {
			return
		}
		if rmErr := os.RemoveAll(stage); rmErr != nil && err == nil {
			err = fmt.Errorf("the files are in place, but removing %s failed: %w", stage, rmErr)
		}
	}()
	for i, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		p := filepath.Join(stage, strconv.Itoa(i))
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return fmt.Errorf("stage %s: %w", f.Path, err)
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("stage %s: %w", f.Path, err)
		}
	}
	type placed struct{ dst, backup string }
	var done []placed
	var made []string // directories created, deepest last
	undo := func() error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			d := done[i]
			if d.backup != "" {
				errs = append(errs, os.Rename(d.backup, d.dst))
			} else {
				errs = append(errs, os.Remove(d.dst))
			}
		}
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // only if still empty
		}
		return errors.Join(errs...)
	}
	for i, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		newDirs, err := mkdirs(filepath.Dir(dst))
		made = append(made, newDirs...)
		p := placed{dst: dst}
		if err == nil {
			if fi, statErr := os.Lstat(dst); statErr == nil {
				if fi.IsDir() {
					err = fmt.Errorf("%s is a directory", dst)
				} else {
					p.backup = filepath.Join(stage, "old-"+strconv.Itoa(i))
					err = os.Rename(dst, p.backup)
				}
			}
		}
		if err == nil {
			if err = os.Rename(filepath.Join(stage, strconv.Itoa(i)), dst); err != nil && p.backup != "" {
				if rbErr := os.Rename(p.backup, dst); rbErr != nil {
					err = errors.Join(err, rbErr)
				}
			}
		}
		if err == nil {
			done = append(done, p)
			continue
		}
		if undoErr := undo(); undoErr != nil {
			keep = true
			return fmt.Errorf("place %s: %w; putting back the files replaced so far also failed: %v (the previous versions are in %s)", f.Path, err, undoErr, stage)
		}
		return fmt.Errorf("place %s: %w; nothing was written, %s is as it was", f.Path, err, dir)
	}
	return nil
}

// mkdirs is os.MkdirAll returning the directories it created.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}
