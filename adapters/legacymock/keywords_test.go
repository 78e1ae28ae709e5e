package legacymock

import (
	"testing"
)

func TestKeywordScopeRules(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"reddit in a joined subreddit", map[string]any{"phrase": "salon booking", "platform": "reddit", "groupId": redditJoined}, 201},
		{"facebook in a joined group", map[string]any{"phrase": "salon booking", "platform": "facebook", "groupId": fbJoined}, 201},
		{"x without a group", map[string]any{"phrase": "salon booking", "platform": "x"}, 201},
		{"x with groupId null", map[string]any{"phrase": "walk-in queue", "platform": "x", "groupId": nil}, 201},
		{"reddit without a group", map[string]any{"phrase": "deposits", "platform": "reddit"}, 400},
		{"facebook without a group", map[string]any{"phrase": "deposits", "platform": "facebook", "groupId": ""}, 400},
		{"reddit in a subreddit not joined", map[string]any{"phrase": "deposits", "platform": "reddit", "groupId": redditOpen}, 400},
		{"facebook in a pending group", map[string]any{"phrase": "deposits", "platform": "facebook", "groupId": fbPending}, 400},
		{"facebook in a reddit community", map[string]any{"phrase": "deposits", "platform": "facebook", "groupId": redditJoined}, 400},
		{"unknown group", map[string]any{"phrase": "deposits", "platform": "reddit", "groupId": "r-nope"}, 400},
		{"x with a group", map[string]any{"phrase": "deposits", "platform": "x", "groupId": "x-list-1529871034627809281"}, 400},
		{"blank phrase", map[string]any{"phrase": "   ", "platform": "x"}, 400},
		{"bad platform", map[string]any{"phrase": "deposits", "platform": "threads"}, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.must(tt.status, "POST", "/keywords", tt.body)
			if tt.status == 201 {
				k := r.obj("keyword")
				if k["status"] != "listening" || k["phrase"] != tt.body["phrase"] || find(r.list("keywords"), "id", k["id"].(string)) == nil {
					t.Errorf("created %v", k)
				}
			} else if r.errMsg() == "" {
				t.Errorf("no error message: %s", r.raw)
			}
		})
	}
	c.fails(400, "platform must be facebook, x, or reddit", "POST", "/keywords", map[string]any{"phrase": "a", "platform": "threads"})
}

func TestKeywordDuplicateInSameScope(t *testing.T) {
	c := newClient(t, Config{})
	// Seeded: "no-show" on r/smallbusiness, "online booking" on x.
	c.fails(409, `"No-Show" is already tracked in this scope`, "POST", "/keywords", map[string]any{"phrase": "No-Show", "platform": "reddit", "groupId": redditJoined})
	c.fails(409, "", "POST", "/keywords", map[string]any{"phrase": "  ONLINE   booking ", "platform": "x"})
	// The same phrase in another scope is fine.
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "no-show", "platform": "reddit", "groupId": "r-saas"})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "no-show", "platform": "x"})
	// Case-insensitive and no more, as the spec says: a typographic
	// apostrophe or a full-width letter is another phrase to the mock.
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "Joe's", "platform": "x"})
	c.fails(409, "", "POST", "/keywords", map[string]any{"phrase": "JOE'S", "platform": "x"})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "Joe’s", "platform": "x"})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "ＮＯ-ＳＨＯＷ", "platform": "x"})
}

func TestKeywordFilters(t *testing.T) {
	c := newClient(t, Config{})
	count := func(q string) int { return len(c.must(200, "GET", "/keywords"+q, nil).list("keywords")) }
	all := count("")
	if all != 8 {
		t.Fatalf("seeded %d keywords", all)
	}
	for _, tt := range []struct {
		q    string
		want int
	}{
		{"?platform=x", 3},
		{"?platform=reddit", 3},
		{"?platform=facebook", 2},
		{"?groupId=" + redditJoined, 2},
		{"?noGroup=true", 3},
		{"?noGroup=1", 3},
		{"?noGroup=false", 8},
		{"?noGroup=0", 8},
		{"?platform=reddit&noGroup=true", 0},
		{"?platform=reddit&groupId=r-saas", 1},
	} {
		if got := count(tt.q); got != tt.want {
			t.Errorf("%s: %d keywords, want %d", tt.q, got, tt.want)
		}
	}
	c.fails(400, "", "GET", "/keywords?noGroup=maybe", nil)
	c.fails(400, "platform must be facebook, x, or reddit", "GET", "/keywords?platform=mastodon", nil)
}

func TestKeywordPatch(t *testing.T) {
	c := newClient(t, Config{})
	id := c.must(201, "POST", "/keywords", map[string]any{"phrase": "walk-ins", "platform": "reddit", "groupId": redditJoined}).obj("keyword")["id"].(string)
	r := c.must(200, "PATCH", "/keywords/"+id, map[string]any{"status": "paused"})
	if r.obj("keyword")["status"] != "paused" || find(r.list("keywords"), "id", id)["status"] != "paused" {
		t.Errorf("pause %s", r.raw)
	}
	r = c.must(200, "PATCH", "/keywords/"+id, map[string]any{"phrase": "walk-in clients", "groupId": "r-saas", "status": "listening"})
	if k := r.obj("keyword"); k["phrase"] != "walk-in clients" || k["groupId"] != "r-saas" || k["status"] != "listening" || k["platform"] != "reddit" {
		t.Errorf("patch %v", k)
	}
	c.fails(400, "status must be listening or paused", "PATCH", "/keywords/"+id, map[string]any{"status": "archived"})
	c.fails(400, "", "PATCH", "/keywords/"+id, map[string]any{"groupId": nil})
	c.fails(400, "", "PATCH", "/keywords/"+id, map[string]any{"groupId": redditOpen})
	c.fails(409, "", "PATCH", "/keywords/"+id, map[string]any{"phrase": "Calendly Alternative"})
	c.fails(404, "Keyword not found", "PATCH", "/keywords/keyword-0-nope", map[string]any{"status": "paused"})
	// Keeping its own phrase is not a duplicate of itself.
	c.must(200, "PATCH", "/keywords/"+id, map[string]any{"phrase": "WALK-IN clients"})
}

func TestKeywordPatchStatusAfterLeaving(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "DELETE", "/communities/"+redditJoined, nil)
	// The seeded keyword's community is gone, but it can still be paused.
	c.must(200, "PATCH", "/keywords/keyword-1714650180000-n0sh0w", map[string]any{"status": "paused"})
	c.fails(400, "", "PATCH", "/keywords/keyword-1714650180000-n0sh0w", map[string]any{"phrase": "no show"})
}

// A dashboard that saves the whole record (phrase, groupId and status)
// to pause a keyword of a community left since sends its scope
// unchanged: the scope rules apply again only when phrase or groupId
// change, so the pause is taken.
func TestKeywordPatchUnchangedScopeAfterLeaving(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "DELETE", "/communities/"+redditJoined, nil)
	r := c.must(200, "PATCH", "/keywords/keyword-1714650180000-n0sh0w", map[string]any{"phrase": " no-show ", "groupId": redditJoined, "status": "paused"})
	if k := r.obj("keyword"); k["status"] != "paused" || k["phrase"] != "no-show" || k["groupId"] != redditJoined {
		t.Errorf("pause with the record as it was: %s", r.raw)
	}
	c.fails(400, "", "PATCH", "/keywords/keyword-1714650180000-n0sh0w", map[string]any{"phrase": "No-Show", "groupId": redditJoined})
}

func TestKeywordDeleteAndReset(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "DELETE", "/keywords/keyword-1714650300000-schapp", nil)
	if len(r.list("keywords")) != 7 || find(r.list("keywords"), "id", "keyword-1714650300000-schapp") != nil {
		t.Errorf("after delete %s", r.raw)
	}
	c.fails(404, "Keyword not found", "DELETE", "/keywords/keyword-1714650300000-schapp", nil)
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "front desk", "platform": "x"})
	c.must(200, "PATCH", "/keywords/keyword-1714650000000-b00k1n", map[string]any{"status": "paused"})
	r = c.must(200, "POST", "/keywords/reset", nil)
	kws := r.list("keywords")
	if len(kws) != 8 || find(kws, "phrase", "front desk") != nil || find(kws, "id", "keyword-1714650300000-schapp") == nil {
		t.Errorf("reset %s", r.raw)
	}
	if find(kws, "id", "keyword-1714650000000-b00k1n")["status"] != "listening" {
		t.Error("reset kept an edit")
	}
	if len(c.must(200, "GET", "/keywords", nil).list("keywords")) != 8 {
		t.Error("reset not stored")
	}
}
