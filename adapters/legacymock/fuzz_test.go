package legacymock

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzWriteRoutes sends arbitrary bodies to the write routes that decode
// the richest JSON. Whatever the body, the answer is a JSON envelope below
// 500 and nothing panics.
func FuzzWriteRoutes(f *testing.F) {
	for _, seed := range []struct {
		route uint8
		body  string
	}{
		{0, `{"title":"Desk","price":"$40","location":"Austin","images":["a.jpg"],"locationPoint":{"lat":30,"lng":-97,"radiusKm":999}}`},
		{0, `{"title":"","images":[]}`},
		{1, `{"identity":{"name":"Slotwise","website":"https://slotwise.example"},"sources":[{"url":"https://slotwise.example/"}]}`},
		{1, `{"identity":{"name":"x"},"channels":{"x":null},"offerings":[1,{"name":"a"}]}`},
		{2, `{"phrase":"no-show","platform":"reddit","groupId":"r-smallbusiness"}`},
		{3, `{"name":"k","scopes":{"accountId":"account-1714557600000-p4k9zq","groupIds":["r-saas"]}}`},
		{4, `{"lastIssue":"checkpoint","rawSignal":{"code":190,"subcode":459},"retryAfter":30}`},
		{5, `{"competitors":["a"],"targetCommunities":[{"id":"r-saas"}],"selectedKeyword":"x"}`},
		{0, `[]`},
		{1, `{"identity":{"name":"x"}} trailing`},
	} {
		f.Add(seed.route, seed.body)
	}
	s, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	routes := []struct{ method, path string }{
		{"POST", "/listings"},
		{"PUT", "/brand"},
		{"POST", "/keywords"},
		{"POST", "/api-keys"},
		{"PATCH", "/accounts/" + defaultAccountID},
		{"POST", "/brand/intelligence"},
		{"POST", "/brand/index"},
		{"POST", "/communities/join-by-url"},
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		rt := routes[int(route)%len(routes)]
		req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode >= http.StatusInternalServerError {
			t.Fatalf("%s %s with %q: %d %s", rt.method, rt.path, body, res.StatusCode, data)
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || len(data) == 0 || data[0] != '{' {
			t.Fatalf("%s %s with %q: not a JSON answer: %s", rt.method, rt.path, body, data)
		}
	})
}
