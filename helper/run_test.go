package helper_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// saver is a reader that keeps what it learned with In.Save and reads it
// back with In.Since.
type saver struct{ seen []string }

func (s *saver) Platform() string { return "facebook" }

func (s *saver) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	s.seen = append(s.seen, in.Since("facebook:groups"))
	return in.Save("facebook:groups", "learned")
}

// What a reader saves is in the state file at once, with no batch, and
// outlives the runner.
func TestRunnerKeepsWhatAReaderSaves(t *testing.T) {
	srv := fakeDeployment(t, nil)
	c := newClient(t, srv)
	path := filepath.Join(t.TempDir(), "state.json")
	pass := func(rd *saver) {
		t.Helper()
		st, err := helper.OpenState(path, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		r := &helper.Runner{Client: c, State: st, Direct: true, Readers: []helper.Reader{rd}}
		if err := r.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	first, second := &saver{}, &saver{}
	pass(first)
	pass(second)
	if len(first.seen) != 1 || first.seen[0] != "" || len(second.seen) != 1 || second.seen[0] != "learned" {
		t.Errorf("first read saw %q, the next runner's %q", first.seen, second.seen)
	}
}

// A wait a platform names pauses the account at most a day, as the
// server bounds the account's retryAfter: an absurd Retry-After from x or
// facebook does not keep the account from being read for years.
func TestPauseForBoundsTheWait(t *testing.T) {
	issue := "rate_limited"
	v := helper.AccountView{State: "degraded", Issue: &issue, Action: "wait"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := helper.PauseFor(v, helper.Signal{Platform: "x", Status: 429}, 10*365*24*time.Hour, now)
	if p == nil || p.Until.After(now.Add(24*time.Hour)) {
		t.Fatalf("pause %+v, want one of at most a day", p)
	}
}

// A state file holding JSON null is an empty state, not a crash.
func TestStateFileOfNull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("null"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := helper.OpenState(path, "https://earshot.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(map[string]string{"k": "v"}); err != nil || st.Get("k") != "v" {
		t.Fatalf("set: %v, get %q", err, st.Get("k"))
	}
}
