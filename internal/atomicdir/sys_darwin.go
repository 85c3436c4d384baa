package atomicdir

import "golang.org/x/sys/unix"

// exchange swaps two directory entries in one step (APFS).
func exchange(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}
