package helper_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// many emits n posts of one listing, oldest first.
type many struct{ n int }

func (m many) Platform() string { return "x" }

func (m many) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	for i := 1; i <= m.n; i++ {
		id := fmt.Sprint(1000 + i)
		p := helper.Post{ExternalID: id, AuthorName: "ada", Body: []string{"acme"}, URL: "https://x.com/ada/status/" + id}
		if err := emit(p, helper.Mark{Key: "x:search:acme", Value: id}); err != nil {
			return err
		}
	}
	return nil
}

// A batch the client gave up on after its bounded tries is not sent
// again at once by the same pass: it waits for the next pass, which
// reads it again from the checkpoint that did not move. (It was sent
// again, a second round of Attempts tries and of the waits the server
// named, doubling how long a pass holds on to a failing server.)
func TestAFailedBatchIsNotSentAgainInThePass(t *testing.T) {
	var ingests atomic.Int64
	srv := fakeDeployment(t, routes{
		"/ingest": func(w http.ResponseWriter, r *http.Request) {
			ingests.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		},
	})
	r := newRunner(t, srv, many{n: helper.MaxBatch + 1})
	r.Client.Sleep = func(context.Context, time.Duration) error { return nil }
	if err := r.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded with every batch refused")
	}
	if n := ingests.Load(); n != helper.DefaultAttempts {
		t.Fatalf("POST /ingest asked %d times, want the client's %d tries once", n, helper.DefaultAttempts)
	}
	if got := r.State.Get("x:search:acme"); got != "" {
		t.Fatalf("the checkpoint moved to %q", got)
	}
}
