package helper_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// limited is a facebook reader whose every page is facebook's "temporarily
// blocked for going too fast" (code 368), which names no wait; ok makes a
// read whose page is normal first.
type limited struct {
	reads int
	ok    bool
}

func (l *limited) Platform() string { return "facebook" }

func (l *limited) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	l.reads++
	if l.ok {
		if err := in.Report(ctx, helper.Signal{Status: 200}, 0); err != nil {
			return err
		}
	}
	if err := in.Report(ctx, helper.Signal{Status: 200, Code: 368, Unusable: true}, 0); err != nil {
		return err
	}
	return fmt.Errorf("facebook: blocked")
}

// A rate limit that names no wait waits what the server decided (its
// answer's retryAfter: 15 minutes, core/health's RateLimitedRetry), and
// twice as long for each one in a row, at most a day; a normal answer
// between two ends the run. (It waited the helper's own minute: the
// account was asked again every pass, inside x's 15-minute window and
// all through facebook's hours-long block.)
func TestARateLimitWithoutAWaitBacksOff(t *testing.T) {
	var reports atomic.Int64
	srv := fakeDeployment(t, routes{
		"/session": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `[{"domain":".facebook.com","name":"c_user","value":"1000","path":"/"},{"domain":".facebook.com","name":"xs","value":"x","path":"/"}]`)
		},
		"/account-status": func(w http.ResponseWriter, r *http.Request) {
			reports.Add(1)
			// The server's answers (adapters/httpapi.AccountView): code 368
			// is rate_limited, and retryAfter 15 minutes when the report
			// named no wait; a normal page is healthy.
			var s struct{ Code int }
			if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
				t.Errorf("a report that is not JSON: %v", err)
			}
			if s.Code == 368 {
				io.WriteString(w, `{"accountId":"a1","platform":"facebook","state":"degraded","issue":"rate_limited","action":"wait","requiresAction":false,"retryAfter":900}`)
				return
			}
			io.WriteString(w, `{"accountId":"a1","platform":"facebook","state":"healthy","issue":null,"action":"none","requiresAction":false}`)
		},
	})
	start := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	now := start
	rd := &limited{}
	r := newRunner(t, srv, rd)
	r.Now = func() time.Time { return now }
	// pass makes a pass and returns how long the account now waits.
	pass := func(wantReads int, what string) time.Duration {
		t.Helper()
		err := r.Pass(context.Background())
		if rd.reads != wantReads {
			t.Fatalf("%s: %d reads, want %d", what, rd.reads, wantReads)
		}
		var p *helper.Paused
		if !errors.As(err, &p) {
			t.Fatalf("%s: not paused: %v", what, err)
		}
		return p.Until.Sub(now)
	}
	if d := pass(1, "the first pass"); d != 15*time.Minute {
		t.Fatalf("the first rate limit waits %v, want the server's 15 minutes", d)
	}
	now = now.Add(10 * time.Minute)
	pass(1, "ten minutes later")
	now = now.Add(5 * time.Minute)
	if d := pass(2, "past the first wait"); d != 30*time.Minute {
		t.Fatalf("the second rate limit in a row waits %v, want 30 minutes", d)
	}
	now = now.Add(20 * time.Minute)
	pass(2, "twenty minutes into the second wait")
	now = now.Add(10 * time.Minute)
	if d := pass(3, "past the second wait"); d != time.Hour {
		t.Fatalf("the third rate limit in a row waits %v, want an hour", d)
	}
	for range 12 {
		now = now.Add(helper.MaxPause)
		if d := pass(rd.reads+1, "a day later"); d > helper.MaxPause {
			t.Fatalf("a rate limit waits %v, past a day", d)
		}
	}
	rd.ok = true
	now = now.Add(helper.MaxPause)
	if d := pass(rd.reads+1, "a read with a normal page first"); d != 15*time.Minute {
		t.Fatalf("a rate limit after a normal answer waits %v, want 15 minutes again", d)
	}
	if reports.Load() == 0 {
		t.Fatal("nothing reported")
	}
}
