//go:build linux || darwin

package atomicdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive flock on the parent directory itself (no lock
// file to leave behind); the kernel drops it when the process dies.
func lock(parent string) (func(), error) {
	f, err := os.Open(parent)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
