package dashboard

// The inbox's first step, in Debian's Chromium: an owner with no
// phrase sees only the link to add one, and the page becomes the whole
// inbox once a phrase exists, added in another tab or on another
// device. Skipped without Chromium.

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// addedPhrases lists the phrases added so far, none at first.
type addedPhrases struct {
	fakePhrases
	mu sync.Mutex
	p  []core.Phrase
}

func (a *addedPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]core.Phrase(nil), a.p...), nil
}

func (a *addedPhrases) add(p core.Phrase) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.p = append(a.p, p)
}

func TestFirstStepGivesWayToAPhraseAddedElsewhere(t *testing.T) {
	phrases := &addedPhrases{}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 20 * time.Millisecond},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: phrases})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { d.Close() })
	ctx := browserAt(t, srv, 1280)
	open(t, ctx, srv.URL+"/app/")
	if !evalJS[bool](t, ctx, `!!document.querySelector('#empty a[href="/app/phrases"]') && !document.getElementById("matches")`) {
		t.Fatal("an owner without phrases is not shown the first step alone")
	}
	phrases.add(core.Phrase{ID: "p1", Phrase: "acme", Platform: core.Reddit, Community: "saas", Status: core.Listening})
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.WaitReady(chromedp.CSS("#matches #empty"))); err != nil {
		t.Fatalf("the inbox still shows the first step after a phrase was added: %v", err)
	}
	if got := evalJS[string](t, ctx, `document.getElementById("empty").innerText.trim()`); got != "No matches yet. The server reads reddit itself; new matches appear here as they arrive." {
		t.Errorf("the empty inbox says %q", got)
	}
	if !evalJS[bool](t, ctx, `!!document.querySelector("form.filters") && !!document.getElementById("bulk")`) {
		t.Error("the inbox lacks its filters or bulk bar once a phrase exists")
	}
}
