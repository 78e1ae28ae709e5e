package redditjson

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNumber(t *testing.T) {
	cases := map[string]struct {
		in   string
		want float64
		bad  bool
	}{
		"float":      {in: "1767225500.0", want: 1767225500},
		"integer":    {in: "42", want: 42},
		"string":     {in: `"1767225500"`, want: 1767225500},
		"null":       {in: "null"},
		"empty text": {in: `""`},
		"overflow":   {in: "1e400", bad: true},
		"word":       {in: `"soon"`, bad: true},
		"bool":       {in: "true", bad: true},
		// A string is read as JSON text: escapes undone, spaces trimmed,
		// and "null" in quotes is a word, not null. Both programs read so.
		"NaN text":     {in: `"NaN"`, bad: true},
		"null text":    {in: `"null"`, bad: true},
		"spaced text":  {in: `" 42 "`, want: 42},
		"escaped text": {in: `"\u0034\u0032"`, want: 42},
	}
	for name, tc := range cases {
		var n Number
		err := n.UnmarshalJSON([]byte(tc.in))
		if (err != nil) != tc.bad || !tc.bad && float64(n) != tc.want {
			t.Errorf("%s: %v, %v", name, float64(n), err)
		}
	}
	if got := Number(1e30).Int(); got != 1<<31-1 {
		t.Errorf("huge score = %d", got)
	}
	if !Number(1000).Time().IsZero() || !Number(1e12).Time().IsZero() {
		t.Error("implausible creation times accepted")
	}
}

func TestFullname(t *testing.T) {
	cases := []struct {
		kind, name, id, want string
		ok                   bool
	}{
		{KindPost, "t3_1hx0a1", "1hx0a1", "t3_1hx0a1", true},
		{KindPost, "", "1hx0a1", "t3_1hx0a1", true},
		{KindComment, "", "t1_kq1c01", "t1_kq1c01", true},
		{KindComment, "t3_abc", "abc", "t1_abc", true}, // a name of the wrong kind is not trusted
		{KindPost, "", "", "", false},
		{KindPost, "", "ABC", "", false},
		{KindPost, "", "a/b", "", false},
	}
	for _, tc := range cases {
		got, ok := Fullname(tc.kind, tc.name, tc.id)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Fullname(%s, %q, %q) = %q, %v", tc.kind, tc.name, tc.id, got, ok)
		}
	}
}

func TestSiteLink(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"/r/go/comments/abc/x/", "https://www.reddit.com/r/go/comments/abc/x/", true},
		{"//evil.example/x", "", false},
		{"https://www.reddit.com/r/go/", "", false},
		{"/r/go/ x", "", false},
		{`/r/go\x`, "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		if got, ok := SiteLink(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("SiteLink(%q) = %q, %v", tc.in, got, ok)
		}
	}
	if got := PostLink("go", "abc"); got != "https://www.reddit.com/r/go/comments/abc/" {
		t.Errorf("PostLink = %q", got)
	}
	if got := CommunityLink("go"); got != "https://www.reddit.com/r/go/" {
		t.Errorf("CommunityLink = %q", got)
	}
}

func TestEntities(t *testing.T) {
	if got := Entities.Replace("a &amp; b &lt;c&gt; &amp;lt; &copy;"); got != "a & b <c> &lt; &copy;" {
		t.Errorf("got %q", got)
	}
	for s, want := range map[string]bool{"[deleted]": true, " [removed]\n": true, "[Deleted]": false, "": false} {
		if Gone(s) != want {
			t.Errorf("Gone(%q) = %v", s, !want)
		}
	}
}

func TestDecodeListing(t *testing.T) {
	l, err := DecodeListing([]byte(`{"kind":"Listing","data":{"after":"t3_b","children":[
		{"kind":"t3","data":{"id":"a","created_utc":"1767225500"}},
		{"kind":"more","data":{"id":"m"}},
		{"kind":"t1","data":{"id":"c","score":"lots"}},
		{"kind":"t1","data":{"id":"d","body":"x"}}]}}`))
	if err != nil || l.After != "t3_b" || len(l.Items) != 2 ||
		l.Items[0].Kind != KindPost || l.Items[0].CreatedUTC != 1767225500 ||
		l.Items[1].Kind != KindComment || l.Items[1].Body != "x" {
		t.Fatalf("got %+v, %v", l, err)
	}
	if _, err := DecodeListing([]byte(`{"message":"Forbidden","error":403}`)); !errors.Is(err, ErrNotListing) {
		t.Errorf("error object: %v", err)
	}
	if _, err := DecodeListing([]byte(`<html>`)); err == nil || errors.Is(err, ErrNotListing) {
		t.Errorf("HTML: %v", err)
	}
}

// FuzzDecodeListing checks what both readers rely on, whatever the input:
// every item is a post or a comment, with a fullname of its kind.
func FuzzDecodeListing(f *testing.F) {
	for _, name := range []string{"listing_new.json", "listing_comments.json", "blocked.html"} {
		b, err := os.ReadFile(filepath.Join("..", "adapters", "reddit", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, _ := DecodeListing(b)
		for _, it := range l.Items {
			if it.Kind != KindPost && it.Kind != KindComment {
				t.Errorf("item of kind %q", it.Kind)
			}
			if id, ok := Fullname(it.Kind, it.Name, it.ID); ok && (id[:3] != it.Kind+"_" || !Base36(id[3:])) {
				t.Errorf("fullname %q of a %s", id, it.Kind)
			}
		}
	})
}

// FuzzNumber checks that a number either reads as a finite value or fails.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"1767225500.0", `"42"`, "null", `""`, "1e400", `"\u0031"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var n Number
		if n.UnmarshalJSON(b) == nil && float64(n) != float64(n) {
			t.Errorf("NaN from %q", b)
		}
		_ = n.Int()
		_ = n.Time()
	})
}

// Reason takes reddit's refusal reason from its JSON body, and nothing
// from a page that is not: a block page, a bare Forbidden, or a reason
// that is no short lowercase word.
func TestReason(t *testing.T) {
	for body, want := range map[string]string{
		`{"reason": "private", "message": "Forbidden", "error": 403}`: "private",
		`{"reason": "banned", "message": "Not Found", "error": 404}`:  "banned",
		`{"reason": "gold_only"}`:                                     "gold_only",
		`{"message": "Forbidden", "error": 403}`:                      "",
		`<html><body>blocked by network security</body></html>`:       "",
		`{"reason": "Visit evil.example now"}`:                        "",
		`{"reason": "` + strings.Repeat("a", 33) + `"}`:               "",
		`{"reason": 7}`: "",
	} {
		if got := Reason([]byte(body)); got != want {
			t.Errorf("Reason(%s) = %q, want %q", body, got, want)
		}
	}
}

func FuzzReason(f *testing.F) {
	f.Add([]byte(`{"reason": "private"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := Reason(body)
		if len(r) > 32 || strings.Trim(r, "abcdefghijklmnopqrstuvwxyz_") != "" {
			t.Fatalf("Reason gave %q", r)
		}
	})
}
