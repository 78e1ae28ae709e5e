package legacymock

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Rules of the spec and of docs/legacy-mock.md that no other test drives
// through HTTP.

// An account that is no longer a facebook account leaves its group joins
// on the next read, as a deleted one does; a join shows the label its
// account has now.
func TestJoinsFollowTheirAccount(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"label": "Maya's facebook"})
	if cm := find(c.must(200, "GET", "/communities", nil).list("communities"), "id", fbJoined); cm["accountLabel"] != "Maya's facebook" {
		t.Errorf("accountLabel after a relabel: %v", cm["accountLabel"])
	}
	c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"platform": "x"})
	list := c.must(200, "GET", "/communities?platform=facebook", nil).list("communities")
	for _, id := range []string{fbJoined, fbPending} {
		if cm := find(list, "id", id); cm["joinState"] != "none" || cm["accountId"] != nil || cm["accountLabel"] != nil {
			t.Errorf("%s still joined through an x account: %v", id, cm)
		}
	}
}

// Every mutating brand route stamps updatedAt, /brand/index too.
func TestBrandIndexStampsUpdatedAt(t *testing.T) {
	now := fixedNow
	c := newClient(t, Config{Now: func() time.Time { return now }})
	c.must(200, "PUT", "/brand", acmeBrand())
	now = now.Add(time.Hour)
	if b := c.must(200, "POST", "/brand/index", map[string]any{"urls": []string{"https://slotwise.example/blog"}}).obj("brand"); b["updatedAt"] != "2024-07-01T13:00:00.000Z" {
		t.Errorf("updatedAt %v", b["updatedAt"])
	}
}

// Feed items carry id, keyword, url and publishedAt besides the fields the
// spec names.
func TestFeedItemFields(t *testing.T) {
	c := newClient(t, Config{})
	for _, it := range c.must(200, "GET", "/feed", nil).list("items") {
		for _, k := range []string{"id", "platform", "author", "handle", "community", "title", "body", "sentiment", "keyword", "url", "publishedAt"} {
			// A post or a comment without a title has an empty one.
			if s, isStr := it[k].(string); !isStr || s == "" && k != "title" {
				t.Errorf("%v: %s is %v", it["id"], k, it[k])
			}
		}
	}
}

// noGroup takes true, 1 or yes, and false, 0, no or nothing; filters combine.
func TestKeywordNoGroupSpellings(t *testing.T) {
	c := newClient(t, Config{})
	for q, want := range map[string]int{"?noGroup=yes": 3, "?noGroup=no": 8, "?noGroup=": 8, "?noGroup=yes&groupId=" + redditJoined: 0, "?platform=x&noGroup=no": 3} {
		if got := len(c.must(200, "GET", "/keywords"+q, nil).list("keywords")); got != want {
			t.Errorf("%s: %d keywords, want %d", q, got, want)
		}
	}
}

// Listings carry an updatedAt, stamped on create and on every change.
func TestListingUpdatedAt(t *testing.T) {
	now := fixedNow
	c := newClient(t, Config{Now: func() time.Time { return now }})
	l := c.must(201, "POST", "/listings", newListing()).obj("listing")
	if l["updatedAt"] != "2024-07-01T12:00:00.000Z" {
		t.Errorf("updatedAt on create %v", l["updatedAt"])
	}
	id := l["listingId"].(string)
	now = now.Add(time.Minute)
	if l := c.must(200, "PATCH", "/listings/"+id, map[string]any{"price": "$90"}).obj("listing"); l["updatedAt"] != "2024-07-01T12:01:00.000Z" || l["publishedAt"] != "2024-07-01T12:00:00.000Z" {
		t.Errorf("after PATCH %v", l)
	}
	now = now.Add(time.Minute)
	if l := c.must(200, "PATCH", "/listings/"+id+"/status", map[string]any{"status": "active"}).obj("listing"); l["updatedAt"] != "2024-07-01T12:02:00.000Z" {
		t.Errorf("after status %v", l)
	}
}

// A known path under another method answers 405 with the methods it takes
// in Allow, in the error envelope.
func TestWrongMethodNamesAllowedMethods(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct{ method, path, allow string }{
		{"PUT", "/listings", "GET, HEAD, POST"},
		{"GET", "/accounts/" + fbAccount + "/resolve", "POST"},
		{"GET", "/api-keys/key-1", "DELETE"},
		{"POST", "/brand", "DELETE, GET, HEAD, PUT"},
	} {
		req, _ := http.NewRequest(tt.method, c.base+tt.path, nil)
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 405 || res.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d, Allow %q, want 405 and %q", tt.method, tt.path, res.StatusCode, res.Header.Get("Allow"), tt.allow)
		}
		c.fails(405, "", tt.method, tt.path, nil)
	}
}

// Every route that reads a body answers bad JSON with 400 in the error
// envelope, and changes nothing.
func TestBadJSONOnEveryBodyRoute(t *testing.T) {
	c := newClient(t, Config{})
	before := map[string]string{}
	reads := []string{"/accounts", "/communities", "/keywords", "/listings", "/api-keys", "/brand"}
	for _, p := range reads {
		before[p] = c.must(200, "GET", p, nil).raw
	}
	lid := "10231587730934512"
	for _, rt := range []struct{ method, path string }{
		{"POST", "/api-keys"},
		{"POST", "/communities/" + fbOpen + "/join"},
		{"POST", "/communities/join-by-url"},
		{"POST", "/communities/resolve"},
		{"POST", "/communities/resolve-reddit"},
		{"PUT", "/brand"},
		{"POST", "/brand/intelligence"},
		{"DELETE", "/brand/sources"},
		{"POST", "/brand/index"},
		{"POST", "/listings"},
		{"PATCH", "/listings/" + lid},
		{"PATCH", "/listings/" + lid + "/status"},
		{"POST", "/accounts"},
		{"PATCH", "/accounts/" + fbAccount},
		{"POST", "/keywords"},
		{"PATCH", "/keywords/keyword-1714650000000-b00k1n"},
	} {
		for _, body := range []string{`{"a":`, `["a"]`, `"a"`} {
			c.fails(400, "", rt.method, rt.path, body)
		}
	}
	for _, p := range reads {
		if got := c.must(200, "GET", p, nil).raw; got != before[p] {
			t.Errorf("%s changed after refused bodies", p)
		}
	}
}

// Stored text a stranger wrote comes back as JSON text, with the
// characters HTML gives meaning to escaped, never as markup.
func TestStoredTextIsEscaped(t *testing.T) {
	c := newClient(t, Config{})
	const evil = `<script>alert("x")</script>&`
	r := c.must(200, "PATCH", "/accounts/"+redditAccount, map[string]any{"label": evil})
	if strings.Contains(r.raw, "<script>") || !strings.Contains(r.raw, `\u003cscript\u003e`) {
		t.Errorf("label not escaped: %s", r.raw)
	}
	if a := find(r.list("accounts"), "id", redditAccount); a["label"] != evil {
		t.Errorf("label %v", a["label"])
	}
	if r := c.fails(404, "", "GET", "/<b>x</b>", nil); strings.Contains(r.raw, "<b>") {
		t.Errorf("path not escaped: %s", r.raw)
	}
}
