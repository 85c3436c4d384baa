//go:build !linux

package hugeheap

import (
	"fmt"
	"runtime"
)

func advise(n int) (Range, error) { return Range{}, check(n) }

func check(int) error {
	return fmt.Errorf("%w: transparent huge pages are Linux's (this is %s)", ErrSkipped, runtime.GOOS)
}
