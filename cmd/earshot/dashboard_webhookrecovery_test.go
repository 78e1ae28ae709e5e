package main

// A webhook's secret rotated and its failed deliveries replayed in a real
// browser against the real binary, the messages verified by a receiver
// with the Standard Webhooks Go library.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// libraryReceiver keeps each message it gets and answers status.
type libraryReceiver struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	msgs   []struct {
		header http.Header
		body   []byte
	}
}

func newLibraryReceiver(t *testing.T) *libraryReceiver {
	r := &libraryReceiver{}
	r.status.Store(http.StatusNoContent)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.msgs = append(r.msgs, struct {
			header http.Header
			body   []byte
		}{req.Header.Clone(), body})
		r.mu.Unlock()
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// verified reports, per message so far, whether the library takes it
// with secret.
func (r *libraryReceiver) verified(t *testing.T, secret string) []bool {
	t.Helper()
	lib, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]bool, len(r.msgs))
	for i, m := range r.msgs {
		out[i] = lib.Verify(m.body, m.header) == nil
	}
	return out
}

func (r *libraryReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// Rotate the secret from the webhook's page (through its confirmation,
// an hour's overlap): the new secret is shown once, and the messages
// that follow verify with the old secret and with the new one. A
// delivery that failed is then replayed from the page's form: a new
// delivery with trigger replay, delivered, signed the same way.
func TestDashboardWebhookRotateAndReplay(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2",
		"EARSHOT_WEBHOOK_RETRY_SCHEDULE=1s")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	rcv := newLibraryReceiver(t)
	hook := dataOf(t, s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": rcv.srv.URL + "/in", "min_score": 0}).want(t, 201, ""))
	old, page := hook["secret"].(string), s.URL+"/app/webhooks/"+hook["id"].(string)

	b.signIn(s.loginLink(s.OwnerID))
	b.open(page)
	b.submitAndWait(`#rotate`)
	if got := b.text("main"); !strings.Contains(got, "Rotate the signing secret?") || !strings.Contains(got, "shown once") {
		t.Fatalf("the confirmation:\n%s", got)
	}
	if v := eval[string](b, `document.querySelector("#overlap").value`); v != "86400" {
		t.Fatalf("the overlap chosen at first: %q", v)
	}
	b.do(setValue("#overlap", "3600"))
	b.submitAndWait(`#rotate-confirm`)
	secret := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(secret, "whsec_") || secret == old || !strings.Contains(b.text(".notice"), "The old one also signs every message until") {
		t.Fatalf("after the rotation: secret %q\n%s", secret, b.text("main"))
	}
	b.open(page)
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) || !strings.Contains(b.text("#old-secret"), "also signs until") {
		t.Fatalf("the page after the rotation:\n%s", b.text("main"))
	}

	// A match whose delivery fails both its tries.
	rcv.status.Store(http.StatusInternalServerError)
	s.ingest(s.IngestKey, "x", xPost("r1", "ada", "acme for sale?"))
	b.openUntil(page, `document.querySelector("table.deliveries .dstatus.failed")`, "the match's delivery, failed")
	rcv.status.Store(http.StatusNoContent)
	tried := rcv.count()

	b.submitAndWait(`#replay`)
	if got := b.text(".notice"); !strings.Contains(got, "1 failed delivery queued to be sent again") {
		t.Fatalf("after the replay: %q\n%s", got, b.text("main"))
	}
	b.openUntil(page, `Array.from(document.querySelectorAll("table.deliveries tbody tr")).some(function(tr){return tr.querySelector("td").innerText.trim()==="replay"&&tr.querySelector(".dstatus.delivered")})`,
		"the replay, delivered")
	if rcv.count() != tried+1 {
		t.Fatalf("%d messages after the replay, %d before", rcv.count(), tried)
	}
	withOld, withNew := rcv.verified(t, old), rcv.verified(t, secret)
	for i := range withOld {
		if !withOld[i] || !withNew[i] {
			t.Fatalf("message %d during the overlap: the old secret %v, the new one %v", i, withOld[i], withNew[i])
		}
	}
	if n := b.dialogCount(); n != 0 {
		t.Fatalf("%d dialogs opened", n)
	}
}
