package helper_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// stopper reads its phrases in order, emitting n posts for each, and
// stops with an error at the phrase stop: a helper.PhraseUnreader like
// the x and facebook readers.
type stopper struct {
	n        int
	stop     string
	phrases  []string
	searched map[string]bool
}

func (s *stopper) Platform() string { return "x" }

func (s *stopper) UnreadPhrases() []string {
	var out []string
	for _, p := range s.phrases {
		if !s.searched[p] {
			out = append(out, p)
		}
	}
	return out
}

func (s *stopper) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	s.phrases, s.searched = nil, map[string]bool{}
	for _, p := range in.Phrases {
		s.phrases = append(s.phrases, p.Phrase)
	}
	slices.Sort(s.phrases)
	for _, ph := range s.phrases {
		if ph == s.stop {
			return errors.New("x refused the search")
		}
		for i := range s.n {
			id := fmt.Sprintf("%s-%d", ph, i)
			if err := emit(helper.Post{ExternalID: id, Body: []string{ph}, URL: "https://x.com/a/status/" + id}, helper.Mark{Key: "x:search:" + ph, Value: id}); err != nil {
				return err
			}
		}
		s.searched[ph] = true
	}
	return nil
}

// Each batch names the phrases the read has not searched to the end
// when it is sent (unreadPhrases): one sent while the first phrase's
// posts still come names it too, the last of a read that stopped names
// the phrase it stopped at and those after; a whole read names none, and
// the field is left out.
func TestBatchesNameTheUnreadPhrases(t *testing.T) {
	var mu sync.Mutex
	var batches [][]string
	var raw []map[string]json.RawMessage
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"phrases":["gamma","alpha","beta"]}`)
		},
		"/ingest": func(w http.ResponseWriter, r *http.Request) {
			var b struct {
				Posts         []json.RawMessage `json:"posts"`
				UnreadPhrases []string          `json:"unreadPhrases"`
			}
			body, _ := io.ReadAll(r.Body)
			var m map[string]json.RawMessage
			json.Unmarshal(body, &b)
			json.Unmarshal(body, &m)
			mu.Lock()
			batches = append(batches, b.UnreadPhrases)
			raw = append(raw, m)
			mu.Unlock()
			ingested(w, len(b.Posts))
		},
	})
	rd := &stopper{n: helper.MaxBatch + 1, stop: "beta"}
	r := newRunner(t, srv, rd)
	if err := r.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded though the read stopped")
	}
	want := [][]string{{"alpha", "beta", "gamma"}, {"beta", "gamma"}}
	if !reflect.DeepEqual(batches, want) {
		t.Fatalf("the batches named %q unread, want %q", batches, want)
	}

	batches, raw = nil, nil
	rd.stop, rd.n = "", 1
	if err := r.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || batches[0] != nil {
		t.Fatalf("a whole read's batches named %q unread, want one naming none", batches)
	}
	if _, ok := raw[0]["unreadPhrases"]; ok {
		t.Errorf("a batch naming none carries unreadPhrases: %s", raw[0]["unreadPhrases"])
	}
}
