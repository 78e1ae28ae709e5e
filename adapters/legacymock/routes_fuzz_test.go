package legacymock

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzEveryRoute sends any path id, query string, body and key headers to
// every route of the mock, on a fresh server seeded from seed.json so a
// failure replays alone. Seeds are the request shapes of
// spec/legacy-mock.md (the ids are seed.json's). Whatever comes, the
// answer is a JSON envelope below 500, and an answer of 400 or more
// leaves the state as it was: a refused request changes nothing.
func FuzzEveryRoute(f *testing.F) {
	type seed struct {
		route         uint8
		id, query     string
		body, apiKey  string
		authorization string
	}
	for _, s := range []seed{
		{route: 3, query: "platform=reddit"},
		{route: 4, id: "r-saas", body: `{"accountId":"account-1714557600000-p4k9zq","answers":["yes"]}`},
		{route: 5, body: `{"url":"https://www.reddit.com/r/golang/","accountId":"account-1714557600000-p4k9zq"}`},
		{route: 6, body: `{"url":"https://www.facebook.com/groups/123/"}`},
		{route: 7, body: `{"name":"r/SaaS"}`},
		{route: 13, body: `{"url":"https://slotwise.example/"}`},
		{route: 21, body: `{"platform":"facebook","name":"Ada","handle":"ada"}`},
		{route: 24, id: "account-1714557600000-p4k9zq", authorization: "Bearer k"},
		{route: 24, id: "account-1714557600000-p4k9zq", apiKey: "k"},
		{route: 25, query: "platform=reddit&groupId=r-saas&noGroup=maybe"},
		{route: 28, id: "keyword-1714650000000-b00k1n", body: `{"status":"paused","phrase":"x"}`},
		{route: 30, query: "search=%20ru&platform=x"},
		{route: 31, id: "tiktok", query: "search=%zz"},
		{route: 19, id: "nope", body: `{"status":"sold"}`},
		{route: 0, body: `{}`, query: "a=1;b=2"},
		{route: 27, id: "keyword-1714650000000-b00k1n", body: `{"phrase":"` + strings.Repeat("é", 300) + `"}`},
	} {
		f.Add(s.route, s.id, s.query, s.body, s.apiKey, s.authorization)
	}
	routes := []struct{ method, path string }{
		{"GET", "/api-keys"}, {"POST", "/api-keys"}, {"DELETE", "/api-keys/{}"},
		{"GET", "/communities"}, {"POST", "/communities/{}/join"}, {"POST", "/communities/join-by-url"},
		{"POST", "/communities/resolve"}, {"POST", "/communities/resolve-reddit"}, {"POST", "/communities/{}/accept"},
		{"DELETE", "/communities/{}"},
		{"GET", "/brand"}, {"PUT", "/brand"}, {"DELETE", "/brand"}, {"POST", "/brand/intelligence"},
		{"GET", "/brand/sources"}, {"DELETE", "/brand/sources"}, {"POST", "/brand/index"},
		{"GET", "/listings"}, {"POST", "/listings"}, {"PATCH", "/listings/{}"}, {"DELETE", "/listings/{}"},
		{"GET", "/listings/{}/status"}, {"PATCH", "/listings/{}/status"},
		{"GET", "/accounts"}, {"POST", "/accounts/{}/resolve"}, {"GET", "/keywords"}, {"POST", "/keywords"},
		{"POST", "/keywords/reset"}, {"PATCH", "/keywords/{}"}, {"DELETE", "/keywords/{}"},
		{"GET", "/feed"}, {"GET", "/feed/{}"},
		{"POST", "/accounts"}, {"PATCH", "/accounts/{}"}, {"DELETE", "/accounts/{}"},
	}
	f.Fuzz(func(t *testing.T, route uint8, id, query, body, apiKey, authorization string) {
		rt := routes[int(route)%len(routes)]
		path := strings.ReplaceAll(rt.path, "{}", url.PathEscape(id))
		req, err := http.NewRequest(rt.method, "http://mock"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.URL.RawQuery = query
		for k, v := range map[string]string{"X-API-Key": apiKey, "Authorization": authorization} {
			if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
				req.Header.Set(k, v)
			}
		}
		s, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		before, err := encodeState(s.store.st)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		res := rec.Result()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode >= http.StatusInternalServerError {
			t.Fatalf("%s %s?%s with %q: %d %s", rt.method, path, query, body, res.StatusCode, data)
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || len(data) == 0 || data[0] != '{' {
			t.Fatalf("%s %s?%s with %q: not a JSON answer: %d %s", rt.method, path, query, body, res.StatusCode, data)
		}
		if res.StatusCode >= 400 {
			after, err := encodeState(s.store.st)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("%s %s?%s with %q refused (%d %s) but changed the state", rt.method, path, query, body, res.StatusCode, data)
			}
		}
	})
}
