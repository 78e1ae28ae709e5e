package helper_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// blocked is a reader whose every page is the platform's 403 block page,
// as x answers an address it blocks: reported, then stopped on the pause.
type blocked struct{ reads int }

func (b *blocked) Platform() string { return "x" }

func (b *blocked) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	b.reads++
	if err := in.Report(ctx, helper.Signal{Status: 403, Body: "<html>Forbidden</html>"}, 0); err != nil {
		return err
	}
	return fmt.Errorf("x: answered 403")
}

// A block of the proxy's address (proxy_blocked, action use_proxy) is
// the operator's proxy's, not the session's: the account is read again
// when GET /proxy names another proxy, or after a wait that doubles with
// each block in a row through the same proxy (15 minutes, then 30, ...,
// at most a day), never when the owner uploads a new session, which
// does nothing for it. It paused until the stored session changed, so
// the account stayed unread after the operator changed the proxy.
func TestAProxyBlockWaitsForTheProxyOrABoundedBackoff(t *testing.T) {
	var mu sync.Mutex
	proxy := "http://127.0.0.1:3128"
	srv := fakeDeployment(t, routes{
		"/proxy": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			io.WriteString(w, `{"required":true,"proxy":{"server":"`+proxy+`","username":"u","password":"p"}}`)
		},
		"/session": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `[{"domain":".x.com","name":"auth_token","value":"t","path":"/"},{"domain":".x.com","name":"ct0","value":"c","path":"/"}]`)
		},
		"/account-status": func(w http.ResponseWriter, r *http.Request) {
			// The server's view of a 403 through the proxy (core/health).
			io.WriteString(w, `{"accountId":"a1","platform":"x","state":"action_required","issue":"proxy_blocked","action":"use_proxy","requiresAction":true}`)
		},
	})
	now := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	rd := &blocked{}
	r := newRunner(t, srv, rd)
	r.Direct = false // GET /proxy answers required: true
	r.Now = func() time.Time { return now }
	pass := func(wantReads int, what string) {
		t.Helper()
		r.Pass(context.Background())
		if rd.reads != wantReads {
			t.Fatalf("%s: %d reads, want %d", what, rd.reads, wantReads)
		}
	}
	pass(1, "the first pass")
	now = now.Add(10 * time.Minute)
	pass(1, "ten minutes later, the same proxy")
	now = now.Add(6 * time.Minute)
	pass(2, "past the first wait (15 minutes)")
	now = now.Add(20 * time.Minute)
	pass(2, "the second block in a row waits 30 minutes")
	now = now.Add(11 * time.Minute)
	pass(3, "past the second wait")
	mu.Lock()
	proxy = "http://127.0.0.1:3129"
	mu.Unlock()
	pass(4, "the operator's proxy changed")
	for range 20 {
		now = now.Add(helper.MaxPause)
		pass(rd.reads+1, "a day later, however many blocks in a row")
	}
}
