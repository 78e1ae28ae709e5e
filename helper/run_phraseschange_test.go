package helper_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
)

// A phrase the owner adds (or resumes, or whose text or community
// changes) while a pass reads was not read by that pass, though the
// server records as read every listening phrase a batch does not name
// (app.Ingest's markRead): each batch names the phrases GET /phrases
// gives when it is sent that the pass was not given, so a new phrase
// keeps its lastCheckedAt until a pass reads it. The batch named none of
// them, and the phrase showed a read that never happened.
func TestAPhraseAddedDuringThePassIsNamedUnread(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	var batches [][]string
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) {
			// The server's answer (adapters/httpapi): the texts, and the
			// items with their communities. The owner adds two phrases,
			// and moves one to another community, after the first answer.
			mu.Lock()
			defer mu.Unlock()
			asked++
			if asked == 1 {
				io.WriteString(w, `{"platform":"reddit","phrases":["acme","beta"],"items":[{"phrase":"acme","community":"crm"},{"phrase":"beta","community":"crm"}]}`)
				return
			}
			io.WriteString(w, `{"platform":"reddit","phrases":["acme","beta","newco","acme"],"items":[{"phrase":"acme","community":"crm"},{"phrase":"beta","community":"sales"},{"phrase":"newco","community":"crm"},{"phrase":"acme","community":"sales"}]}`)
		},
		"/ingest": func(w http.ResponseWriter, r *http.Request) {
			var b struct {
				Posts         []json.RawMessage `json:"posts"`
				UnreadPhrases []string          `json:"unreadPhrases"`
			}
			json.NewDecoder(r.Body).Decode(&b)
			mu.Lock()
			batches = append(batches, b.UnreadPhrases)
			mu.Unlock()
			ingested(w, len(b.Posts))
		},
	})
	r := newRunner(t, srv, &stopper{n: 1})
	if err := r.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 {
		t.Fatalf("%d batches, want 1", len(batches))
	}
	got := slices.Sorted(slices.Values(batches[0]))
	if want := []string{"acme", "beta", "newco"}; !slices.Equal(got, want) {
		t.Fatalf("the batch named %q unread, want %q", got, want)
	}
}
