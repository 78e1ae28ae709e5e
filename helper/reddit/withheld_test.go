package reddit_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Reddit answers 451 and its HTML error page for a community withheld in
// the reader's country (the page is adapters/reddit/testdata/legal.html,
// reddit's error page as reddit/error-pages has it; prawcore maps 451 to
// UnavailableForLegalReasons). That is the community's, never the
// account's: reported, the server names it an unknown issue and the
// account pauses, and the group naming it, with every group after it,
// would go unread pass after pass for one withheld community.
func TestWithheldCommunityDoesNotStopOthers(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "adapters", "reddit", "testdata", "legal.html"))
	if err != nil {
		t.Fatal(err)
	}
	g := newClosedRig(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusUnavailableForLegalReasons)
		w.Write(page)
	})
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "acme", text: "x", created: 1767225500})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Errorf("pass: %v", err)
	}
	posts, reports, _ := g.earshot.snapshot()
	if _, ok := posts["t3_p1"]; !ok {
		t.Errorf("r/golang's post was not sent")
	}
	noAccountIssue(t, reports)
	if n := g.warnings(); n != 1 || !strings.Contains(g.log.String(), "community=r/secretclub") {
		t.Errorf("%d warnings naming r/secretclub, want 1; log:\n%s", n, g.log)
	}
	if n := g.reddit.count(); n != 5 {
		t.Errorf("%d requests, want 5 (the group, each alone, the others' comments)", n)
	}
}
