package helper_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/helper"
)

// A 429 waits its Retry-After and a 5xx backs off, each time sending the
// batch as it was; a 401 is final, and nothing the client says quotes
// the key.
func TestIngestRetriesAndKeepsTheKeyOut(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"code":"rate_limited","message":"slow down"}}`)
		},
		func(w http.ResponseWriter) { w.WriteHeader(502) },
		func(w http.ResponseWriter) { io.WriteString(w, `{"accountId":"a1","ingested":1,"skipped":0}`) },
		func(w http.ResponseWriter) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"code":"unauthorized","message":"the key is revoked"}}`)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		next := answers[0]
		answers = answers[1:]
		mu.Unlock()
		next(w)
	}))
	defer srv.Close()
	const key = "svc_ingest_secretvalue"
	c, err := helper.NewClient(srv.URL, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	posts := []helper.Post{{ExternalID: "t3_a", Body: []string{"acme"}, URL: "https://www.reddit.com/r/x/comments/a/", Community: "x"}}
	res, err := c.Ingest(context.Background(), "reddit", posts)
	if err != nil || res.Ingested != 1 {
		t.Fatalf("ingest: %+v %v", res, err)
	}
	if len(bodies) != 3 || bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Fatalf("bodies sent %q, want the same batch three times", bodies)
	}
	if len(waits) != 2 || waits[0] < 7*time.Second || waits[0] > 8*time.Second || waits[1] <= 0 || waits[1] > 2*helper.DefaultBackoff {
		t.Fatalf("waits %v, want Retry-After's 7s then a backoff within %s", waits, 2*helper.DefaultBackoff)
	}
	_, err = c.Ingest(context.Background(), "reddit", posts)
	if !errors.Is(err, helper.ErrUnauthorized) || len(bodies) != 4 {
		t.Fatalf("after a 401: %v, %d requests; want ErrUnauthorized at once", err, len(bodies))
	}
	if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "secretvalue") {
		t.Fatalf("the error quotes the key: %v", err)
	}
}

// Retries are bounded: a server that keeps failing ends the batch with
// its error after Attempts tries.
func TestIngestRetriesAreBounded(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n++; w.WriteHeader(500) }))
	defer srv.Close()
	c, _ := helper.NewClient(srv.URL, "svc_ingest_k", nil)
	c.Sleep = func(context.Context, time.Duration) error { return nil }
	if _, err := c.Ingest(context.Background(), "reddit", nil); err == nil || n != helper.DefaultAttempts {
		t.Fatalf("err %v after %d tries, want a failure after %d", err, n, helper.DefaultAttempts)
	}
	if _, err := c.Ingest(context.Background(), "reddit", make([]helper.Post, 101)); err == nil {
		t.Fatal("a batch of 101 was sent")
	}
}

// The same answer is reported once; a change, and the recovery after it,
// are reported each time.
func TestReportSendsChangesOnly(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		io.WriteString(w, `{"accountId":"a","platform":"reddit","state":"healthy","issue":null,"action":"none","requiresAction":false}`)
	}))
	defer srv.Close()
	c, _ := helper.NewClient(srv.URL, "svc_ingest_k", nil)
	for _, s := range []helper.Signal{{Status: 200}, {Status: 200}, {Status: 401}, {Status: 401}, {Status: 200}, {NoResponse: true}} {
		s.Platform = "reddit"
		if _, _, err := c.Report(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 4 {
		t.Fatalf("reports sent %q, want 4 (200, 401, 200, no answer)", got)
	}
}

// The state is written by rename: a reader finds the old checkpoints or
// the new, and a new state file starts empty.
func TestStateKeepsCheckpointsPerServer(t *testing.T) {
	path := t.TempDir() + "/sub/state.json"
	a, err := helper.OpenState(path, "http://a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Set(map[string]string{"reddit:new:golang": "12"}); err != nil {
		t.Fatal(err)
	}
	b, _ := helper.OpenState(path, "http://b")
	if b.Get("reddit:new:golang") != "" {
		t.Fatal("another server's checkpoint was read")
	}
	a2, _ := helper.OpenState(path, "http://a")
	if a2.Get("reddit:new:golang") != "12" {
		t.Fatal("the checkpoint was not kept")
	}
}

// Only the platform's domain's cookies are sent.
func TestCookieHeader(t *testing.T) {
	jar := []core.Cookie{{Domain: ".reddit.com", Name: "reddit_session", Value: "v1"}, {Domain: "www.reddit.com", Name: "token_v2", Value: "v2"},
		{Domain: "notreddit.com", Name: "n", Value: "x"}}
	if h := helper.CookieHeader(jar, "reddit.com"); h != "reddit_session=v1; token_v2=v2" {
		t.Fatalf("cookie header %q", h)
	}
}

// A report fits the server's bounds on what it takes (health's), measured
// on the text it decodes: a body cut in the middle of a character, or
// one that is not UTF-8 (a Latin-1 page), and a long redirect address
// are cut to fit rather than refused with 400.
func TestReportFitsTheServersBounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s struct{ Location, Body string }
		if err := json.NewDecoder(r.Body).Decode(&s); err != nil ||
			len(s.Location) > health.MaxSignalLocation || len(s.Body) > health.MaxSignalBody {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":"invalid_parameter","message":"too long"}}`)
			return
		}
		io.WriteString(w, `{"accountId":"a","platform":"facebook","state":"healthy","issue":null,"action":"none","requiresAction":false}`)
	}))
	defer srv.Close()
	c, _ := helper.NewClient(srv.URL, "svc_ingest_k", nil)
	c.Attempts = 1
	for i, s := range []helper.Signal{
		{Status: 403, Body: strings.Repeat("a", helper.MaxSignalBody-1) + "é"},
		{Status: 404, Body: strings.Repeat("\xe9", 5000)},
		{Status: 302, Location: "https://www.facebook.com/checkpoint/?next=" + strings.Repeat("x", 3000)},
	} {
		s.Platform = "facebook"
		if _, _, err := c.Report(context.Background(), s); err != nil {
			t.Errorf("report %d: %v", i, err)
		}
	}
}
