//go:build !linux

package hugeheap

import (
	"fmt"
	"runtime"
)

func advise(int) (Range, error) {
	return Range{}, fmt.Errorf("%w: transparent huge pages are Linux's (this is %s)", ErrSkipped, runtime.GOOS)
}
