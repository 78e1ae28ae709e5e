package legacymock

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func acmeBrand() map[string]any {
	return map[string]any{
		"identity": map[string]any{"name": "Slotwise", "website": "https://slotwise.example/home", "description": "Online booking for salons and studios."},
		"location": map[string]any{"city": "Austin", "country": "US"},
		"voice":    map[string]any{"formality": "friendly", "dos": []string{"be concrete"}, "donts": []string{"hard sell"}, "examples": []string{}},
		"channels": map[string]any{"facebook": map[string]any{"enabled": true}, "reddit": map[string]any{"enabled": true, "flair": "vendor"}},
		"memory":   map[string]any{"rules": []string{"never promise discounts"}},
		"offerings": []any{
			map[string]any{"name": "Starter", "price": "$19/mo"},
			map[string]any{"price": "no name"},
			"bare string",
		},
	}
}

func TestBrandAbsent(t *testing.T) {
	c := newClient(t, Config{})
	if r := c.must(200, "GET", "/brand", nil); r.body["brand"] != nil || len(r.body) != 1 {
		t.Errorf("GET /brand %s", r.raw)
	}
	if r := c.must(200, "GET", "/brand/sources", nil); len(r.list("sources")) != 0 || r.body["sources"] == nil {
		t.Errorf("sources %s", r.raw)
	}
	c.fails(404, "No brand yet", "POST", "/brand/intelligence", map[string]any{"competitors": []string{"Calendly"}})
	c.fails(404, "No brand yet", "POST", "/brand/index", nil)
	c.fails(404, "No brand yet", "DELETE", "/brand/sources", map[string]any{"url": "https://a.example/"})
	// DELETE is idempotent.
	c.must(200, "DELETE", "/brand", nil)
	if r := c.must(200, "DELETE", "/brand", nil); r.body["brand"] != nil {
		t.Errorf("DELETE %s", r.raw)
	}
}

func TestBrandPutCreatesAndDeepMerges(t *testing.T) {
	now := fixedNow
	c := newClient(t, Config{Now: func() time.Time { return now }})
	b := c.must(200, "PUT", "/brand", acmeBrand()).obj("brand")
	if b["updatedAt"] != "2024-07-01T12:00:00.000Z" {
		t.Errorf("updatedAt %v", b["updatedAt"])
	}
	if offers := b["offerings"].([]any); len(offers) != 1 {
		t.Errorf("offerings not filtered to valid ones: %v", offers)
	}
	now = now.Add(time.Hour)
	b = c.must(200, "PUT", "/brand", map[string]any{
		"identity":  map[string]any{"tagline": "Fewer no-shows", "description": nil},
		"channels":  map[string]any{"reddit": map[string]any{"flair": "founder"}, "x": map[string]any{"enabled": false}},
		"voice":     map[string]any{"dos": []string{"answer the question first"}},
		"memory":    map[string]any{"rules": []string{"mention the free plan"}},
		"sourceUrl": "https://slotwise.example/",
		"unknown":   "ignored",
	}).obj("brand")
	id := b["identity"].(map[string]any)
	if id["name"] != "Slotwise" || id["tagline"] != "Fewer no-shows" || id["website"] != "https://slotwise.example/home" {
		t.Errorf("identity not merged: %v", id)
	}
	if _, has := id["description"]; has {
		t.Error("null must remove a key")
	}
	ch := b["channels"].(map[string]any)
	reddit := ch["reddit"].(map[string]any)
	if reddit["flair"] != "founder" || reddit["enabled"] != true || ch["facebook"] == nil || ch["x"] == nil {
		t.Errorf("channels not merged per platform: %v", ch)
	}
	voice := b["voice"].(map[string]any)
	if voice["formality"] != "friendly" || len(voice["dos"].([]any)) != 1 || voice["dos"].([]any)[0] != "answer the question first" {
		t.Errorf("voice %v", voice)
	}
	if rules := b["memory"].(map[string]any)["rules"].([]any); len(rules) != 1 || rules[0] != "mention the free plan" {
		t.Errorf("memory rules %v", rules)
	}
	if _, has := b["unknown"]; has {
		t.Error("unknown keys must be dropped")
	}
	if b["updatedAt"] != "2024-07-01T13:00:00.000Z" || b["location"].(map[string]any)["city"] != "Austin" {
		t.Errorf("brand %v", b)
	}
	if got := c.must(200, "GET", "/brand", nil).obj("brand"); got["sourceUrl"] != "https://slotwise.example/" {
		t.Errorf("GET after PUT %v", got)
	}
}

func TestBrandPutInvalid(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"no identity", map[string]any{"voice": map[string]any{"formality": "casual"}}},
		{"identity without name", map[string]any{"identity": map[string]any{"website": "https://a.example"}}},
		{"identity not an object", map[string]any{"identity": "Slotwise"}},
		{"bad website", with(acmeBrand(), "identity", map[string]any{"name": "S", "website": "slotwise dot com"})},
		{"bad formality", with(acmeBrand(), "voice", map[string]any{"formality": "shouty"})},
		{"dos not strings", with(acmeBrand(), "voice", map[string]any{"dos": []any{1}})},
		{"unknown channel", with(acmeBrand(), "channels", map[string]any{"tiktok": map[string]any{}})},
		{"rules not strings", with(acmeBrand(), "memory", map[string]any{"rules": "be nice"})},
		{"offerings not a list", with(acmeBrand(), "offerings", map[string]any{"name": "x"})},
		{"page without url", with(acmeBrand(), "sources", []any{map[string]any{"title": "x"}})},
		{"page with bad status", with(acmeBrand(), "sources", []any{map[string]any{"url": "https://a.example/", "status": "done"}})},
		{"pick without id", with(acmeBrand(), "intelligence", map[string]any{"targetCommunities": []any{map[string]any{"name": "x"}}})},
		{"competitors not strings", with(acmeBrand(), "intelligence", map[string]any{"competitors": []any{map[string]any{}}})},
		{"sourceUrl not a url", with(acmeBrand(), "sourceUrl", "nope")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, "Invalid brand payload", "PUT", "/brand", tt.body)
		})
	}
	if r := c.must(200, "GET", "/brand", nil); r.body["brand"] != nil {
		t.Errorf("an invalid PUT stored a brand: %s", r.raw)
	}
	c.must(200, "PUT", "/brand", acmeBrand())
	c.fails(400, "Invalid brand payload", "PUT", "/brand", map[string]any{"identity": map[string]any{"name": ""}})
	if got := c.must(200, "GET", "/brand", nil).obj("brand"); got["identity"].(map[string]any)["name"] != "Slotwise" {
		t.Error("an invalid merge changed the stored brand")
	}
}

func TestBrandSourcesMergedByURL(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PUT", "/brand", with(acmeBrand(), "sources", []any{
		map[string]any{"url": "https://slotwise.example/", "title": "Home", "status": "indexed"},
		map[string]any{"url": "https://slotwise.example/blog"},
	}))
	r := c.must(200, "PUT", "/brand", map[string]any{"sources": []any{
		map[string]any{"url": "https://slotwise.example/", "text": "Booking that fills your chair."},
		map[string]any{"url": "https://slotwise.example/faq", "status": "failed"},
	}})
	src := r.obj("brand")["sources"].([]any)
	if len(src) != 3 {
		t.Fatalf("sources %v", src)
	}
	home := src[0].(map[string]any)
	if home["title"] != "Home" || home["text"] != "Booking that fills your chair." || home["status"] != "indexed" {
		t.Errorf("home not merged: %v", home)
	}
	if blog := src[1].(map[string]any); blog["status"] != "pending" || blog["fetchedAt"] != nil {
		t.Errorf("defaults of a new page: %v", blog)
	}
	if n := len(c.must(200, "GET", "/brand/sources", nil).list("sources")); n != 3 {
		t.Errorf("GET /brand/sources: %d", n)
	}
}

func TestBrandIntelligence(t *testing.T) {
	now := fixedNow
	c := newClient(t, Config{Now: func() time.Time { return now }})
	c.must(200, "PUT", "/brand", acmeBrand())
	c.must(200, "POST", "/brand/intelligence", map[string]any{
		"competitors":       []string{"Calendly", " Calendly ", "Acuity", ""},
		"targetCommunities": []any{map[string]any{"id": redditJoined, "reason": "owners ask about no-shows"}},
		"selectedKeyword":   "no-show",
	})
	now = now.Add(time.Minute)
	b := c.must(200, "POST", "/brand/intelligence", map[string]any{
		"competitors":       []string{"Acuity", "Square Appointments"},
		"targetCommunities": []any{map[string]any{"id": redditJoined, "priority": 1}, map[string]any{"id": fbJoined}},
	}).obj("brand")
	in := b["intelligence"].(map[string]any)
	comp := in["competitors"].([]any)
	if len(comp) != 3 || comp[0] != "Calendly" || comp[1] != "Acuity" || comp[2] != "Square Appointments" {
		t.Errorf("competitors %v", comp)
	}
	picks := in["targetCommunities"].([]any)
	first := picks[0].(map[string]any)
	if len(picks) != 2 || first["reason"] != "owners ask about no-shows" || first["priority"] != 1.0 {
		t.Errorf("picks %v", picks)
	}
	if in["selectedKeyword"] != "no-show" {
		t.Error("selectedKeyword must stay when not given")
	}
	if b["updatedAt"] != "2024-07-01T12:01:00.000Z" {
		t.Errorf("updatedAt %v", b["updatedAt"])
	}
	b = c.must(200, "POST", "/brand/intelligence", map[string]any{"selectedKeyword": "online booking"}).obj("brand")
	if b["intelligence"].(map[string]any)["selectedKeyword"] != "online booking" {
		t.Error("selectedKeyword not overwritten")
	}
	c.fails(400, "", "POST", "/brand/intelligence", map[string]any{"targetCommunities": []any{map[string]any{"name": "no id"}}})
	c.fails(400, "", "POST", "/brand/intelligence", map[string]any{"competitors": "Calendly"})
}

func TestBrandDeleteSource(t *testing.T) {
	now := fixedNow
	c := newClient(t, Config{Now: func() time.Time { return now }})
	c.must(200, "PUT", "/brand", with(acmeBrand(), "sources", []any{
		map[string]any{"url": "https://slotwise.example/"}, map[string]any{"url": "https://slotwise.example/blog"},
	}))
	now = now.Add(time.Hour)
	r := c.must(200, "DELETE", "/brand/sources", map[string]any{"url": "https://slotwise.example/blog"})
	if len(r.list("sources")) != 1 || r.obj("brand")["updatedAt"] != "2024-07-01T13:00:00.000Z" {
		t.Errorf("delete source %s", r.raw)
	}
	// Exact match only; an unknown URL is a no-op.
	r = c.must(200, "DELETE", "/brand/sources", map[string]any{"url": "https://slotwise.example"})
	if len(r.list("sources")) != 1 {
		t.Errorf("unknown url removed a page: %s", r.raw)
	}
	c.fails(400, "url is required", "DELETE", "/brand/sources", map[string]any{})
}

func TestBrandIndex(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PUT", "/brand", acmeBrand())
	r := c.must(200, "POST", "/brand/index", map[string]any{"urls": []string{"https://slotwise.example/blog", "https://slotwise.example/blog", "https://slotwise.example/help"}})
	src := r.list("sources")
	if len(src) != 2 || src[0]["status"] != "pending" || src[1]["url"] != "https://slotwise.example/help" {
		t.Errorf("urls %s", r.raw)
	}
	// No body: the website is re-resolved into its pages, without the network.
	r = c.must(200, "POST", "/brand/index", nil)
	src = r.list("sources")
	if len(src) != 6 {
		t.Fatalf("sources after re-resolve: %s", r.raw)
	}
	for _, u := range []string{"https://slotwise.example/", "https://slotwise.example/about", "https://slotwise.example/pricing", "https://slotwise.example/contact"} {
		p := find(src, "url", u)
		if p == nil || p["status"] != "indexed" || p["fetchedAt"] != "2024-07-01T12:00:00.000Z" || p["title"] == "" || len(p["headings"].([]any)) == 0 || p["text"] == "" {
			t.Errorf("page %s: %v", u, p)
		}
	}
	if p := find(src, "url", "https://slotwise.example/pricing"); p["text"] != "Prices for Starter." {
		t.Errorf("pricing text %v", p["text"])
	}
	// Again: merged by URL, no duplicates; urls plus sitemap does both.
	r = c.must(200, "POST", "/brand/index", map[string]any{"urls": []string{"https://slotwise.example/careers"}, "sitemap": true})
	if len(r.list("sources")) != 7 {
		t.Errorf("re-index duplicated pages: %d", len(r.list("sources")))
	}
	c.fails(400, "", "POST", "/brand/index", map[string]any{"urls": []string{"not a url"}})
}

func TestBrandIndexNeedsAWebsite(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PUT", "/brand", map[string]any{"identity": map[string]any{"name": "Corner Barber"}})
	c.fails(400, "", "POST", "/brand/index", map[string]any{"sitemap": true})
	c.must(200, "PUT", "/brand", map[string]any{"sourceUrl": "http://cornerbarber.example/"})
	src := c.must(200, "POST", "/brand/index", map[string]any{}).list("sources")
	if find(src, "url", "http://cornerbarber.example/about") == nil {
		t.Errorf("sourceUrl not used: %v", src)
	}
}

// Competitors a PUT stored with surrounding spaces are the same competitor
// as the trimmed name the intelligence route adds.
func TestBrandIntelligenceDedupesStoredCompetitorsTrimmed(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PUT", "/brand", with(acmeBrand(), "intelligence", map[string]any{"competitors": []string{" Calendly ", "Acuity"}}))
	b := c.must(200, "POST", "/brand/intelligence", map[string]any{"competitors": []string{"Calendly", "Acuity "}}).obj("brand")
	comp := b["intelligence"].(map[string]any)["competitors"].([]any)
	if len(comp) != 2 {
		t.Errorf("competitors %q, want Calendly and Acuity once each", comp)
	}
}

// In a PUT null removes a key, sources included, as it does every other.
func TestBrandPutNullSourcesRemovesThem(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PUT", "/brand", with(acmeBrand(), "sources", []any{map[string]any{"url": "https://slotwise.example/"}}))
	b := c.must(200, "PUT", "/brand", `{"sources": null}`).obj("brand")
	if _, has := b["sources"]; has {
		t.Errorf("sources after null: %v", b["sources"])
	}
	if src := c.must(200, "GET", "/brand/sources", nil).list("sources"); len(src) != 0 {
		t.Errorf("GET /brand/sources after null: %v", src)
	}
}

// Numbers in the free-form parts of the brand come back as they were
// sent: read as float64, an integer past 2^53 came back rounded
// (123456789012345678901 as 123456789012345680000), at once, after a
// refused change and after a restart.
func TestBrandKeepsNumbersAsSent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	const big = "123456789012345678901"
	body := `{"identity":{"name":"Slotwise","taxId":` + big + `,"rating":4.75},"location":{"lat":30.2672}}`
	if raw := c.must(200, "PUT", "/brand", body).raw; !strings.Contains(raw, big) {
		t.Errorf("PUT changed the number: %s", raw)
	}
	if raw := c.must(200, "POST", "/brand/intelligence", `{"targetCommunities":[{"id":"r-saas","weight":9007199254740993}]}`).raw; !strings.Contains(raw, "9007199254740993") {
		t.Errorf("intelligence changed the number: %s", raw)
	}
	c.fails(400, "Invalid brand payload", "PUT", "/brand", map[string]any{"voice": map[string]any{"formality": "shouty"}})
	for _, cl := range []*client{c, newClient(t, Config{StatePath: path})} {
		raw := cl.must(200, "GET", "/brand", nil).raw
		for _, n := range []string{`"taxId":` + big, `"rating":4.75`, `"lat":30.2672`, `"weight":9007199254740993`} {
			if !strings.Contains(raw, n) {
				t.Errorf("%s lost: %s", n, raw)
			}
		}
	}
}
