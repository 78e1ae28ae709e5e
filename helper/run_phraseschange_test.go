package helper_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/earshothq/earshot/helper"
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/proxy":
			io.WriteString(w, `{"required":false,"proxy":{"server":"http://127.0.0.1:9"}}`)
		case "/phrases":
			// The server's answer (adapters/httpapi): the texts, and the
			// items with their communities. The owner adds two phrases,
			// and moves one to another community, after the first answer.
			asked++
			if asked == 1 {
				io.WriteString(w, `{"platform":"reddit","phrases":["acme","beta"],"items":[{"phrase":"acme","community":"crm"},{"phrase":"beta","community":"crm"}]}`)
				return
			}
			io.WriteString(w, `{"platform":"reddit","phrases":["acme","beta","newco","acme"],"items":[{"phrase":"acme","community":"crm"},{"phrase":"beta","community":"sales"},{"phrase":"newco","community":"crm"},{"phrase":"acme","community":"sales"}]}`)
		case "/session":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":"not_found","message":"no session"}}`)
		case "/ingest":
			var b struct {
				Posts         []json.RawMessage `json:"posts"`
				UnreadPhrases []string          `json:"unreadPhrases"`
			}
			json.NewDecoder(r.Body).Decode(&b)
			batches = append(batches, b.UnreadPhrases)
			fmt.Fprintf(w, `{"accountId":"a1","ingested":%d,"skipped":0}`, len(b.Posts))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := helper.NewClient(srv.URL, "svc_ingest_test", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := helper.OpenState(filepath.Join(t.TempDir(), "state.json"), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := &helper.Runner{Client: c, State: st, Direct: true, Readers: []helper.Reader{&stopper{n: 1}}}
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
