package dashboard

// The notifications page's "Mark all read" as Chromium shows it at
// phone width; skipped without Chromium.

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The button shares the inbox bulk bar's class for its place on the
// page, not the bar's phone words: at 375 px it still says "Mark all
// read", in the size of the page's other buttons.
func TestMarkAllReadKeepsItsWordsOnAPhone(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Notifications: &readingNotes{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 375)
	open(t, ctx, srv.URL+"/app/notifications")
	got := strings.Split(evalJS[string](t, ctx, `(function(){var a=document.getElementById("read-all"),b=document.querySelector(".note button");
return a.innerText.trim()+"|"+getComputedStyle(a).fontSize+"|"+getComputedStyle(b).fontSize})()`), "|")
	if got[0] != "Mark all read" || got[1] != got[2] {
		t.Errorf("at 375 px the button shows %q in %s, a note's button is in %s", got[0], got[1], got[2])
	}
}
