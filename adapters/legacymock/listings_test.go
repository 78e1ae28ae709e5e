package legacymock

import (
	"regexp"
	"testing"
)

func newListing() map[string]any {
	return map[string]any{"title": "Salon chair, hydraulic", "price": "$120", "location": "Austin, TX", "images": []string{"https://img.example/chair.jpg"}}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestListingCreate(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(201, "POST", "/listings", with(newListing(), "title", "  Salon chair, hydraulic  "))
	l := r.obj("listing")
	id, _ := l["listingId"].(string)
	if !regexp.MustCompile(`^[1-9]\d{16}$`).MatchString(id) {
		t.Errorf("listingId %q is not 17 digits", id)
	}
	want := map[string]any{
		"title": "Salon chair, hydraulic", "status": "under-review", "listingUrl": "https://www.facebook.com/marketplace/item/" + id + "/",
		"category": "miscellaneous", "condition": "used-good", "accountId": fbAccount, "publishedAt": "2024-07-01T12:00:00.000Z",
		"locationPoint": nil,
	}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v", k, l[k], v)
		}
	}
	if len(r.list("listings")) != 3 {
		t.Errorf("listings %d", len(r.list("listings")))
	}
}

func TestListingCreateValidation(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"no title", with(newListing(), "title", nil)},
		{"blank title", with(newListing(), "title", "   ")},
		{"blank price", with(newListing(), "price", "")},
		{"no location", with(newListing(), "location", nil)},
		{"no images", with(newListing(), "images", []string{})},
		{"only blank images", with(newListing(), "images", []string{" ", ""})},
		{"images missing", with(newListing(), "images", nil)},
		{"bad category", with(newListing(), "category", "weapons")},
		{"bad condition", with(newListing(), "condition", "broken")},
		{"lat out of range", with(newListing(), "locationPoint", map[string]any{"lat": 91, "lng": 0})},
		{"lng missing", with(newListing(), "locationPoint", map[string]any{"lat": 30})},
		{"reddit account", with(newListing(), "accountId", redditAccount)},
		{"unknown account", with(newListing(), "accountId", "account-0-nope")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, "", "POST", "/listings", tt.body)
		})
	}
	if n := len(c.must(200, "GET", "/listings", nil).list("listings")); n != 2 {
		t.Errorf("refused creates stored listings: %d", n)
	}
}

func TestListingCategoryConditionAndImages(t *testing.T) {
	c := newClient(t, Config{})
	l := c.must(201, "POST", "/listings", with(newListing(), "category", "furniture", "condition", "new",
		"images", []string{"1.jpg", " ", "2.jpg", "3.jpg", "4.jpg", "5.jpg", "6.jpg"})).obj("listing")
	imgs := l["images"].([]any)
	if l["category"] != "furniture" || l["condition"] != "new" || len(imgs) != 4 || imgs[0] != "1.jpg" || imgs[3] != "4.jpg" {
		t.Errorf("listing %v", l)
	}
}

func TestListingRadiusClamped(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		in   any
		want float64
	}{{0, 1}, {-3, 1}, {0.5, 1}, {25, 25}, {200, 200}, {500, 200}, {nil, 10}} {
		pt := map[string]any{"lat": 30.27, "lng": -97.74}
		if tt.in != nil {
			pt["radiusKm"] = tt.in
		}
		l := c.must(201, "POST", "/listings", with(newListing(), "locationPoint", pt)).obj("listing")
		if got := l["locationPoint"].(map[string]any)["radiusKm"]; got != tt.want {
			t.Errorf("radius %v: got %v, want %v", tt.in, got, tt.want)
		}
	}
	id := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	l := c.must(200, "PATCH", "/listings/"+id, map[string]any{"locationPoint": map[string]any{"lat": 1, "lng": 2, "radiusKm": 9000}}).obj("listing")
	if l["locationPoint"].(map[string]any)["radiusKm"] != 200.0 {
		t.Errorf("PATCH radius %v", l["locationPoint"])
	}
}

func TestListingAccountResolution(t *testing.T) {
	c := newClient(t, Config{})
	for _, ref := range []string{"", "personal", "Facebook", fbAccount} {
		l := c.must(201, "POST", "/listings", with(newListing(), "accountId", ref)).obj("listing")
		if l["accountId"] != fbAccount {
			t.Errorf("accountId %q resolved to %v", ref, l["accountId"])
		}
	}
	second := c.must(201, "POST", "/accounts", map[string]any{"platform": "facebook"}).obj("account")["id"].(string)
	c.must(200, "PATCH", "/accounts/"+second, map[string]any{"label": "Shop page"})
	if l := c.must(201, "POST", "/listings", with(newListing(), "accountId", "shop PAGE")).obj("listing"); l["accountId"] != second {
		t.Errorf("label resolved to %v", l["accountId"])
	}
	// With the personal account gone the first facebook account is the default.
	c.must(200, "DELETE", "/accounts/"+fbAccount, nil)
	if l := c.must(201, "POST", "/listings", newListing()).obj("listing"); l["accountId"] != second {
		t.Errorf("default after delete: %v", l["accountId"])
	}
	c.must(200, "DELETE", "/accounts/"+second, nil)
	c.fails(400, "", "POST", "/listings", newListing())
}

func TestListingPatch(t *testing.T) {
	c := newClient(t, Config{})
	orig := c.must(201, "POST", "/listings", newListing()).obj("listing")
	id := orig["listingId"].(string)
	c.must(200, "PATCH", "/listings/"+id+"/status", map[string]any{"status": "active"})
	r := c.must(200, "PATCH", "/listings/"+id, map[string]any{
		"title": "Salon chair, hydraulic, black", "price": "$100", "images": []string{"a", "b", "c", "d", "e"},
		"listingId": "1", "listingUrl": "https://evil.example", "publishedAt": "2020-01-01T00:00:00Z", "status": "sold",
		"condition": "used-fair",
	})
	l := r.obj("listing")
	if l["listingId"] != id || l["listingUrl"] != orig["listingUrl"] || l["publishedAt"] != orig["publishedAt"] || l["status"] != "active" {
		t.Errorf("immutable fields changed: %v", l)
	}
	if l["title"] != "Salon chair, hydraulic, black" || l["price"] != "$100" || len(l["images"].([]any)) != 4 || l["condition"] != "used-fair" {
		t.Errorf("patch not applied: %v", l)
	}
	for _, bad := range []map[string]any{{"title": " "}, {"price": ""}, {"location": nil}, {"images": []string{}}, {"category": "bad"}, {"accountId": redditAccount}} {
		c.fails(400, "", "PATCH", "/listings/"+id, bad)
	}
	c.fails(404, "Listing not found", "PATCH", "/listings/99999999999999999", map[string]any{"title": "x"})
	r = c.must(200, "PATCH", "/listings/"+id, map[string]any{"locationPoint": nil})
	if r.obj("listing")["locationPoint"] != nil {
		t.Error("locationPoint null does not clear")
	}
}

func TestListingStatus(t *testing.T) {
	c := newClient(t, Config{})
	id := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	r := c.must(200, "GET", "/listings/"+id+"/status", nil)
	if len(r.body) != 3 || r.body["listingId"] != id || r.body["status"] != "under-review" || r.body["title"] != "Salon chair, hydraulic" {
		t.Errorf("status %s", r.raw)
	}
	for _, st := range []string{"active", "under-review-duplicate", "sold", "removed", "login-wall", "unknown", "under-review"} {
		r := c.must(200, "PATCH", "/listings/"+id+"/status", map[string]any{"status": st})
		if r.obj("listing")["status"] != st || find(r.list("listings"), "listingId", id)["status"] != st {
			t.Errorf("status %s not applied", st)
		}
	}
	c.fails(400, "", "PATCH", "/listings/"+id+"/status", map[string]any{"status": "archived"})
	c.fails(400, "", "PATCH", "/listings/"+id+"/status", map[string]any{})
	c.fails(404, "Listing not found", "PATCH", "/listings/10000000000000000/status", map[string]any{"status": "sold"})
	c.fails(404, "Listing not found", "GET", "/listings/10000000000000000/status", nil)
}

func TestListingDelete(t *testing.T) {
	c := newClient(t, Config{})
	id := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	c.must(200, "PATCH", "/listings/"+id+"/status", map[string]any{"status": "removed"})
	if find(c.must(200, "GET", "/listings", nil).list("listings"), "listingId", id) == nil {
		t.Fatal("status removed must keep the row")
	}
	r := c.must(200, "DELETE", "/listings/"+id, nil)
	if find(r.list("listings"), "listingId", id) != nil || len(r.list("listings")) != 2 {
		t.Errorf("after delete %s", r.raw)
	}
	c.fails(404, "Listing not found", "DELETE", "/listings/"+id, nil)
}
