package facebook

import (
	"os"
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
