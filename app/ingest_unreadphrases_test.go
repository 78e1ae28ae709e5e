package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A batch naming the phrases its helper did not search to the end
// (unreadPhrases) records the read of the other phrases only, on every
// platform: a text names the phrases the server would take for it (case
// and white space aside), on reddit in every community, and together
// with unreadCommunities leaves both sets as they were. A phrase left
// unread is recorded by the next batch that reads it, within the minute
// that holds back repeated writes of the others. Bad values refuse the
// batch whole, store none of its posts and record nothing.
func TestIngestLeavesUnreadPhrasesUnread(t *testing.T) {
	t.Parallel()
	databases(t, testIngestLeavesUnreadPhrasesUnread)
}

func testIngestLeavesUnreadPhrasesUnread(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "unreadphrases@example.com")
	add := func(phrase, platform, community string) core.Phrase {
		t.Helper()
		p, err := core.NewPhrase(o.ID, phrase, platform, community)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ps := map[string]core.Phrase{
		"x acme": add("acme", "x", ""), "x acme crm": add("Acme CRM", "x", ""), "x beta": add("beta", "x", ""),
		"fb acme": add("acme", "facebook", ""), "fb beta": add("beta", "facebook", ""),
		"golang acme": add("acme", "reddit", "golang"), "sales acme": add("acme", "reddit", "sales"),
		"golang crm": add("crm", "reddit", "golang"), "sales crm": add("crm", "reddit", "sales"),
	}
	created := map[string]time.Time{}
	for name, p := range ps {
		created[name] = p.CreatedAt
	}
	c := newSimClock()
	c.Set(ps["x acme"].CreatedAt.Add(time.Hour))
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet, Clock: c},
		core.Limits{AccountsPerPlatform: 1})
	// want checks the lastCheckedAt of the phrases it names.
	want := func(step string, at map[string]time.Time) {
		t.Helper()
		for name, when := range at {
			got, err := w.phrases.Phrase(ctx, o.ID, ps[name].ID)
			if err != nil {
				t.Fatal(err)
			}
			if !got.LastCheckedAt.Equal(when) {
				t.Errorf("%s: %q was checked at %v, want %v", step, name, got.LastCheckedAt, when)
			}
		}
	}
	post := func(id string) core.IngestPost {
		return core.IngestPost{ExternalID: id, Body: []string{"acme is great"}, URL: "https://x.com/a/status/" + id}
	}

	// The pass searched "acme" and "beta", then stopped at "Acme CRM": the
	// text as sent in another case and spacing, with texts of no phrase.
	first := c.Now()
	if _, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "x", Posts: []core.IngestPost{post("1")},
		UnreadPhrases: core.UnreadPhrases{Texts: []string{" acme\tcrm ", "no such phrase", "", strings.Repeat("a", core.MaxPhraseLen+1)}}}); err != nil || n != 1 {
		t.Fatalf("IngestBatch = %d, %v", n, err)
	}
	want("an x batch leaving Acme CRM unread", map[string]time.Time{"x acme": first, "x beta": first, "x acme crm": created["x acme crm"],
		"fb acme": created["fb acme"]})

	// Bad values: refused whole, nothing stored, nothing recorded (of
	// Acme CRM and of the phrases of the other platforms).
	for name, u := range map[string]core.UnreadPhrases{"not an array": {Invalid: true}, "too many": {Over: true}} {
		for _, pl := range []string{"x", "facebook", "reddit"} {
			_, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: pl, Posts: []core.IngestPost{post("2")}, UnreadPhrases: u})
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "unreadPhrases") || n != 0 {
				t.Errorf("%s on %s: IngestBatch = %d, %v; want the batch refused naming unreadPhrases", name, pl, n, err)
			}
		}
	}
	want("after refused batches", map[string]time.Time{"x acme": first, "x acme crm": created["x acme crm"], "fb acme": created["fb acme"],
		"golang acme": created["golang acme"]})

	// At the limit, and read within the minute: Acme CRM is recorded at
	// once, the others not written again.
	c.Set(first.Add(20 * time.Second))
	limit := make([]string, core.MaxUnreadPhrases)
	for i := range limit {
		limit[i] = "beta"
	}
	if _, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "x", Posts: []core.IngestPost{post("2")},
		UnreadPhrases: core.UnreadPhrases{Texts: limit}}); err != nil || n != 1 {
		t.Fatalf("a batch of %d texts: %d, %v; want the post stored (a refused batch stored it already?)", len(limit), n, err)
	}
	want("the next batch read Acme CRM", map[string]time.Time{"x acme": first, "x beta": first, "x acme crm": c.Now()})

	// facebook takes the field as x does.
	fb := c.Now()
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "facebook", UnreadPhrases: core.UnreadPhrases{Texts: []string{"BETA"}}}); err != nil {
		t.Fatal(err)
	}
	want("a facebook batch leaving beta unread", map[string]time.Time{"fb acme": fb, "fb beta": created["fb beta"]})

	// reddit: the text in every community, and the communities named
	// unread besides: only crm in r/sales is read.
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit",
		Unread: core.UnreadCommunities{Names: []string{"golang"}}, UnreadPhrases: core.UnreadPhrases{Texts: []string{"acme"}}}); err != nil {
		t.Fatal(err)
	}
	want("a reddit batch leaving r/golang and acme unread", map[string]time.Time{"sales crm": fb, "golang crm": created["golang crm"],
		"golang acme": created["golang acme"], "sales acme": created["sales acme"]})
}
