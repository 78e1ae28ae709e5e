package legacymock

import (
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
