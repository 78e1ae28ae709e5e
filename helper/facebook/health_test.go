package facebook

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

func TestHealth(t *testing.T) {
	const base = "https://www.facebook.com"
	cases := []struct {
		name, url string
		status    int
		head      string
		want      string
	}{
		{"results", base + "/search/posts/?q=acme", 200, "<!DOCTYPE html><html id=\"facebook\">", ""},
		{"login redirect", base + "/login/?next=https%3A%2F%2Fwww.facebook.com%2Fsearch%2Fposts%2F", 200, "<title>Log in to Facebook</title>", SessionExpired},
		{"login.php", base + "/login.php", 200, "", SessionExpired},
		{"401", base + "/search/posts/?q=acme", 401, "", SessionExpired},
		{"checkpoint", base + "/checkpoint/828281030927956/?next=%2F", 200, "<title>Confirm your identity</title>", Checkpointed},
		{"checkpoint beats a login link", base + "/checkpoint/block/", 200, "<a href=\"/login/\">Log in</a>", Checkpointed},
		{"challenge interstitial", base + "/challenge/?source=search", 200, "", ChallengeInterstitial},
		{"captcha page", base + "/captcha/tfbcaptcha/?next=%2F", 200, "", CaptchaHTML},
		{"captcha in the body", base + "/search/posts/?q=acme", 200, "<div id=\"captcha\">Enter the characters you see</div>", CaptchaHTML},
		{"429", base + "/search/posts/?q=acme", 429, "", RateLimited},
		{"temporarily blocked", base + "/search/posts/?q=acme", 200, "<h2>You’re Temporarily Blocked</h2><p>It looks like you were misusing this feature by going too fast.</p>", RateLimited},
		{"the phrase in the page", base + "/search/posts/?q=Captcha+Solver", 200, "<title>captcha solver - Search | Facebook</title>", ""},
		{"captcha beside the phrase", base + "/search/posts/?q=acme", 200, "<title>acme</title><div id=\"captcha\">", CaptchaHTML},
		{"server error is no account issue", base + "/search/posts/?q=acme", 500, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			issue, sig := Health(c.url, c.status, c.head)
			if issue != c.want {
				t.Fatalf("issue %q, want %q", issue, c.want)
			}
			// The server names the same issue from the signal reported.
			server := health.Classify(health.Signal{Platform: core.Facebook, Status: sig.Status, Code: sig.Code,
				Subcode: sig.Subcode, Location: sig.Location, Body: sig.Body})
			want := health.Issue(c.want)
			if c.status >= 500 {
				want = health.NetworkError
			}
			if server != want {
				t.Errorf("the server classifies the signal %+v as %q, want %q", sig, server, want)
			}
			if (issue == "" && c.status < 300) != sig.OK() {
				t.Errorf("signal OK %t for issue %q", sig.OK(), issue)
			}
		})
	}
}

func TestHealthBoundsTheBody(t *testing.T) {
	_, sig := Health("https://www.facebook.com/checkpoint/", 200, strings.Repeat("x", 20<<10))
	if len(sig.Body) > 8<<10 {
		t.Fatalf("body of %d bytes", len(sig.Body))
	}
}
