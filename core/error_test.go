package core_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// requireKind fails t unless err carries kind k, matched the way callers
// are told to match: errors.Is against a bare *core.Error of that kind.
func requireKind(t *testing.T, err error, k core.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want kind %s", k)
	}
	if !errors.Is(err, &core.Error{Kind: k}) {
		t.Fatalf("err = %v (kind %s), want kind %s", err, core.KindOf(err), k)
	}
}

func TestKindCodes(t *testing.T) {
	// Every code of the spec's error table, and the one the service adds
	// for GET /proxy without a proxy.
	cases := []struct {
		kind core.Kind
		code string
	}{
		{core.KindInternal, "server_error"},
		{core.KindInvalid, "invalid_parameter"},
		{core.KindInvalidRequest, "invalid_request"},
		{core.KindInvalidJSON, "invalid_json"},
		{core.KindUnauthorized, "unauthorized"},
		{core.KindForbidden, "forbidden"},
		{core.KindPlanLimit, "plan_limit"},
		{core.KindNotFound, "not_found"},
		{core.KindConflict, "conflict"},
		{core.KindPayloadTooLarge, "payload_too_large"},
		{core.KindRateLimited, "rate_limited"},
		{core.KindUnavailable, "service_unavailable"},
	}
	seenCode := map[string]core.Kind{}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			if got := c.kind.Code(); got != c.code {
				t.Errorf("Kind(%d).Code() = %q, want %q", int(c.kind), got, c.code)
			}
			if got := c.kind.String(); got != c.code {
				t.Errorf("Kind(%d).String() = %q, want %q", int(c.kind), got, c.code)
			}
		})
		if prev, dup := seenCode[c.code]; dup {
			t.Errorf("kinds %d and %d share code %q", int(prev), int(c.kind), c.code)
		}
		seenCode[c.code] = c.kind
	}
	// One-to-one the other way: no kind outside the table has a code of its
	// own, so a transport's status table covers every kind.
	for k := core.Kind(0); k <= core.KindUnavailable; k++ {
		if _, ok := seenCode[k.Code()]; !ok {
			t.Errorf("kind %d has code %q, missing from the spec table", int(k), k.Code())
		}
	}
	for _, k := range []core.Kind{-1, core.KindUnavailable + 1, 1000} {
		if got := k.Code(); got != "server_error" {
			t.Errorf("out-of-range Kind(%d).Code() = %q, want server_error", int(k), got)
		}
	}
}

func TestErrorsIsMatchesKindThroughWrapping(t *testing.T) {
	base := core.Errorf(core.KindNotFound, "no such phrase")
	cause := errors.New("sql: no rows in result set")
	cases := []struct {
		name string
		err  error
		is   []core.Kind
	}{
		{"bare", base, []core.Kind{core.KindNotFound}},
		{"wrapped once", fmt.Errorf("get phrase: %w", base), []core.Kind{core.KindNotFound}},
		{"wrapped twice", fmt.Errorf("handler: %w", fmt.Errorf("get phrase: %w", base)), []core.Kind{core.KindNotFound}},
		{"joined", errors.Join(cause, base), []core.Kind{core.KindNotFound}},
		{"Wrap around a driver error", core.Wrap(core.KindConflict, cause, "phrase exists"), []core.Kind{core.KindConflict}},
		{"Wrap then fmt", fmt.Errorf("add: %w", core.Wrap(core.KindConflict, cause, "phrase exists")), []core.Kind{core.KindConflict}},
		// errors.Is walks the whole chain, so an outer kind does not hide
		// an inner one; KindOf gives the outer one (see TestKindOf).
		{"core around core", core.Wrap(core.KindInternal, base, "lookup failed"), []core.Kind{core.KindInternal, core.KindNotFound}},
		{"plain error", cause, nil},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k := core.Kind(0); k <= core.KindUnavailable; k++ {
				want := false
				for _, w := range c.is {
					want = want || w == k
				}
				if got := errors.Is(c.err, &core.Error{Kind: k}); got != want {
					t.Errorf("errors.Is(err, kind %s) = %v, want %v", k, got, want)
				}
			}
		})
	}

	// A target that carries a message is a specific error, not a kind
	// pattern: only the same value matches.
	if errors.Is(base, &core.Error{Kind: core.KindNotFound, Message: "no such phrase"}) {
		t.Error("errors.Is matched a distinct *Error that has a message")
	}
	if !errors.Is(fmt.Errorf("x: %w", base), base) {
		t.Error("errors.Is did not match the very same *Error through wrapping")
	}
}

func TestKindOfAndIsKind(t *testing.T) {
	cases := []struct {
		name string
		err  error
		kind core.Kind
	}{
		{"core error", core.Errorf(core.KindForbidden, "x"), core.KindForbidden},
		{"wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", core.Errorf(core.KindPlanLimit, "x"))), core.KindPlanLimit},
		{"Wrap", core.Wrap(core.KindRateLimited, errors.New("x"), "slow down"), core.KindRateLimited},
		{"outermost core error wins", core.Wrap(core.KindInternal, core.Errorf(core.KindNotFound, "x"), "y"), core.KindInternal},
		{"plain error is internal", errors.New("boom"), core.KindInternal},
		{"fs error is internal", fs.ErrNotExist, core.KindInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := core.KindOf(c.err); got != c.kind {
				t.Errorf("KindOf = %s, want %s", got, c.kind)
			}
			if !core.IsKind(c.err, c.kind) {
				t.Errorf("IsKind(err, %s) = false", c.kind)
			}
			for k := core.Kind(0); k <= core.KindUnavailable; k++ {
				if k != c.kind && core.IsKind(c.err, k) {
					t.Errorf("IsKind(err, %s) = true, want false", k)
				}
			}
		})
	}
	if core.IsKind(nil, core.KindInternal) {
		t.Error("IsKind(nil, KindInternal) = true: a nil error carries no kind")
	}
}

func TestMessage(t *testing.T) {
	const secret = "password=hunter2"
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"core error", core.Errorf(core.KindInvalid, "limit must be 1 to 100"), "limit must be 1 to 100"},
		{"wrapped by fmt", fmt.Errorf("dsn %s: %w", secret, core.Errorf(core.KindNotFound, "no such match")), "no such match"},
		{"Wrap hides its cause", core.Wrap(core.KindConflict, errors.New("pq: "+secret), "phrase already exists"), "phrase already exists"},
		{"plain error", errors.New("dial tcp: " + secret), "internal error"},
		{"plain error wrapped", fmt.Errorf("x: %w", errors.New(secret)), "internal error"},
		{"internal kind", core.Errorf(core.KindInternal, "query failed: %s", secret), "internal error"},
		{"internal Wrap", core.Wrap(core.KindInternal, errors.New(secret), "store: "+secret), "internal error"},
		{"empty message", core.Wrap(core.KindNotFound, errors.New(secret), ""), "internal error"},
		{"nil", nil, "internal error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := core.Message(c.err)
			if got != c.want {
				t.Errorf("Message = %q, want %q", got, c.want)
			}
			if strings.Contains(got, secret) {
				t.Errorf("Message leaks %q: %q", secret, got)
			}
		})
	}
}

type pathError struct{ path string }

func (e *pathError) Error() string { return "bad path " + e.path }

func TestWrapKeepsCause(t *testing.T) {
	sentinel := errors.New("sentinel")
	typed := &pathError{path: "/tmp/x"}
	cases := []struct {
		name  string
		cause error
	}{
		{"sentinel", sentinel},
		{"typed", typed},
		{"wrapped sentinel", fmt.Errorf("ctx: %w", sentinel)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := core.Wrap(core.KindUnavailable, c.cause, "try later")
			outer := fmt.Errorf("handler: %w", w)
			if w.Kind != core.KindUnavailable || w.Message != "try later" || w.Err != c.cause {
				t.Fatalf("Wrap = %+v", w)
			}
			if !errors.Is(outer, c.cause) {
				t.Error("errors.Is(outer, cause) = false")
			}
			if errors.Unwrap(w) != c.cause {
				t.Error("Unwrap did not return the cause")
			}
			if !strings.Contains(w.Error(), c.cause.Error()) || !strings.Contains(w.Error(), "try later") {
				t.Errorf("Error() = %q, want message and cause for logs", w.Error())
			}
			requireKind(t, outer, core.KindUnavailable)
		})
	}
	var pe *pathError
	if !errors.As(fmt.Errorf("h: %w", core.Wrap(core.KindInternal, typed, "x")), &pe) || pe.path != "/tmp/x" {
		t.Error("errors.As did not reach the typed cause")
	}
	var ce *core.Error
	if !errors.As(fmt.Errorf("h: %w", core.Wrap(core.KindInternal, typed, "x")), &ce) || ce.Kind != core.KindInternal {
		t.Error("errors.As did not reach the *core.Error")
	}
}

func TestErrorString(t *testing.T) {
	cause := errors.New("cause")
	cases := []struct {
		name string
		err  *core.Error
		want string
	}{
		{"message only", &core.Error{Kind: core.KindInvalid, Message: "bad"}, "bad"},
		{"cause only", &core.Error{Kind: core.KindInternal, Err: cause}, "cause"},
		{"both", &core.Error{Kind: core.KindInternal, Message: "store", Err: cause}, "store: cause"},
		{"Errorf formats", core.Errorf(core.KindInvalid, "%s must be %d to %d", "limit", 1, 100), "limit must be 1 to 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("Error() = %q, want %q", got, c.want)
			}
		})
	}
}
