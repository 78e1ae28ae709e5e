package legacymock

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// Rules of spec/legacy-mock.md and docs/legacy-mock.md that no other test
// checks at their bounds or in their exact shape.

// A phrase is 1 to 100 characters, counted as characters, not bytes.
func TestOutmockKeywordPhraseBounds(t *testing.T) {
	c := newClient(t, Config{})
	long := strings.Repeat("é", 100)
	if k := c.must(201, "POST", "/keywords", map[string]any{"phrase": long, "platform": "x"}).obj("keyword"); k["phrase"] != long {
		t.Errorf("phrase %v", k["phrase"])
	}
	c.fails(400, "phrase must be at most 100 characters", "POST", "/keywords", map[string]any{"phrase": long + "é", "platform": "x"})
	c.fails(400, "phrase must not be empty", "POST", "/keywords", map[string]any{"phrase": "", "platform": "x"})
	if k := c.must(201, "POST", "/keywords", map[string]any{"phrase": "z", "platform": "x"}).obj("keyword"); k["phrase"] != "z" {
		t.Errorf("phrase %v", k["phrase"])
	}
}

// A keyword record has id, phrase, platform, groupId and status, groupId
// null (never absent) without a group; for x, "" counts as null.
func TestOutmockKeywordRecordShape(t *testing.T) {
	c := newClient(t, Config{})
	k := c.must(201, "POST", "/keywords", map[string]any{"phrase": "walk-in queue", "platform": "x", "groupId": ""}).obj("keyword")
	if g, set := k["groupId"]; !set || g != nil {
		t.Errorf("groupId %v (set %v), want null", g, set)
	}
	for _, f := range []string{"id", "phrase", "platform", "status"} {
		if s, isStr := k[f].(string); !isStr || s == "" {
			t.Errorf("%s is %v", f, k[f])
		}
	}
	k = c.must(201, "POST", "/keywords", map[string]any{"phrase": "walk-in queue", "platform": "reddit", "groupId": redditJoined}).obj("keyword")
	if k["groupId"] != redditJoined {
		t.Errorf("groupId %v", k["groupId"])
	}
}

// The duplicate rule ignores case as the feed search does: a final sigma
// is the same letter as a capital one.
func TestOutmockKeywordDuplicateFoldsCase(t *testing.T) {
	c := newClient(t, Config{})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "οδος", "platform": "x"})
	c.fails(409, "", "POST", "/keywords", map[string]any{"phrase": "ΟΔΟΣ", "platform": "x"})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "strasse", "platform": "x"})
	c.fails(409, "", "POST", "/keywords", map[string]any{"phrase": "ſtraſſe", "platform": "x"})
}

// A key's name is at most 100 characters; the create answer is exactly
// {apiKey, apiKeys, key}, and the list in it holds the new key.
func TestOutmockAPIKeyNameBoundAndAnswer(t *testing.T) {
	c := newClient(t, Config{})
	name := strings.Repeat("ü", 100)
	r := c.must(201, "POST", "/api-keys", map[string]any{"name": name, "scopes": validScopes()})
	if got := slices.Sorted(maps.Keys(r.body)); !slices.Equal(got, []string{"apiKey", "apiKeys", "key"}) {
		t.Errorf("answer keys %v", got)
	}
	if k := r.obj("apiKey"); k["name"] != name || find(r.list("apiKeys"), "id", k["id"].(string)) == nil {
		t.Errorf("answer %s", r.raw)
	}
	for _, f := range []string{"id", "name", "prefix", "secretHash", "scopes", "createdAt", "lastUsedAt"} {
		if _, set := r.list("apiKeys")[0][f]; !set {
			t.Errorf("listed key lacks %s", f)
		}
	}
	c.fails(400, "A key name is at most 100 characters", "POST", "/api-keys", map[string]any{"name": name + "ü", "scopes": validScopes()})
}

// lat is -90 to 90 and lng -180 to 180, both ends included; radiusKm is
// clamped to 1 to 200 at both ends.
func TestOutmockListingPointBounds(t *testing.T) {
	c := newClient(t, Config{})
	for _, pt := range []map[string]any{
		{"lat": 90, "lng": 180, "radiusKm": 1},
		{"lat": -90, "lng": -180, "radiusKm": 200},
	} {
		l := c.must(201, "POST", "/listings", with(newListing(), "locationPoint", pt)).obj("listing")
		got := l["locationPoint"].(map[string]any)
		if got["lat"] != float64(pt["lat"].(int)) || got["lng"] != float64(pt["lng"].(int)) || got["radiusKm"] != float64(pt["radiusKm"].(int)) {
			t.Errorf("point %v, sent %v", got, pt)
		}
	}
	for _, pt := range []map[string]any{{"lat": 90.0001, "lng": 0}, {"lat": -90.0001, "lng": 0}, {"lat": 0, "lng": 180.0001}, {"lat": 0, "lng": -180.0001}} {
		c.fails(400, "locationPoint needs lat (-90 to 90) and lng (-180 to 180)", "POST", "/listings", with(newListing(), "locationPoint", pt))
	}
	for in, want := range map[float64]float64{0.999: 1, 200.001: 200} {
		l := c.must(201, "POST", "/listings", with(newListing(), "locationPoint", map[string]any{"lat": 0, "lng": 0, "radiusKm": in})).obj("listing")
		if got := l["locationPoint"].(map[string]any)["radiusKm"]; got != want {
			t.Errorf("radius %v: %v, want %v", in, got, want)
		}
	}
}

// resolve-reddit answers {community} alone; leaving a community twice
// answers 200 both times, and the row stays.
func TestOutmockCommunityAnswersAndRepeats(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(201, "POST", "/communities/resolve-reddit", map[string]any{"name": "r/barbers"})
	if len(r.body) != 1 || r.obj("community")["joinState"] != "accepted" {
		t.Errorf("resolve-reddit %s", r.raw)
	}
	for range 2 {
		r := c.must(200, "DELETE", "/communities/"+redditJoined, nil)
		if len(r.body) != 1 || find(r.list("communities"), "id", redditJoined)["joinState"] != "none" {
			t.Errorf("leave %s", r.raw)
		}
	}
}

// lastIssue is normalised: "Checkpoint" is checkpointed, "not_connected"
// (a view state) and unknown text are unknown.
func TestOutmockAccountIssueNormalised(t *testing.T) {
	c := newClient(t, Config{})
	for in, want := range map[string]string{"Checkpoint": "checkpointed", "not_connected": "unknown", "something odd": "unknown", "rate-limited": "rate_limited"} {
		a := find(c.must(200, "PATCH", "/accounts/"+redditAccount, map[string]any{"lastIssue": in}).list("accounts"), "id", redditAccount)
		if a["lastIssue"] != want {
			t.Errorf("lastIssue %q stored as %v, want %s", in, a["lastIssue"], want)
		}
	}
}
