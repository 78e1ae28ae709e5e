package reddit

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// FuzzRefusal hands the reader's refusal checks any answer of reddit:
// status, Location, body and rate-limit headers, and the read marks the
// helper's state file keeps. Seeds are reddit's answers as docs/reddit.md
// (Decisions) quotes them (`{"reason": "private", ...}` with a 403, a
// banned community's 404, the redirect to /subreddits/search, a 451) and
// its headers (X-Ratelimit-Remaining a float, X-Ratelimit-Reset and
// Retry-After whole seconds), and the marks' JSON. A refusal of the
// community names a reason; the waits are 0 to a day; marks kept are
// those of the names read, each after 1970.
func FuzzRefusal(f *testing.F) {
	f.Add(403, "", []byte(`{"reason": "private", "message": "Forbidden", "error": 403}`), "0.0", "412", "", `{"golang":1767225600.5,"saas":0}`)
	f.Add(404, "", []byte(`{"reason": "banned", "message": "Not Found", "error": 404}`), "599.0", "600", "30", `{"golang":-1}`)
	f.Add(302, "https://www.reddit.com/subreddits/search?q=x", []byte(nil), "", "", "9223372036854775807", `[]`)
	f.Add(451, "", []byte("<html>unavailable</html>"), "0", "99999999999999999999", "", `{"golang":1e400}`)
	f.Add(403, "%zz", []byte("<html>blocked</html>"), "NaN", "-5", " 7 ", `{"":1,"golang":"x"}`)
	f.Fuzz(func(t *testing.T, status int, location string, body []byte, remaining, reset, retry, marks string) {
		reason, closed := communityRefusal(status, location, body)
		if closed != (reason != "") {
			t.Fatalf("communityRefusal(%d, %q, %q) = %q, %v", status, location, body, reason, closed)
		}
		h := http.Header{}
		for k, v := range map[string]string{"X-Ratelimit-Remaining": remaining, "X-Ratelimit-Reset": reset, "Retry-After": retry} {
			if v != "" {
				h.Set(k, v)
			}
		}
		if w := waitNamed(h); w < 0 || w > maxNamedWait {
			t.Fatalf("waitNamed(%v) = %v", h, w)
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		r := &Reader{Now: func() time.Time { return now }}
		r.obeyBudget(h)
		if r.next.After(now.Add(maxNamedWait)) {
			t.Fatalf("obeyBudget(%v) holds back until %v", h, r.next)
		}
		names := []string{"golang", "saas"}
		for c, at := range readMarks(marks, names) {
			if !slices.Contains(names, c) || !(at > 0) {
				t.Fatalf("readMarks(%q) kept %q: %v", marks, c, at)
			}
		}
	})
}
