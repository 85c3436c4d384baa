package atomicdir

import "golang.org/x/sys/unix"

// exchange swaps two directory entries in one step (Linux ≥ 3.15; ext4,
// xfs, btrfs, tmpfs, overlayfs among others).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
