package reddit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzRateHeaders hands the pacer any rate-limit headers of one of
// reddit's answers, and redirectedToSearch any redirect. Seeds are the
// headers reddit sends (docs/reddit.md: X-Ratelimit-Remaining as a float,
// X-Ratelimit-Reset in whole seconds, Retry-After in seconds or as an
// HTTP date) and hostile values. Whatever they say, the pacer holds no
// request back more than a day and a gap, and a slot within the wait it
// gives is booked.
func FuzzRateHeaders(f *testing.F) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	f.Add("599.0", "600", "", 302, "https://www.reddit.com/subreddits/search?q=x")
	f.Add("0.0", "412", "", 429, "")
	f.Add("0", "86400", "86401", 429, "")
	f.Add("1e-300", "86400", now.Add(25*time.Hour).Format(http.TimeFormat), 429, "")
	f.Add("NaN", "+Inf", "Thu, 01 Jan 2026 13:00:00 GMT", 200, "")
	f.Add("-1", "-1", "-1", 301, "/subreddits/search.json?q=x")
	f.Add("0.5", "1e2", " 30 ", 307, "%zz")
	f.Fuzz(func(t *testing.T, remaining, reset, retry string, status int, location string) {
		h := http.Header{}
		for k, v := range map[string]string{"X-Ratelimit-Remaining": remaining, "X-Ratelimit-Reset": reset, "Retry-After": retry} {
			if v != "" {
				h.Set(k, v)
			}
		}
		p := newPacer(60)
		p.observe(now, h)
		bound := now.Add(24*time.Hour + slowestGap)
		if p.blocked.After(bound) || p.next.After(bound) {
			t.Fatalf("%v: blocked until %v, next at %v", h, p.blocked, p.next)
		}
		wait, ok := p.reserve(now, 48*time.Hour)
		if !ok || wait < 0 || wait > 24*time.Hour+slowestGap {
			t.Fatalf("%v: wait %v, %v", h, wait, ok)
		}
		if until := p.refused(now, time.Minute); until.Before(now) || until.After(bound) {
			t.Fatalf("%v: refused until %v", h, until)
		}

		if status < 100 || status > 999 {
			return
		}
		rec := httptest.NewRecorder()
		if location != "" {
			rec.Header().Set("Location", location)
		}
		rec.WriteHeader(status)
		resp := rec.Result()
		resp.Request = httptest.NewRequest("GET", "https://www.reddit.com/r/golang/new.json", nil)
		if redirectedToSearch(resp) && (status < 300 || status > 399) {
			t.Fatalf("status %d read as a redirect", status)
		}
	})
}
