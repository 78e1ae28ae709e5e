package legacymock

import (
	"testing"
)

func TestCommunitiesCatalog(t *testing.T) {
	c := newClient(t, Config{})
	all := c.must(200, "GET", "/communities", nil).list("communities")
	if len(all) < 12 {
		t.Fatalf("catalog of %d communities", len(all))
	}
	count := map[string]int{}
	for _, cm := range all {
		count[cm["platform"].(string)]++
		for _, k := range []string{"id", "joinState", "accountId", "accountLabel", "entryQuestions", "answers", "name", "url"} {
			if _, set := cm[k]; !set {
				t.Errorf("%v lacks %s", cm["id"], k)
			}
		}
	}
	if count["facebook"] < 4 || count["x"] < 3 || count["reddit"] < 4 {
		t.Errorf("platform spread %v", count)
	}
	joined := find(all, "id", fbJoined)
	if joined["accountId"] != fbAccount || joined["accountLabel"] != "Facebook" || joined["joinState"] != "accepted" {
		t.Errorf("seeded join %v", joined)
	}
	for _, p := range []string{"facebook", "x", "reddit"} {
		for _, cm := range c.must(200, "GET", "/communities?platform="+p, nil).list("communities") {
			if cm["platform"] != p {
				t.Errorf("platform filter %s let %v through", p, cm["id"])
			}
		}
	}
	c.fails(400, "platform must be facebook, x, or reddit", "GET", "/communities?platform=myspace", nil)
}

func TestJoinRedditAndXAcceptedAtOnce(t *testing.T) {
	c := newClient(t, Config{})
	for _, id := range []string{redditOpen, xList} {
		r := c.must(200, "POST", "/communities/"+id+"/join", nil)
		if r.obj("community")["joinState"] != "accepted" || r.obj("community")["accountId"] != nil {
			t.Errorf("%s: %v", id, r.obj("community"))
		}
		if find(r.list("communities"), "id", id)["joinState"] != "accepted" {
			t.Errorf("%s: list not updated", id)
		}
	}
}

func TestJoinFacebookRules(t *testing.T) {
	c := newClient(t, Config{})
	xAcc := c.must(201, "POST", "/accounts", map[string]any{"platform": "x"}).obj("account")["id"].(string)
	newFB := c.must(201, "POST", "/accounts", map[string]any{"platform": "facebook"}).obj("account")["id"].(string)
	for _, tt := range []struct {
		name string
		body any
	}{
		{"no body", nil},
		{"no account", map[string]any{"answers": []string{"Hatha Haus, Portland"}}},
		{"account of another platform", map[string]any{"accountId": redditAccount, "answers": []string{"Hatha Haus, Portland"}}},
		{"x account", map[string]any{"accountId": xAcc, "answers": []string{"Hatha Haus, Portland"}}},
		{"unknown account", map[string]any{"accountId": "account-0-nope", "answers": []string{"Hatha Haus, Portland"}}},
		{"account not connected", map[string]any{"accountId": newFB, "answers": []string{"Hatha Haus, Portland"}}},
		{"missing answers", map[string]any{"accountId": fbAccount}},
		{"blank answer", map[string]any{"accountId": fbAccount, "answers": []string{"   "}}},
		{"too many answers", map[string]any{"accountId": fbAccount, "answers": []string{"a", "b"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, "", "POST", "/communities/"+fbOpen+"/join", tt.body)
		})
	}
	cm := find(c.must(200, "GET", "/communities", nil).list("communities"), "id", fbOpen)
	if cm["joinState"] != "none" {
		t.Fatalf("a refused join changed the row: %v", cm)
	}
	r := c.must(200, "POST", "/communities/"+fbOpen+"/join", map[string]any{"accountId": fbAccount, "answers": []string{"  Hatha Haus, Portland "}})
	got := r.obj("community")
	if got["joinState"] != "pending" || got["accountId"] != fbAccount || got["accountLabel"] != "Facebook" {
		t.Errorf("joined %v", got)
	}
	if ans := got["answers"].([]any); len(ans) != 1 || ans[0] != "Hatha Haus, Portland" {
		t.Errorf("answers %v", ans)
	}
}

func TestJoinFacebookByLabel(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "POST", "/communities/"+fbNoQuestions+"/join", map[string]any{"accountId": "facebook"})
	if r.obj("community")["accountId"] != fbAccount || r.obj("community")["joinState"] != "pending" {
		t.Errorf("join by label %v", r.obj("community"))
	}
}

func TestJoinWhenPendingOrAcceptedIsNoop(t *testing.T) {
	c := newClient(t, Config{})
	for _, id := range []string{fbPending, fbJoined, redditJoined} {
		before := find(c.must(200, "GET", "/communities", nil).list("communities"), "id", id)
		r := c.must(200, "POST", "/communities/"+id+"/join", map[string]any{"accountId": "nonsense"})
		after := r.obj("community")
		if after["joinState"] != before["joinState"] || after["accountId"] != before["accountId"] {
			t.Errorf("%s changed: %v -> %v", id, before, after)
		}
	}
	c.fails(404, "Community not found", "POST", "/communities/fb-nope/join", nil)
}

func TestAcceptCommunity(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "POST", "/communities/"+fbPending+"/accept", nil)
	if r.obj("community")["joinState"] != "accepted" || find(r.list("communities"), "id", fbPending)["joinState"] != "accepted" {
		t.Errorf("accept %v", r.obj("community"))
	}
	c.fails(400, "No join request to accept", "POST", "/communities/"+fbOpen+"/accept", nil)
	c.fails(404, "Community not found", "POST", "/communities/fb-nope/accept", nil)
	// Accepting an accepted row changes nothing.
	c.must(200, "POST", "/communities/"+fbJoined+"/accept", nil)
}

func TestJoinByURL(t *testing.T) {
	c := newClient(t, Config{})
	// A new link is registered and joined: 201, pending.
	r := c.must(201, "POST", "/communities/join-by-url", map[string]any{"url": "https://m.facebook.com/groups/AustinFoodTrucks/?ref=share", "accountId": fbAccount})
	got := r.obj("community")
	if got["id"] != "fb-austinfoodtrucks" || got["joinState"] != "pending" || got["url"] != "https://www.facebook.com/groups/austinfoodtrucks/" || got["source"] != "registered" {
		t.Errorf("registered %v", got)
	}
	if find(r.list("communities"), "id", "fb-austinfoodtrucks") == nil {
		t.Error("list lacks the new row")
	}
	// The same link again, spelled differently: tracked, 200, unchanged.
	c.must(200, "POST", "/communities/join-by-url", map[string]any{"url": "facebook.com/groups/austinfoodtrucks"})
	// A catalog link applies the facebook rule to the catalog row.
	c.fails(400, "", "POST", "/communities/join-by-url", map[string]any{"url": "https://www.facebook.com/groups/yogastudioowners/", "accountId": fbAccount})
	r = c.must(200, "POST", "/communities/join-by-url", map[string]any{"url": "https://www.facebook.com/groups/yogastudioowners/", "accountId": fbAccount, "answers": []string{"Flow Room, Austin"}})
	if r.obj("community")["id"] != fbOpen || r.obj("community")["joinState"] != "pending" {
		t.Errorf("catalog join by url %v", r.obj("community"))
	}
}

func TestJoinByURLRefusals(t *testing.T) {
	c := newClient(t, Config{})
	c.fails(400, "url is required", "POST", "/communities/join-by-url", map[string]any{})
	for _, u := range []string{"https://www.reddit.com/r/Coffee/", "https://x.com/i/lists/123", "https://example.com/groups/x", "ftp://facebook.com/groups/x", "https://www.facebook.com/somepage"} {
		c.fails(400, "url must be a facebook group link, like https://www.facebook.com/groups/<name>/", "POST", "/communities/join-by-url", map[string]any{"url": u, "accountId": fbAccount})
	}
	// The facebook rule fails: the new row is not kept either.
	c.fails(400, "", "POST", "/communities/join-by-url", map[string]any{"url": "https://www.facebook.com/groups/austinfoodtrucks/"})
	if find(c.must(200, "GET", "/communities", nil).list("communities"), "id", "fb-austinfoodtrucks") != nil {
		t.Error("a refused join-by-url registered its row")
	}
}

func TestResolveCommunity(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "POST", "/communities/resolve", map[string]any{"url": "https://www.facebook.com/groups/salonownersnetwork/"})
	if got := r.obj("community"); got["id"] != fbPending || got["joinState"] != "pending" || len(got["entryQuestions"].([]any)) != 3 {
		t.Errorf("known link %v", got)
	}
	if _, has := r.body["communities"]; has {
		t.Error("resolve answers {community} only")
	}
	for _, tt := range []struct{ url, id, platform string }{
		{"https://www.facebook.com/groups/bakersofportland", "fb-bakersofportland", "facebook"},
		{"https://twitter.com/i/lists/1700000000000000001", "x-list-1700000000000000001", "x"},
		{"https://old.reddit.com/r/Coffee/comments/abc/", "r-coffee", "reddit"},
	} {
		got := c.must(201, "POST", "/communities/resolve", map[string]any{"url": tt.url}).obj("community")
		if got["id"] != tt.id || got["platform"] != tt.platform || got["joinState"] != "none" {
			t.Errorf("%s: %v", tt.url, got)
		}
		c.must(200, "POST", "/communities/resolve", map[string]any{"url": tt.url})
	}
	c.fails(400, "url is required", "POST", "/communities/resolve", map[string]any{"url": " "})
	c.fails(400, "", "POST", "/communities/resolve", map[string]any{"url": "https://example.com/"})
}

func TestResolveReddit(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name   string
		status int
		id     string
	}{
		{"r/Coffee", 201, "r-coffee"},
		{"coffee", 200, "r-coffee"},
		{"Entrepreneur", 200, redditOpen},
		{"/r/startups/", 200, "r-startups"},
		{"https://www.reddit.com/r/espresso/", 201, "r-espresso"},
	} {
		got := c.must(tt.status, "POST", "/communities/resolve-reddit", map[string]any{"name": tt.name}).obj("community")
		if got["id"] != tt.id || got["joinState"] != "accepted" || got["platform"] != "reddit" {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
	for _, bad := range []string{"r/", "a", "r/has space", "r/this_name_is_far_too_long_for_reddit", "https://www.facebook.com/groups/x/"} {
		c.fails(400, "", "POST", "/communities/resolve-reddit", map[string]any{"name": bad})
	}
	c.fails(400, "name is required", "POST", "/communities/resolve-reddit", map[string]any{})
}

func TestLeaveCommunity(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "DELETE", "/communities/"+fbJoined, nil)
	if _, has := r.body["community"]; has {
		t.Error("DELETE answers {communities}")
	}
	got := find(r.list("communities"), "id", fbJoined)
	if got == nil || got["joinState"] != "none" || got["accountId"] != nil || len(got["answers"].([]any)) != 0 {
		t.Errorf("after leave: %v", got)
	}
	// The row stays but can no longer scope keywords.
	c.fails(400, "", "POST", "/keywords", map[string]any{"phrase": "salon software", "platform": "facebook", "groupId": fbJoined})
	c.fails(404, "Community not found", "DELETE", "/communities/fb-nope", nil)
}
