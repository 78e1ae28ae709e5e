package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// HEAD on a GET route answers what GET would, status and headers (the
// JSON Content-Type, the body's Content-Length, the rate headers),
// without the body; on a path without GET it is a wrong method.
func TestHeadAnswersAsGet(t *testing.T) {
	p := &probe{}
	srv := httptest.NewServer(New(Config{Logger: quietLog}, Deps{Keys: readKeys, Phrases: p, Matches: probeMatches{p}, Limiter: &switchLimiter{}}))
	t.Cleanup(srv.Close)
	do := func(method, path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer svc_api_read")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, path := range []string{"/api/v1/me", "/api/v1/keywords/known", "/api/v1/keywords/unknown", "/api/v1/matches?limit=5", "/api/v1/matches?limit=0"} {
		get, body := do("GET", path)
		head, none := do("HEAD", path)
		if head.StatusCode != get.StatusCode || len(none) != 0 || head.ContentLength != int64(len(body)) {
			t.Errorf("HEAD %s: %d, length %d, %d bytes; GET: %d, %d bytes", path, head.StatusCode, head.ContentLength, len(none), get.StatusCode, len(body))
		}
		for _, h := range []string{"Content-Type", "X-RateLimit-Limit", "X-RateLimit-Remaining"} {
			if head.Header.Get(h) == "" || head.Header.Get(h) != get.Header.Get(h) {
				t.Errorf("HEAD %s: %s %q, GET %q", path, h, head.Header.Get(h), get.Header.Get(h))
			}
		}
	}
	if resp, _ := do("HEAD", "/api/v1/triage"); resp.StatusCode != 400 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("HEAD /api/v1/triage: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
