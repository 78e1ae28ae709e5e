package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// crossOriginRefusal is what the page of a refused cross-origin write
// says (crossOrigin).
const crossOriginRefusal = "came from another site"

// writeRoutes are the dashboard's routes that take a write: every one
// whose method is not GET, read from routeList, with each wildcard
// filled in, so a route added later is covered without a change here.
func writeRoutes(d *Dashboard) map[string]string {
	out := map[string]string{}
	for _, rt := range d.routeList() {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			// A pattern without a method takes every method, writes too.
			method, path = "POST", rt.pattern
		}
		if method == http.MethodGet || method == http.MethodHead {
			continue
		}
		path = strings.ReplaceAll(path, "{$}", "")
		for strings.Contains(path, "{") {
			i := strings.IndexByte(path, '{')
			j := strings.IndexByte(path[i:], '}')
			path = path[:i] + "x1" + path[i+j+1:]
		}
		if strings.HasSuffix(path, "/") {
			path += "nope"
		}
		out[rt.pattern] = method + " " + path
	}
	return out
}

// Every write of the dashboard refuses a browser's request from another
// site, however the browser says so: a foreign Origin, Sec-Fetch-Site
// cross-site, or, from a browser that sends neither, a foreign Referer.
// The one write taken from elsewhere is the alert emails' stop link,
// whose credential is the token in its path (see alertsOff).
func TestEveryWriteRefusesOtherOrigins(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	routes := writeRoutes(d)
	if len(routes) < 40 {
		t.Fatalf("only %d write routes found: %v", len(routes), routes)
	}
	foreign := []struct {
		name   string
		header map[string]string
	}{
		{"foreign Origin", map[string]string{"Origin": "https://evil.example"}},
		{"foreign Origin, same name on another port", map[string]string{"Origin": "http://example.com:8443"}},
		{"Origin null", map[string]string{"Origin": "null"}},
		{"no Origin, foreign Referer", map[string]string{"Referer": "https://evil.example/page"}},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site"}},
	}
	send := func(methodPath string, header map[string]string) *httptest.ResponseRecorder {
		method, path, _ := strings.Cut(methodPath, " ")
		r := httptest.NewRequest(method, "http://example.com"+path, strings.NewReader("action=read"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		// Signed out, so that a write let through stops at the session
		// check rather than reach a service the fakes lack; a public
		// route's handler that does reach one stops at the recover.
		w := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }()
			d.ServeHTTP(w, r)
		}()
		return w
	}
	for pattern, methodPath := range routes {
		for _, f := range foreign {
			w := send(methodPath, f.header)
			refused := w.Code == http.StatusForbidden && strings.Contains(w.Body.String(), crossOriginRefusal)
			if pattern == alertsOffPost {
				if refused {
					t.Errorf("%s, %s: the stop link refused", pattern, f.name)
				}
				continue
			}
			if !refused {
				t.Errorf("%s (%s), %s: %d, not refused", pattern, methodPath, f.name, w.Code)
			}
		}
		// The same request from the dashboard's own pages is not taken
		// for one from elsewhere, so the refusals above are the check's.
		for _, own := range []map[string]string{
			{"Sec-Fetch-Site": "same-origin"},
			{"Origin": "http://example.com"},
			{"Referer": "http://example.com/app/"},
			{},
		} {
			if w := send(methodPath, own); strings.Contains(w.Body.String(), crossOriginRefusal) {
				t.Errorf("%s, own request %v refused", pattern, own)
			}
		}
	}
}
