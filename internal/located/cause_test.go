package located

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestPathCause(t *testing.T) {
	_, err := os.Open("/nonexistent/kaudit-path-cause")
	if got := PathCause(fmt.Errorf("wrapped: %w", err)); !errors.Is(got, fs.ErrNotExist) || strings.Contains(got.Error(), "/nonexistent") {
		t.Errorf("PathCause(open error) = %v, want the bare cause", got)
	}
	plain := errors.New("not a path error")
	if got := PathCause(plain); got != plain {
		t.Errorf("PathCause(%v) = %v, want it unchanged", plain, got)
	}
}
