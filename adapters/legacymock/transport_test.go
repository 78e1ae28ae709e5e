package legacymock

import (
	"net/http"
	"strings"
	"testing"
)

func TestUnknownRouteAnswers404Envelope(t *testing.T) {
	c := newClient(t, Config{})
	c.fails(404, "Not found: GET /nope", "GET", "/nope", nil)
	c.fails(404, "", "GET", "/listings/123/extra/deep", nil)
}

func TestWrongMethodAnswers405Envelope(t *testing.T) {
	c := newClient(t, Config{})
	c.fails(405, "Method PUT is not allowed on /listings", "PUT", "/listings", "{}")
}

func TestBadJSONAnswers400(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name, body, msg string
	}{
		{"syntax", `{"title": `, ""},
		{"trailing garbage", `{"platform":"x"} {}`, ""},
		{"array body", `[{"platform":"x"}]`, "request body must be a JSON object"},
		{"null body", `null`, "request body must be a JSON object"},
		{"empty body", ``, "request body must be a JSON object"},
		{"wrong type", `{"platform": 7}`, "platform must be a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, tt.msg, "POST", "/accounts", tt.body)
		})
	}
	c.fails(400, "images must be an array", "POST", "/listings", `{"title":"a","price":"1","location":"b","images":"x.jpg"}`)
}

func TestOversizedBodyAnswers413(t *testing.T) {
	c := newClient(t, Config{})
	big := `{"phrase":"` + strings.Repeat("a", maxBody) + `","platform":"x"}`
	c.fails(413, "", "POST", "/keywords", big)
}

// A number JSON can write but Go cannot hold is out of range, not of the
// wrong type: the answer says so, and never that the object body is not
// an object.
func TestOutOfRangeNumberIsNamed(t *testing.T) {
	c := newClient(t, Config{})
	c.fails(400, "the number 1e400 in founded is out of range", "PUT", "/brand", `{"identity":{"name":"Slotwise","founded":1e400}}`)
	c.fails(400, "the number 1e400 in locationPoint.radiusKm is out of range", "POST", "/listings",
		`{"title":"a","price":"1","location":"b","images":["x.jpg"],"locationPoint":{"lat":1,"lng":2,"radiusKm":1e400}}`)
	c.fails(400, "the number 99999999999999999999 in rawSignal.code is out of range", "PATCH", "/accounts/"+fbAccount, `{"rawSignal":{"code":99999999999999999999}}`)
	// A fraction where an integer belongs is of the wrong type.
	c.fails(400, "rawSignal.code must be an integer", "PATCH", "/accounts/"+fbAccount, `{"rawSignal":{"code":1.5}}`)
}

// An item of a list of the wrong type is named as such: "images must be
// a string" sent a client that had sent a list back to sending a string.
func TestWrongItemTypeNamesTheList(t *testing.T) {
	c := newClient(t, Config{})
	id := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	for _, tt := range []struct {
		method, path, body, msg string
	}{
		{"POST", "/listings", `{"title":"a","price":"1","location":"b","images":[{"url":"x.jpg"}]}`, "images must be an array of strings"},
		{"PATCH", "/listings/" + id, `{"images":[1]}`, "images must be an array of strings"},
		{"POST", "/communities/" + fbOpen + "/join", `{"accountId":"personal","answers":[7]}`, "answers must be an array of strings"},
		{"POST", "/brand/intelligence", `{"targetCommunities":["r-saas"]}`, "targetCommunities must be an array of objects"},
		{"POST", "/brand/index", `{"urls":[true]}`, "urls must be an array of strings"},
		// The field itself of the wrong type, and a field inside an object, read as before.
		{"POST", "/listings", `{"title":"a","price":"1","location":"b","images":"x.jpg"}`, "images must be an array"},
		{"PATCH", "/listings/" + id, `{"locationPoint":{"lat":"north","lng":1}}`, "locationPoint.lat must be a number"},
	} {
		c.fails(400, tt.msg, tt.method, tt.path, tt.body)
	}
}

// The spec answers JSON on every route. A path the mux cleans (a doubled
// slash, a dot segment) is still redirected to its clean form, but the
// answer is the error envelope, for every method, never the mux's HTML
// (GET) or empty body (POST).
func TestUncleanPathRedirectAnswersJSON(t *testing.T) {
	c := newClient(t, Config{})
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tt := range []struct{ method, path, location string }{
		{"GET", "//accounts", "/accounts"},
		{"POST", "/keywords//reset", "/keywords/reset"},
		{"DELETE", "/brand/./sources", "/brand/sources"},
	} {
		r := c.fails(307, "", tt.method, tt.path, nil)
		if !strings.Contains(r.errMsg(), tt.location) {
			t.Errorf("%s %s: %q does not name %s", tt.method, tt.path, r.errMsg(), tt.location)
		}
		req, _ := http.NewRequest(tt.method, c.base+tt.path, nil)
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Location"); got != tt.location {
			t.Errorf("%s %s: Location %q, want %q", tt.method, tt.path, got, tt.location)
		}
	}
}

// A query string that cannot be read is refused with the error envelope:
// read leniently, a filter in it was dropped and the whole list came
// back as if it had been applied.
func TestMalformedQueryIsRefused(t *testing.T) {
	c := newClient(t, Config{})
	for _, path := range []string{
		"/feed?platform=x;search=a",
		"/feed?search=%zz",
		"/feed/x?search=%zz",
		"/keywords?platform=x&noGroup=%",
		"/communities?platform=reddit;",
	} {
		c.fails(400, "", "GET", path, nil)
	}
	// A well-formed query still filters.
	for _, it := range c.must(200, "GET", "/feed?platform=x&search=%20", nil).list("items") {
		if it["platform"] != "x" {
			t.Errorf("platform filter let %v through", it["id"])
		}
	}
}
