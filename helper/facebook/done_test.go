package facebook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper/browser"
)

// The test that says when a page is read whole reads the document's
// blobs once and each answer once, as it comes: the browser asks it after
// every answer, and reading all of them again each time made the work
// grow with the square of a page's answers. The page is a search page
// whose chrome (the notifications, the chat list) asks GraphQL many
// times before the results come, in the shapes of testdata/README.md.
func TestDoneReadsEachAnswerOnce(t *testing.T) {
	var blob strings.Builder
	for i := range 3 {
		fmt.Fprintf(&blob, `<script type="application/json" data-sjs>{"require":[["ScheduledServerJS","handle",null,[{"__bbox":{"n":%d}}]]]}</script>`, i)
	}
	doc := []byte(`<!DOCTYPE html><html id="facebook"><body>` + blob.String() + `</body></html>`)
	reads := 0
	holds := func(b []byte) bool {
		reads++
		return hasResults(b)
	}
	p := &browser.Page{URL: "https://www.facebook.com/search/posts/?q=acme", Status: 200, Document: doc}
	d := newDone(holds)
	if d(p) {
		t.Fatal("a page without results was read as done")
	}
	if reads != 3 {
		t.Fatalf("the document's 3 blobs cost %d reads", reads)
	}
	const chrome = 200
	for i := range chrome {
		before := reads
		p.Answers = append(p.Answers, browser.Answer{URL: "https://www.facebook.com/api/graphql/", Status: 200,
			Body: fmt.Appendf(nil, `{"data":{"viewer":{"notifications_unseen_count":%d}}}`, i)})
		if d(p) {
			t.Fatalf("done at the chrome's answer %d", i)
		}
		if n := reads - before; n != 1 {
			t.Fatalf("answer %d cost %d reads, want 1: the work grows with the answers before it", i, n)
		}
	}
	p.Answers = append(p.Answers, browser.Answer{URL: "https://www.facebook.com/api/graphql/", Status: 200, Body: readFixture(t, "search_posts.txt")})
	before := reads
	if !d(p) {
		t.Fatal("the answer with the results did not end the read")
	}
	if n := reads - before; n != 1 {
		t.Fatalf("the results' answer cost %d reads, want 1", n)
	}
	// A page that moved (a redirect to a login wall after all) is read again.
	p.URL, p.Answers = "https://www.facebook.com/login/?next=%2F", nil
	if !d(p) {
		t.Fatal("a login wall did not end the read")
	}
}
