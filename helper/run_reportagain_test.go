package helper_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// challenged is an x reader whose every search is sent to x's
// /account/access, the page where x has a locked account verify itself.
type challenged struct{ reads int }

func (c *challenged) Platform() string { return "x" }

func (c *challenged) Read(ctx context.Context, in helper.In, _ func(helper.Post, helper.Mark) error) error {
	c.reads++
	if err := in.Report(ctx, helper.Signal{Status: 302, Location: "https://x.com/account/access"}, 0); err != nil {
		return err
	}
	return errors.New("x: not a search")
}

// A read taken up again after a pause reports what the platform answers
// even when it is what it answered before the pause: meanwhile the owner
// may have marked the challenge resolved on the server, whose view
// would otherwise say healthy while the helper is paused again without
// a word.
func TestReadAfterAPauseReportsAgain(t *testing.T) {
	var reports, jar atomic.Int64
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"phrases":["acme"]}`) },
		"/session": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `[{"domain":".x.com","name":"auth_token","value":"t%d","path":"/"},{"domain":".x.com","name":"ct0","value":"c","path":"/"}]`, jar.Load())
		},
		// The server's answer to a report of x's /account/access
		// (adapters/httpapi.AccountView, core/health: checkpointed).
		"/account-status": func(w http.ResponseWriter, r *http.Request) {
			reports.Add(1)
			io.WriteString(w, `{"accountId":"a1","platform":"x","state":"action_required","issue":"checkpointed","action":"open_challenge","requiresAction":true}`)
		},
	})
	rd := &challenged{}
	r := newRunner(t, srv, rd)
	var p *helper.Paused
	if err := r.Pass(context.Background()); !errors.As(err, &p) || !p.NeedsOwner {
		t.Fatalf("the first pass: %v, want a pause for the owner", err)
	}
	// The owner marks it resolved and uploads a session that x still
	// sends to the challenge.
	jar.Add(1)
	if err := r.Pass(context.Background()); !errors.As(err, &p) || !p.NeedsOwner {
		t.Fatalf("the pass with a new session: %v, want a pause for the owner", err)
	}
	if rd.reads != 2 {
		t.Fatalf("%d reads, want 2", rd.reads)
	}
	if n := reports.Load(); n != 2 {
		t.Fatalf("%d reports, want 2: the challenge met again with a new session was not told to the server", n)
	}
}
