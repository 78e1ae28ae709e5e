package dashboard

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// FuzzFilter feeds the inbox's query string to the one parser of it: any
// input gives a query or an invalid_parameter error, never a panic, and
// the filter's own address parses back to the same filter.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"", "show=unread&platform=x&min_score=50", "min_score=abc", "before=1.5e12", "show=nope",
		"intent=buying&phrase=p1", "min_score=%00", "before=NaN", "platform=<script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		ff := parseFilter(q)
		if _, err := ff.query(); err != nil && !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("%q: %v", raw, err)
		}
		again := parseFilter(ff.values())
		again.Before = ff.Before
		if again != ff {
			t.Fatalf("%q: %+v became %+v", raw, ff, again)
		}
	})
}

// FuzzReturnTo checks that a return address from a form or a Referer
// never leaves the dashboard.
func FuzzReturnTo(f *testing.F) {
	for _, s := range []string{"/app/", "/app/?show=all", "//evil.example/app/", "https://evil.example/app/", "/app/\\evil", "/app/%0d%0a", "http://example.com/app/?x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []string{returnTo(s, "/app/"), referer(s)} {
			u, err := url.Parse(got)
			if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(got, "/app/") || strings.HasPrefix(got, "//") ||
				strings.ContainsAny(got, "\\\r\n") {
				t.Fatalf("%q gave %q", s, got)
			}
		}
	})
}

func referer(s string) string {
	r := httptest.NewRequest("POST", "http://example.com/app/matches/x", nil)
	r.Header.Set("Referer", s)
	return refererReturn(r)
}

// FuzzCursor checks the live stream's resume cursor (Last-Event-ID).
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"1700000000000000:1700000000000000", "0:0", ":", "-1:5", "1:2:3", "99999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseCursor(s)
		if !ok {
			return
		}
		back, ok := parseCursor(c.String())
		if !ok || !back.after.Equal(c.after) || !back.since.Equal(c.since) {
			t.Fatalf("%q: %v does not round-trip (%v)", s, c, back)
		}
	})
}
