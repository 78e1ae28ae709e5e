package app

import (
	"errors"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// again makes a write that failed for a moment again until it works, and
// gives up at once on an error a second write would meet again.
func TestAgain(t *testing.T) {
	t.Parallel()
	until := time.Now().Add(time.Minute)
	calls := 0
	err := again(until, func() error {
		if calls++; calls < 3 {
			return errors.New("connection reset by peer")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("again = %v after %d calls, want nil after 3", err, calls)
	}
	calls = 0
	err = again(until, func() error { calls++; return core.Errorf(core.KindNotFound, "webhook not found") })
	if !core.IsKind(err, core.KindNotFound) || calls != 1 {
		t.Fatalf("again = %v after %d calls, want not found after 1", err, calls)
	}
	calls = 0
	err = again(time.Now(), func() error { calls++; return errors.New("connection reset by peer") })
	if err == nil || calls != 1 {
		t.Fatalf("again past its end = %v after %d calls, want the error after 1", err, calls)
	}
}
