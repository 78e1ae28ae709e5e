package dashboard

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// An owner without phrases has nothing to search, filter, download or
// select: the inbox shows only what to do first, a link to add a phrase.
// An owner with phrases and no match yet keeps the whole inbox, its
// empty list saying what happens next.
func TestEmptyInboxWithoutPhrasesStandsAlone(t *testing.T) {
	inboxOf := func(phrases []core.Phrase, path string) string {
		t.Helper()
		var q ports.InboxQuery
		d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
			Deps{Sessions: ownerSessions{owners: map[string]string{"own" + strings.Repeat("t", 40): "own"}}, Inbox: searchInbox{got: &q},
				Exports: searchInbox{got: &q}, Phrases: ownerPhrases{by: map[string][]core.Phrase{"own": phrases}}})
		if err != nil {
			t.Fatal(err)
		}
		return page(t, d, path)
	}
	whole := []string{`class="filters"`, `href="/app/export?`, `id="bulk"`, `id="matches"`, "Keyboard shortcuts"}

	for _, path := range []string{"/app/", "/app/?show=all&q=acme"} {
		none := inboxOf(nil, path)
		if !strings.Contains(none, `<div class="empty" id="empty">`) || !strings.Contains(none, `<a class="button" href="/app/phrases">Add a phrase</a>`) ||
			!strings.Contains(none, "add a phrase") {
			t.Errorf("%s without phrases: no step to add one\n%s", path, none)
		}
		for _, s := range whole {
			if strings.Contains(none, s) {
				t.Errorf("%s without phrases shows %q\n%s", path, s, none)
			}
		}
	}

	some := inboxOf([]core.Phrase{unread("p1", "acme", core.X)}, "/app/")
	for _, s := range append(whole, `<div class="empty" id="empty">`, "No matches yet", "<code>earshot helper</code>") {
		if !strings.Contains(some, s) {
			t.Errorf("with a phrase and no match the inbox lacks %q\n%s", s, some)
		}
	}
	if strings.Contains(some, "Add a phrase") {
		t.Errorf("an owner with a phrase is told to add one\n%s", some)
	}
}
