package benchtest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// Seed stores every match asked for, the last batch short, all the
// owner's, and the key it returns authenticates.
func TestSeed(t *testing.T) {
	ctx := context.Background()
	f := benchtest.Seed(t, dbtest.Memory(t), 2500)
	n := 0
	q := ports.MatchQuery{Limit: 100}
	for {
		page, err := f.Matches.List(ctx, f.Owner.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Matches)
		if page.Next == nil {
			break
		}
		q.Before = *page.Next
	}
	if n != 2500 {
		t.Fatalf("%d matches, want 2500", n)
	}
	k, err := f.Keys.Authenticate(ctx, core.APIKey, f.APIKey)
	if err != nil || k.OwnerID != f.Owner.ID {
		t.Fatalf("the fixture's key: %+v %v", k, err)
	}
}

// Load counts every call its clients made.
func TestLoad(t *testing.T) {
	var made atomic.Int64
	calls, took := benchtest.Load(4, 20*time.Millisecond, func() { made.Add(1) })
	if calls == 0 || calls != made.Load() || took <= 0 {
		t.Fatalf("Load = %d calls in %v; %d made", calls, took, made.Load())
	}
}

// Getter sends the fixture's key and the cookies given, and returns the
// body of a 200.
func TestGetter(t *testing.T) {
	f := benchtest.Fixture{APIKey: "svc_api_test"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("earshot_session")
		if r.Header.Get("Authorization") != "Bearer svc_api_test" || err != nil || c.Value != "s1" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("page"))
	}))
	defer srv.Close()
	get := f.Getter(t, &http.Cookie{Name: "earshot_session", Value: "s1"})
	if got := string(get(srv.URL)); got != "page" {
		t.Fatalf("body %q", got)
	}
}
