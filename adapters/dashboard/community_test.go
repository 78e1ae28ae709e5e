package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// redditPhrases holds one reddit phrase watching r/saas.
type redditPhrases struct{ fakePhrases }

var saasPhrase = core.Phrase{ID: "p-saas", Phrase: "acme", Platform: core.Reddit, Community: "saas", Status: core.Listening}

func (redditPhrases) Get(_ context.Context, _, id string) (core.Phrase, error) {
	if id == saasPhrase.ID {
		return saasPhrase, nil
	}
	return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
}
func (redditPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return []core.Phrase{saasPhrase}, nil
}

// A reddit match shows the community it was read in, on the page and in
// the markup a triaged match is swapped in with.
func TestMatchShowsItsCommunity(t *testing.T) {
	it := item(1, "acme is great", "ada", "https://www.reddit.com/r/saas/comments/1/")
	it.Match.Platform, it.Match.PhraseID = core.Reddit, saasPhrase.ID
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{items: []ports.InboxItem{it}}, Matches: fakeMatches{m: it.Match}, Phrases: redditPhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `<span class="community">r/saas</span>`
	if w := get(d, "/app/", true); w.Code != 200 || !strings.Contains(w.Body.String(), want) {
		t.Fatalf("inbox: %d, no %s in the page", w.Code, want)
	}
	r := httptest.NewRequest("POST", "/app/matches/m1", strings.NewReader("action=star"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set(fragmentHeader, "1")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
		t.Fatalf("triaged match: %d %q", w.Code, w.Body.String())
	}
}
