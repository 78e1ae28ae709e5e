package health

import (
	"strings"
	"testing"
)

func TestParseIssue(t *testing.T) {
	tests := []struct {
		raw  string
		want Issue
	}{
		{"", None},
		{"null", None},
		{"  None ", None},
		{"healthy", None},
		{"checkpointed", Checkpointed},
		{"Checkpoint", Checkpointed},
		{"checkpoint-required", Checkpointed},
		{"459", Checkpointed},
		{"challenge_interstitial", ChallengeInterstitial},
		{"Challenge Required", ChallengeInterstitial},
		{"captcha_html", CaptchaHTML},
		{"CAPTCHA", CaptchaHTML},
		{"rate_limited", RateLimited},
		{"rate-limit", RateLimited},
		{"Too Many Requests", RateLimited},
		{"429", RateLimited},
		{"session_expired", SessionExpired},
		{"token.expired", SessionExpired},
		{"logged_out", LoggedOut},
		{"login required", LoggedOut},
		{"account_locked", AccountLocked},
		{"suspended", AccountDisabled},
		{"account_disabled", AccountDisabled},
		{"ip_blocked", IPBlocked},
		{"proxy_blocked", ProxyBlocked},
		{"group_removed", GroupRemoved},
		{"not_member", NotMember},
		{"private", NotMember},
		{"timeout", NetworkError},
		{"network_error", NetworkError},
		{"unknown", Unknown},
		{"something new from facebook", Unknown},
	}
	for _, tt := range tests {
		if got := ParseIssue(tt.raw); got != tt.want {
			t.Errorf("ParseIssue(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestParseIssueIsIdempotentOverVocabulary(t *testing.T) {
	for _, is := range Issues {
		if got := ParseIssue(string(is)); got != is {
			t.Errorf("ParseIssue(%q) = %q", is, got)
		}
	}
}

func TestDescribe(t *testing.T) {
	if _, ok := Describe(None); ok {
		t.Fatal("Describe(None) reported an issue")
	}
	for _, is := range Issues {
		in, ok := Describe(is)
		switch {
		case !ok:
			t.Errorf("%s: not described", is)
		case in.Issue != is || in.Title == "" || in.Remedy == "" || in.State == "" || in.Action == "":
			t.Errorf("%s: incomplete info %+v", is, in)
		case in.Resolvable != is.Resolvable():
			t.Errorf("%s: Resolvable mismatch", is)
		}
	}
	in, ok := Describe(Issue("made_up"))
	if !ok || in.Issue != Unknown {
		t.Errorf("Describe(made_up) = %+v, %v; want unknown", in, ok)
	}
}

func TestResolvable(t *testing.T) {
	want := map[Issue]bool{Checkpointed: true, ChallengeInterstitial: true, CaptchaHTML: true}
	for _, is := range append(Issues, None) {
		if got := is.Resolvable(); got != want[is] {
			t.Errorf("%q.Resolvable() = %v", is, got)
		}
	}
}

// An x account sent to /account/access is checkpointed too (and subcode
// 459 is a checkpoint on any platform): the words shown for it must not
// say Facebook.
func TestCheckpointNamesNoPlatform(t *testing.T) {
	is := Classify(Signal{Platform: "x", Status: 302, Location: "https://x.com/account/access"})
	if is != Checkpointed {
		t.Fatalf("x's /account/access = %q, want %q", is, Checkpointed)
	}
	in, _ := Describe(is)
	for _, s := range []string{in.Title, in.Remedy} {
		if strings.Contains(strings.ToLower(s), "facebook") {
			t.Fatalf("a checkpoint on x is described as %q", s)
		}
	}
}
