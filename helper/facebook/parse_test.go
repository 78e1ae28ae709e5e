package facebook

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func byID(ss []story) map[string]story {
	m := map[string]story{}
	for _, s := range ss {
		m[s.id] = s
	}
	return m
}

func TestParseSearchPosts(t *testing.T) {
	got := parseAnswers([][]byte{readFixture(t, "search_posts.txt")})
	if len(got) != 3 {
		t.Fatalf("got %d stories, want 3 (the repeated story once, the shared one not apart, the page result none): %+v", len(got), got)
	}
	m := byID(got)
	want := map[string]story{
		"1503138655179656": {id: "1503138655179656", author: "Ada Lovelace", authorURL: "https://www.facebook.com/ada.lovelace",
			text: "Has anyone tried the acme grinder? Mine broke after a week.", url: "https://www.facebook.com/ada.lovelace/posts/pfbid02abcdef",
			created: 1790168469, likes: 12, comments: 3},
		"1995955427558350": {id: "1995955427558350", author: "Grace Hopper", authorURL: "https://www.facebook.com/grace.hopper",
			text: "Acme grinder or a hand mill for a small cafe?", url: "https://www.facebook.com/groups/1242309506256283/posts/1995955427558350/",
			created: 1790160000, likes: 4, comments: 7, group: "Home Baristas"},
		"1501367052023483": {id: "1501367052023483", author: "Alan Turing", authorURL: "https://www.facebook.com/alan.turing",
			text: "acme grinder deal, see below", url: "https://www.facebook.com/alan.turing/posts/pfbid03ghijk", created: 1790150000},
	}
	for id, w := range want {
		if m[id] != w {
			t.Errorf("story %s:\n got %+v\nwant %+v", id, m[id], w)
		}
	}
}

func TestParseGroupFeedPrefixedAnswer(t *testing.T) {
	got := parseAnswers([][]byte{readFixture(t, "group_search.txt")})
	if len(got) != 1 {
		t.Fatalf("got %d stories, want 1: %+v", len(got), got)
	}
	s := got[0]
	if s.id != "1995955427558351" || s.group != "Home Baristas" || s.comments != 5 || s.likes != 2 || s.created != 1790170000 {
		t.Errorf("got %+v", s)
	}
}

func TestParseKeepsDocumentsBeforeABrokenOne(t *testing.T) {
	body := `{"data":{"post_id":"1","message":{"text":"acme"},"creation_time":5}}` + "\n" + `{"data":{"post_id":"2",` + "\n"
	got := parseAnswers([][]byte{[]byte(body), []byte("<html>not json</html>")})
	if len(got) != 1 || got[0].id != "1" || got[0].url != "" {
		t.Fatalf("got %+v", got)
	}
}

// A page whose first results come inside its HTML: the stories of the
// data-sjs blob are read as an answer's are, the configuration blob and
// the rest of the document add nothing.
func TestParsePageReadsTheDocumentsBlobs(t *testing.T) {
	got := parsePage(readFixture(t, "search_page.html"), nil)
	if len(got) != 2 {
		t.Fatalf("got %d stories, want the blob's 2: %+v", len(got), got)
	}
	m := byID(got)
	want := story{id: "1600000000000001", author: "Barbara Liskov", authorURL: "https://www.facebook.com/barbara.liskov",
		text: "Is the acme grinder worth it for espresso at home?", url: "https://www.facebook.com/barbara.liskov/posts/pfbid0liskov",
		created: 1790171000, likes: 9, comments: 2}
	if m["1600000000000001"] != want {
		t.Errorf("story\n got %+v\nwant %+v", m["1600000000000001"], want)
	}
	// With the answers the page received after: both, each story once.
	got = parsePage(readFixture(t, "search_page.html"), [][]byte{readFixture(t, "search_posts.txt")})
	if len(got) != 5 {
		t.Errorf("document and answers: %d stories, want 5", len(got))
	}
	if !pageHolds(readFixture(t, "search_page.html"), nil, hasResults) || pageHolds([]byte(`<!DOCTYPE html><script type="application/json" data-sjs>{"require":[]}</script>`), nil, hasResults) {
		t.Errorf("pageHolds tells a document with results from one without")
	}
}

// Each blob, and all of a document's blobs together, are capped before
// they are parsed.
func TestParsePageCapsTheBlobs(t *testing.T) {
	blob := func(id string, pad int) string {
		return `<script type="application/json" data-sjs>{"require":[{"__bbox":{"complete":true,"result":{"data":{"post_id":"` + id +
			`","message":{"text":"acme"},"creation_time":5,"pad":"` + strings.Repeat("a", pad) + `"}}}}]}</script>`
	}
	doc := "<!DOCTYPE html>" + blob("1", 10) + blob("2", maxBlob) + blob("3", maxBlob/2)
	if got := byID(parsePage([]byte(doc), nil)); len(got) != 2 || got["2"].id != "" {
		t.Errorf("a blob over %d bytes was read: %+v", maxBlob, got)
	}
	doc = "<!DOCTYPE html>"
	n := maxBlobs/(maxBlob/2) + 2
	for i := range n {
		doc += blob(strconv.Itoa(i), maxBlob/2)
	}
	if got := parsePage([]byte(doc), nil); len(got) == 0 || len(got) >= n || len(got)*(maxBlob/2) > maxBlobs {
		t.Errorf("%d blobs of %d bytes: %d read, want at most %d bytes of them", n, maxBlob/2, len(got), maxBlobs)
	}
}

// The joined groups of /groups/joins/, from its document and the answers
// it receives, in the page's order; a group the owner has not joined (a
// suggestion) is not one.
func TestParseGroups(t *testing.T) {
	got := parseGroups(readFixture(t, "groups_joins.html"), [][]byte{readFixture(t, "groups_joins_more.txt")})
	var names []string
	for _, g := range got {
		names = append(names, g.ID+" "+g.Name)
	}
	want := "1242309506256283 Home Baristas,880011223344556 Espresso Nerds,771122334455667 Grinder Repair Club," +
		"660000000000001 Coffee Roasters Guild,550000000000002 Latte Art Practice"
	if strings.Join(names, ",") != want {
		t.Fatalf("groups\n got %s\nwant %s", strings.Join(names, ","), want)
	}
	if got[1].URL != "https://www.facebook.com/groups/880011223344556/" {
		t.Errorf("url %q", got[1].URL)
	}
	if !pageHolds(readFixture(t, "groups_joins.html"), nil, hasGroups) || pageHolds(readFixture(t, "search_page.html"), nil, hasGroups) {
		t.Errorf("pageHolds tells a groups page from a search page wrongly")
	}
}

// An id written as a JSON number keeps every digit: facebook's post ids
// pass 2^53, where a float64 holds only every second integer, so two
// posts would share one externalId and the second would be dropped as
// the first seen again.
func TestParseNumericIDsKeepTheirDigits(t *testing.T) {
	story := func(id string) string {
		return `{"post_id":` + id + `,"message":{"text":"acme grinder"},"creation_time":1790160000,` +
			`"to":{"__typename":"Group","id":1242309506256283123,"name":"Home Baristas"}}`
	}
	body := []byte(`{"data":{"results":[` + story("10158000000000001") + `,` + story("10158000000000002") + `]}}`)
	got := parseAnswers([][]byte{body})
	if len(got) != 2 || got[0].id != "10158000000000001" || got[1].id != "10158000000000002" {
		t.Fatalf("stories %+v", got)
	}
	groups := parseGroups(nil, [][]byte{[]byte(`{"data":{"group":{"__typename":"Group","id":1242309506256283123,"name":"Home Baristas"}}}`)})
	if len(groups) != 1 || groups[0].ID != "1242309506256283123" {
		t.Fatalf("groups %+v", groups)
	}
}

// The "for (;;);" guard is taken off where a document starts only: a
// post that quotes it (a programmer's, say) keeps its text as written.
func TestParseKeepsTheLoopGuardInsideAText(t *testing.T) {
	doc := func(id, text string) string {
		return `{"data":{"node":{"post_id":"` + id + `","message":{"text":"` + text + `"},"creation_time":1790160000}}}`
	}
	body := []byte("for (;;);" + doc("1", "my loop for (;;); never ends") + "\nfor (;;);" + doc("2", "two"))
	got := parseAnswers([][]byte{body})
	if len(got) != 2 || got[0].text != "my loop for (;;); never ends" || got[1].id != "2" {
		t.Fatalf("stories %+v", got)
	}
}
