package fails

import (
	"os"
	"testing"
)

// TestFails fails only when asked, so `go test ./...` in the folder of
// the repository never sees it fail.
func TestFails(t *testing.T) {
	if os.Getenv("SAMPLE_FAIL") == "" {
		t.Skip("SAMPLE_FAIL is unset: failing case skipped")
	}
	t.Log("logged before the failure")
	t.Error("the failure")
}

func TestBeside(t *testing.T) {}
