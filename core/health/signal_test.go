package health

import (
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestClassify(t *testing.T) {
	fb, x, rd := core.Facebook, core.X, core.Reddit
	tests := []struct {
		name string
		sig  Signal
		want Issue
	}{
		{"ok answer", Signal{Platform: fb, Status: 200}, None},
		{"nothing known", Signal{}, None},
		{"fb checkpoint 190/459", Signal{Platform: fb, Status: 400, Code: 190, Subcode: 459}, Checkpointed},
		{"checkpoint subcode alone", Signal{Platform: fb, Subcode: 459}, Checkpointed},
		{"fb password changed 190/460", Signal{Platform: fb, Status: 400, Code: 190, Subcode: 460}, SessionExpired},
		{"fb token expired 190/463", Signal{Platform: fb, Code: 190, Subcode: 463}, SessionExpired},
		{"fb 190 without subcode", Signal{Platform: fb, Code: 190}, SessionExpired},
		{"fb app removed 190/458", Signal{Platform: fb, Code: 190, Subcode: 458}, LoggedOut},
		{"fb unconfirmed 190/464", Signal{Platform: fb, Code: 190, Subcode: 464}, AccountLocked},
		{"fb user rate limit 17", Signal{Platform: fb, Status: 400, Code: 17}, RateLimited},
		{"fb app rate limit 4", Signal{Platform: fb, Code: 4}, RateLimited},
		{"fb temporarily blocked 368", Signal{Platform: fb, Code: 368}, RateLimited},
		{"fb business limit 80004", Signal{Platform: fb, Code: 80004}, RateLimited},
		{"fb service trouble 2", Signal{Platform: fb, Code: 2}, NetworkError},
		{"x rate limit 88", Signal{Platform: x, Status: 429, Code: 88}, RateLimited},
		{"x suspended 64", Signal{Platform: x, Status: 403, Code: 64}, AccountDisabled},
		{"x locked 326", Signal{Platform: x, Status: 403, Code: 326}, AccountLocked},
		{"x expired token 89", Signal{Platform: x, Code: 89}, SessionExpired},
		{"x bad auth 32", Signal{Platform: x, Status: 401, Code: 32}, LoggedOut},
		{"redirect to checkpoint", Signal{Platform: fb, Status: 302, Location: "https://www.facebook.com/checkpoint/1501092823525282/"}, Checkpointed},
		{"redirect to login", Signal{Platform: fb, Status: 302, Location: "https://www.facebook.com/login/?next=%2Fgroups"}, LoggedOut},
		// x sends a locked account, or one whose sign-in looked suspicious,
		// to /account/access to verify the owner: x's checkpoint.
		{"x redirect to access", Signal{Platform: x, Status: 302, Location: "https://x.com/account/access"}, Checkpointed},
		{"x page moved to access", Signal{Platform: x, Status: 200, Location: "https://x.com/account/access?lang=en"}, Checkpointed},
		// A redirect the markers do not name is no answer to what was
		// asked: the helper reports it because it could not read, and it
		// must not pass for a healthy account.
		{"redirect elsewhere", Signal{Platform: rd, Status: 302, Location: "https://www.reddit.com/r/somewhere/over18/?dest=x"}, Unknown},
		{"x page moved elsewhere", Signal{Platform: x, Status: 200, Location: "https://x.com/home"}, Unknown},
		{"access elsewhere is a lock", Signal{Platform: fb, Status: 302, Location: "https://www.facebook.com/account/access"}, AccountLocked},
		{"captcha page", Signal{Platform: rd, Status: 200, Body: `<div class="g-recaptcha" data-sitekey="...">`}, CaptchaHTML},
		{"challenge page", Signal{Platform: x, Status: 403, Body: "<title>Just a moment...</title>"}, ChallengeInterstitial},
		{"reddit private", Signal{Platform: rd, Status: 403, Body: `{"reason": "private", "message": "Forbidden"}`}, NotMember},
		{"reddit banned", Signal{Platform: rd, Status: 403, Body: `{"reason":"banned"}`}, GroupRemoved},
		{"http 429", Signal{Platform: rd, Status: 429}, RateLimited},
		{"http 401", Signal{Platform: rd, Status: 401}, SessionExpired},
		{"http 403 direct", Signal{Platform: rd, Status: 403, Body: "<html>blocked</html>"}, IPBlocked},
		{"http 403 via proxy", Signal{Platform: rd, Status: 403, ViaProxy: true}, ProxyBlocked},
		{"http 407", Signal{Platform: rd, Status: 407}, ProxyBlocked},
		// A block page names the address it blocks: through the proxy,
		// that is the proxy's, and routing through a proxy is no remedy.
		{"block page direct", Signal{Platform: rd, Status: 403, Body: "<h1>You've been blocked by network security.</h1>"}, IPBlocked},
		{"block page via proxy", Signal{Platform: rd, Status: 403, ViaProxy: true, Body: "<h1>You've been blocked by network security.</h1>"}, ProxyBlocked},
		{"http 503", Signal{Platform: x, Status: 503}, NetworkError},
		{"time-out", Signal{Platform: x, NoResponse: true}, NetworkError},
		{"http 418", Signal{Platform: x, Status: 418}, Unknown},
		{"unknown fb code on 400", Signal{Platform: fb, Status: 400, Code: 100}, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.sig); got != tt.want {
				t.Errorf("Classify(%+v) = %q, want %q", tt.sig, got, tt.want)
			}
		})
	}
}
