package legacymock

import "testing"

// JSON names are compared as written (RFC 8259, section 8.3), and the
// spec names every field in one spelling. A member whose name matches a
// field only when case is ignored is an unknown field, ignored as unknown
// fields are: encoding/json took {"Status": ...}, and {"ſtatus": ...},
// as status.
func TestOutmockFieldNamesMatchExactly(t *testing.T) {
	c := newClient(t, Config{})
	kwBefore := c.must(200, "GET", "/keywords", nil).raw
	c.fails(400, "phrase must not be empty", "POST", "/keywords", `{"Phrase":"front desk","platform":"x"}`)
	c.fails(400, "platform must be facebook, x, or reddit", "POST", "/keywords", `{"phrase":"front desk","PLATFORM":"x"}`)
	c.fails(400, "platform must be facebook, x, or reddit", "POST", "/accounts", `{"Platform":"x"}`)
	if got := c.must(200, "GET", "/keywords", nil).raw; got != kwBefore {
		t.Error("a refused keyword was stored")
	}

	lid := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	c.fails(400, "", "PATCH", "/listings/"+lid+"/status", `{"Status":"sold"}`)
	// The exact name wins whatever comes after it.
	if l := c.must(200, "PATCH", "/listings/"+lid+"/status", `{"status":"sold","STATUS":"active"}`).obj("listing"); l["status"] != "sold" {
		t.Errorf("status %v, want sold", l["status"])
	}
	// Inside a nested object too: radiusKm is absent, so it is the default.
	l := c.must(200, "PATCH", "/listings/"+lid, `{"locationPoint":{"lat":30.27,"lng":-97.74,"RadiusKm":500}}`).obj("listing")
	if r := l["locationPoint"].(map[string]any)["radiusKm"]; r != 10.0 {
		t.Errorf("radiusKm %v, want the default 10", r)
	}
	c.fails(400, "", "POST", "/listings", with(newListing(), "locationPoint", map[string]any{"Lat": 30.27, "lng": -97.74}))

	// On a PATCH the member is ignored, as any field the route does not take.
	a := find(c.must(200, "PATCH", "/accounts/"+redditAccount, `{"LastIssue":"checkpointed","label":"Shop reddit"}`).list("accounts"), "id", redditAccount)
	if a["lastIssue"] != nil || a["label"] != "Shop reddit" {
		t.Errorf("account %v", a)
	}
	k := c.must(200, "PATCH", "/keywords/keyword-1714650000000-b00k1n", `{"ſtatus":"paused"}`).obj("keyword")
	if k["status"] != "listening" {
		t.Errorf("keyword %v", k)
	}
	// What was sent exactly still works, and numbers stay as they were sent.
	if k := c.must(200, "PATCH", "/keywords/keyword-1714650000000-b00k1n", `{"status":"paused"}`).obj("keyword"); k["status"] != "paused" {
		t.Errorf("keyword %v", k)
	}
	c.fails(400, "the number 1e400 in locationPoint.radiusKm is out of range", "PATCH", "/listings/"+lid, `{"Title":"x","locationPoint":{"lat":1,"lng":2,"radiusKm":1e400}}`)
}
