package httpstatus_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/httpstatus"
)

// want is the status of every kind, as the spec's error table gives it.
var want = map[core.Kind]int{
	core.KindInternal:        500,
	core.KindInvalid:         400,
	core.KindInvalidRequest:  400,
	core.KindInvalidJSON:     400,
	core.KindUnauthorized:    401,
	core.KindForbidden:       403,
	core.KindPlanLimit:       403,
	core.KindNotFound:        404,
	core.KindConflict:        409,
	core.KindPayloadTooLarge: 413,
	core.KindRateLimited:     429,
	core.KindUnavailable:     503,
}

func TestOf(t *testing.T) {
	for kind, status := range want {
		err := core.Errorf(kind, "x")
		if got := httpstatus.Of(err); got != status {
			t.Errorf("Of(%s) = %d, want %d", kind.Code(), got, status)
		}
		// The kind is found through wrapping, as core.KindOf finds it.
		if got := httpstatus.Of(fmt.Errorf("context: %w", err)); got != status {
			t.Errorf("Of(wrapped %s) = %d, want %d", kind.Code(), got, status)
		}
	}
	for name, err := range map[string]error{"no kind": errors.New("boom"), "nil": nil, "unknown kind": core.Errorf(core.Kind(99), "x")} {
		if got := httpstatus.Of(err); got != 500 {
			t.Errorf("Of(%s) = %d, want 500", name, got)
		}
	}
}

// A kind appended to core has a code of its own; it must get a status
// here too rather than fall to 500.
func TestEveryKindHasAStatus(t *testing.T) {
	for k := core.KindInternal + 1; k.Code() != core.KindInternal.Code(); k++ {
		if _, ok := want[k]; !ok {
			t.Errorf("kind %s has no status in the table", k.Code())
		}
	}
}
