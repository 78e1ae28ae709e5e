package dashboard

import (
	"strings"
	"testing"
	"time"
)

// Opening a test's address leads to the row's page whatever its id
// says: an id that decodes to dots, slashes and a backslash must not
// make the Location leave the dashboard ("/\evil.example" is
// "//evil.example" to a browser).
func TestTestAddressStaysOnTheDashboard(t *testing.T) {
	d := channelDashboard(t, &fakeChannels{}, 100, time.Now())
	for _, p := range []string{
		"/app/webhooks/..%2F..%2F%5Cevil.example/test",
		"/app/channels/x%2F..%2F..%2F..%2F%5Cevil.example/test",
		"/app/webhooks/h1/test",
	} {
		w := getAs(d, "a", p)
		loc := w.Header().Get("Location")
		if w.Code != 303 || !(strings.HasPrefix(loc, "/app/webhooks/") || strings.HasPrefix(loc, "/app/channels/")) {
			t.Errorf("%s: %d to %q, want 303 to the row's page", p, w.Code, loc)
		}
	}
}
