package dashboard

import (
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// FuzzForms posts any body to every parser of a posted form: an
// unreadable body is one invalid_parameter; a readable one gives each
// form or an invalid_parameter error, never a panic, and what a parser
// accepts keeps its promises (a known action, known scopes once each, a
// return address inside the dashboard, trimmed text).
func FuzzForms(f *testing.F) {
	for _, s := range []string{"", "name=ci&scope=read&scope=webhooks", "scope=admin", "id=m1&id=m2&action=archive&return=/app/%3Fshow%3Dall",
		"action=read&return=//evil.example/", "platform=reddit&phrase=acme&community=SaaS", "email=+a%40b.c+",
		"url=https://h.example/x&min_score=70&platform=x&platform=facebook", "min_score=1e3", "active=true", "active=%00",
		"name=%zz", "a=1;b=2", "platform=%ff%fe&phrase=%e2%80%ae",
		"exclude=jobs%0Ahiring&require=&exclude_authors=%40bot&exclude_communities=r%2Fjobs&min_likes=3&min_comments=x&title_only=1",
		"min_likes=99999999999999999999&exclude=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/app/x", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		form, err := readForm(r)
		if err != nil {
			if !core.IsKind(err, core.KindInvalid) || form != nil {
				t.Fatalf("%q: %v, %v", body, form, err)
			}
			return
		}
		invalid := func(what string, err error) bool {
			if err != nil && !core.IsKind(err, core.KindInvalid) {
				t.Fatalf("%s of %q: %v", what, body, err)
			}
			return err != nil
		}

		if b, err := parseBulk(form); !invalid("bulk", err) {
			c, ok := triageChange(b.Action)
			if !ok || !reflect.DeepEqual(c, b.Change) || len(b.IDs) == 0 || returnTo(b.Return, "") != b.Return {
				t.Fatalf("bulk of %q: %+v", body, b)
			}
		}
		for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
			k, err := parseKey(form, kind)
			if invalid("key", err) {
				if kind != core.APIKey {
					t.Fatalf("ingest key form of %q refused: %v", body, err)
				}
				continue
			}
			if k.Name != strings.TrimSpace(k.Name) || (kind == core.IngestKey && k.Scopes != nil) {
				t.Fatalf("%s key of %q: %+v", kind, body, k)
			}
			for i, sc := range k.Scopes {
				if !sc.Valid() || slices.Contains(k.Scopes[:i], sc) {
					t.Fatalf("scopes of %q: %v", body, k.Scopes)
				}
			}
		}
		p := parsePhrase(form)
		if _, err := core.NewPhrase("o", p.Phrase, p.Platform, p.Community); err != nil {
			if field := p.field(err); field != "platform" && field != "phrase" && field != "community" {
				t.Fatalf("phrase of %q: refusal beside %q", body, field)
			}
		}
		if fs, err := parseFilters(form).filters(); invalid("filters", err) {
			if filterField(err) == "" {
				t.Fatalf("filters of %q: refusal %v beside no field", body, err)
			}
		} else if _, err := core.NewPhraseFilters(fs); err != nil && (!core.IsKind(err, core.KindInvalid) || filterField(err) == "") {
			t.Fatalf("filters of %q: refusal %v beside no field", body, err)
		}
		if l := parseLogin(form); l.Email != strings.TrimSpace(l.Email) {
			t.Fatalf("login of %q: %q", body, l.Email)
		}
		w := parseWebhook(form)
		if n, err := w.minScore(); !invalid("min_score", err) && (n == nil) != (w.MinScore == "") {
			t.Fatalf("min_score of %q: %v", body, n)
		}
		if w.platforms() == nil {
			t.Fatalf("platforms of %q: nil", body)
		}
		for _, withURL := range []bool{true, false} {
			field := w.field(core.Errorf(core.KindInvalid, "refused"), withURL)
			if !slices.Contains([]string{"url", "min_score", "platforms"}, field) || (!withURL && field == "url") {
				t.Fatalf("webhook of %q (url %v): refusal beside %q", body, withURL, field)
			}
		}
		if on, err := parseActive(form); !invalid("active", err) && strconv.FormatBool(on) != form.Get("active") {
			t.Fatalf("active of %q: %v", body, on)
		}
	})
}

// FuzzStartCursor reads where a live stream starts from its address and
// Last-Event-ID: any input gives a cursor, and never one whose since is
// unset (the stream would send every score again).
func FuzzStartCursor(f *testing.F) {
	for _, s := range [][2]string{{"after=1700000000000&since=1", ""}, {"after=-5&since=x", ""}, {"after=NaN&since=0", "1:2"},
		{"after=1e400", "::"}, {"after=99999999999999999999", "-1:1"}} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, query, lastID string) {
		r := httptest.NewRequest("GET", "/app/events", nil)
		r.URL.RawQuery = query
		r.Header.Set("Last-Event-ID", lastID)
		c := startCursor(r, now)
		if _, resumed := parseCursor(lastID); !resumed && c.since.IsZero() {
			t.Fatalf("%q %q: %+v", query, lastID, c)
		}
		if !c.after.IsZero() && c.after.Before(time.Unix(0, 0)) {
			t.Fatalf("%q %q: after %v", query, lastID, c.after)
		}
	})
}
