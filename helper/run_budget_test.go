package helper_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// serverBodyLimit is the server's limit on a helper request's body
// (adapters/httpapi's maxHelperBody): over it the server answers 413,
// which the client takes as final.
const serverBodyLimit = 1 << 20

// heavy emits n posts whose text is as long as a post's text can be and
// as heavy as json.Marshal makes it (every `<` is a six-byte \u003c),
// and leaves core.MaxUnreadPhrases phrases and core.MaxUnreadCommunities
// communities unread: the most a batch names, each phrase as long as a
// phrase can be (core.MaxPhraseLen), of `<` and CJK characters.
type heavy struct{ n int }

func (heavy) Platform() string { return "reddit" }

func (heavy) UnreadPhrases() []string {
	out := make([]string, core.MaxUnreadPhrases)
	for i := range out {
		// Distinct texts: the server folds repeats, the body does not.
		out[i] = fmt.Sprintf("%04d", i) + strings.Repeat("<", core.MaxPhraseLen-6) + "語語"
	}
	return out
}

func (heavy) Unread() []string {
	out := make([]string, core.MaxUnreadCommunities)
	for i := range out {
		// Subreddit names are at most 21 characters.
		out[i] = fmt.Sprintf("community_%011d", i)
	}
	return out
}

func (h heavy) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	text := strings.Repeat("<", core.MaxPostText)
	for i := 1; i <= h.n; i++ {
		id := fmt.Sprintf("t3_%d", 1000+i)
		p := helper.Post{ExternalID: id, AuthorName: "ada", Title: text, Body: []string{text}, URL: "https://www.reddit.com/r/acme/comments/" + id,
			Community: "acme"}
		if err := emit(p, helper.Mark{Key: "reddit:acme:new", Value: id}); err != nil {
			return err
		}
	}
	return nil
}

// A batch's body stays within the server's limit with the unread lists
// it names at their worst: up to 1,000 phrases and 1,000 communities
// added when the batch is sent. (The lists were left out of the budget:
// such a body passed 1 MB, the server answered 413, final, the
// checkpoint never moved and every pass stalled on the same batch.)
// Every post still goes out once, each part naming the lists whole, and
// the checkpoint moves.
func TestABatchWithTheWorstUnreadListsStaysWithinTheServersLimit(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	seen := map[string]int{}
	srv := fakeDeployment(t, routes{
		"/phrases": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"items":[{"phrase":"acme","community":"acme"}]}`)
		},
		"/ingest": func(w http.ResponseWriter, r *http.Request) {
			// As the server's helper edge: a body over the limit is 413.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, serverBodyLimit))
			if err != nil {
				w.WriteHeader(http.StatusRequestEntityTooLarge)
				io.WriteString(w, `{"error":{"code":"payload_too_large","message":"request body is over 1048576 bytes"}}`)
				return
			}
			var b struct {
				Posts             []helper.Post `json:"posts"`
				UnreadPhrases     []string      `json:"unreadPhrases"`
				UnreadCommunities []string      `json:"unreadCommunities"`
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Errorf("a body that is not JSON: %v", err)
			}
			if len(b.UnreadPhrases) != core.MaxUnreadPhrases || len(b.UnreadCommunities) != core.MaxUnreadCommunities {
				t.Errorf("a batch named %d phrases and %d communities, want %d and %d", len(b.UnreadPhrases), len(b.UnreadCommunities),
					core.MaxUnreadPhrases, core.MaxUnreadCommunities)
			}
			mu.Lock()
			sizes = append(sizes, len(body))
			for _, p := range b.Posts {
				seen[p.ExternalID]++
			}
			mu.Unlock()
			ingested(w, len(b.Posts))
		},
	})
	const n = 3 * helper.MaxBatch
	r := newRunner(t, srv, heavy{n: n})
	if err := r.Pass(context.Background()); err != nil {
		t.Fatalf("the pass failed: %v (bodies of %d bytes)", err, sizes)
	}
	for _, s := range sizes {
		if s > serverBodyLimit {
			t.Errorf("a body of %d bytes, over the server's %d", s, serverBodyLimit)
		}
	}
	if len(seen) != n {
		t.Errorf("%d posts sent, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("post %s sent %d times", id, k)
		}
	}
	if got, want := r.State.Get("reddit:acme:new"), fmt.Sprintf("t3_%d", 1000+n); got != want {
		t.Errorf("the checkpoint is %q, want %q", got, want)
	}
}
