package helper_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// keeper marks one checkpoint for each phrase it reads, "x:search:" and
// the phrase, as the x reader does, and keeps those of the phrases it is
// given (and every key that is not a search's).
type keeper struct{}

func (keeper) Platform() string { return "x" }

func (keeper) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	for _, p := range in.Phrases {
		id := "p-" + p.Phrase
		if err := emit(helper.Post{ExternalID: id, Body: []string{p.Phrase}, URL: "https://x.com/a/status/" + id},
			helper.Mark{Key: "x:search:" + p.Phrase, Value: id}); err != nil {
			return err
		}
	}
	return nil
}

func (keeper) Keeps(phrases []helper.Phrase, _ func(string) string) func(string) bool {
	live := map[string]bool{}
	for _, p := range phrases {
		live["x:search:"+p.Phrase] = true
	}
	return func(k string) bool { return !strings.HasPrefix(k, "x:search:") || live[k] }
}

// An owner who changes phrases pass after pass leaves the state file
// the checkpoints of the phrases listened to now, plus the keys of
// other platforms, not one for every phrase ever read: the file is
// written whole at every batch.
func TestStateKeepsTheCheckpointsOfTodaysPhrases(t *testing.T) {
	phrase := "p0"
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"phrases":[%q]}`, phrase)
		},
	})
	path := filepath.Join(t.TempDir(), "state.json")
	st, err := helper.OpenState(path, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(map[string]string{"reddit:new:golang": "1"}); err != nil {
		t.Fatal(err)
	}
	r := &helper.Runner{Client: newClient(t, srv), State: st, Direct: true, Readers: []helper.Reader{keeper{}}}
	for i := range 50 {
		phrase = fmt.Sprint("p", i)
		if err := r.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"reddit:new:golang": "1", "x:search:p49": "p-p49"}
	if got := all[srv.URL]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after 50 passes over changing phrases the state holds %d checkpoints: %v; want %v", len(got), got, want)
	}
}
