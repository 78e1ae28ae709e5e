package dashboard

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// The first step's stream says once that the owner has a phrase, then
// ends, leaving its slot to the whole inbox's stream.
func TestFirstStepStreamEndsWithAPhrase(t *testing.T) {
	phrases := &addedPhrases{}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 5 * time.Millisecond, MaxStreamsPerOwner: 1},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: phrases})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { d.Close() })
	if body := get(d, "/app/", true).Body.String(); !strings.Contains(body, `<div id="first-step" data-live="/app/events?first=1">`) {
		t.Fatalf("the first step does not wait for a phrase\n%s", body)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/app/events?first=1", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, len("retry: 3000\n: live\n\n"))
	if _, err := io.ReadFull(resp.Body, head); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %q %v", resp.StatusCode, head, err)
	}
	phrases.add(core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening})
	done := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(resp.Body); done <- b }()
	select {
	case rest := <-done:
		if string(rest) != "event: phrase\ndata: {}\n\n" {
			t.Fatalf("after the phrase the stream sent %q", rest)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first step's stream did not end once a phrase was added")
	}
}

// An owner without phrases sees the first step whatever the address
// names, a filter out of range too: the page shows no filter, so it
// refuses none.
func TestFirstStepWhateverTheAddress(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: &addedPhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/app/?min_score=500", "/app/?platform=myspace&before=x", "/app/?min_score=50"} {
		w := get(d, path, true)
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, "No matches yet: add a phrase") || strings.Contains(body, `class="problem"`) ||
			strings.Contains(body, "min_score") || strings.Contains(body, "must be") {
			t.Errorf("%s: %d\n%s", path, w.Code, body)
		}
	}
}
