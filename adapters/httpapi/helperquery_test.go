package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The helper routes read platform from the query as /api/v1 reads its
// parameters: given twice it is refused 400 invalid_parameter naming it,
// rather than read as its first value (`platform=x&platform=reddit`
// answered x's phrases and x's jar), and a query string net/url cannot
// read whole is 400 invalid_request, not read without the pair it could
// not parse.
func TestHelperPlatformQueryReadWhole(t *testing.T) {
	sessions := &fakeSessions{jars: map[string][]byte{"o1/x": []byte(freshXJar)}}
	srv := httptest.NewServer(NewHelper(HelperConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, helperKeys, &fakeIngest{}, sessions))
	t.Cleanup(srv.Close)
	for _, c := range []struct{ method, path, code, message string }{
		{"GET", "/phrases?platform=x&platform=reddit", "invalid_parameter", "platform is given 2 times: send it once"},
		{"GET", "/session?platform=x&platform=facebook", "invalid_parameter", "platform is given 2 times: send it once"},
		{"PUT", "/session?platform=x&platform=x", "invalid_parameter", "platform is given 2 times: send it once"},
		{"GET", "/phrases?platform=x&y=1%", "invalid_request", ""},
		{"GET", "/session?platform=x;", "invalid_request", ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(freshXJar))
		req.Header.Set("Authorization", "Bearer svc_ingest_one")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		m, _ := out.(map[string]any)
		e, _ := m["error"].(map[string]any)
		if resp.StatusCode != 400 || e == nil || e["code"] != c.code || (c.message != "" && e["message"] != c.message) {
			t.Errorf("%s %s: %d %v, want 400 %s %q", c.method, c.path, resp.StatusCode, out, c.code, c.message)
		}
	}
	// Once, the parameter is read as before.
	if resp, out := helperCall(t, srv, "GET", "/phrases?platform=x", "svc_ingest_one", ""); resp.StatusCode != 200 || out["platform"] != "x" {
		t.Fatalf("GET /phrases?platform=x: %d %v", resp.StatusCode, out)
	}
}
