package health

import (
	"slices"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

// Signal is what a detector saw when it talked to a platform on behalf of an
// account: the HTTP answer, a platform error code and subcode when the body
// carried one, where a redirect pointed, and a slice of the body.
type Signal struct {
	Platform core.Platform
	// Status is the HTTP status; 0 when no answer arrived.
	Status int
	// Code and Subcode are the platform's error code and subcode
	// (facebook's error.code and error_subcode, x's errors[].code); 0 when
	// absent.
	Code    int
	Subcode int
	// Location is the redirect target, if any: where the platform sent
	// the request instead of answering it.
	Location string
	// Body is the start of the answer body; a few kilobytes are enough.
	Body string
	// NoResponse is set when the request failed before any answer: time-out,
	// refused or reset connection, DNS failure.
	NoResponse bool
	// ViaProxy is set when the request went through the configured proxy,
	// so a block is the proxy's rather than the server's address.
	ViaProxy bool
	// RetryAfter is the wait the platform named with a refusal (its
	// Retry-After, x's x-rate-limit-reset); 0 when it named none.
	RetryAfter time.Duration
}

// Classify normalises a signal to an issue, None when the answer was fine.
// The most specific evidence wins: a platform error code, then a subcode,
// then markers in the redirect or body, then the HTTP status. An address
// block seen through the proxy, by any evidence, is the proxy's.
func Classify(s Signal) Issue {
	is := byCode(s)
	if is == None {
		is = byMarkers(s)
	}
	if is == None {
		is = byStatus(s)
	}
	if is == IPBlocked && s.ViaProxy {
		return ProxyBlocked
	}
	return is
}

func byCode(s Signal) Issue {
	// Subcode 459 is facebook's checkpoint whatever code carries it.
	if s.Subcode == 459 {
		return Checkpointed
	}
	switch s.Platform {
	case core.Facebook:
		return facebookCode(s.Code, s.Subcode)
	case core.X:
		return xCode(s.Code)
	}
	return None
}

// facebookCode follows the Graph API's documented error codes.
func facebookCode(code, subcode int) Issue {
	switch code {
	case 190: // OAuthException: the session is no longer valid
		switch subcode {
		case 458: // the user removed the app: nothing to refresh
			return LoggedOut
		case 464: // unconfirmed user: the owner must log in and confirm
			return AccountLocked
		default: // 460 password changed, 463 expired, 467 invalid, 492 invalid session
			return SessionExpired
		}
	case 102: // API session
		return SessionExpired
	case 4, 17, 32, 613:
		return RateLimited
	case 368: // "temporarily blocked for going too fast": lifts by itself
		return RateLimited
	case 1, 2: // API unknown and API service: facebook's own trouble
		return NetworkError
	}
	if code >= 80001 && code <= 80014 { // business use-case rate limits
		return RateLimited
	}
	return None
}

// xCode follows x's v1.1 error codes, which its web answers still carry.
func xCode(code int) Issue {
	switch code {
	case 32, 215:
		return LoggedOut
	case 64:
		return AccountDisabled
	case 88, 185:
		return RateLimited
	case 89:
		return SessionExpired
	case 130, 131:
		return NetworkError
	case 326:
		return AccountLocked
	}
	return None
}

// marker is a piece of text that names an issue when it appears in a
// redirect target or a body.
type marker struct {
	text  string
	issue Issue
}

var locationMarkers = []marker{
	{"/checkpoint", Checkpointed},
	{"/challenge", ChallengeInterstitial},
	{"captcha", CaptchaHTML},
	{"/login", LoggedOut},
	{"/account/access", AccountLocked},
	{"/account/suspended", AccountDisabled},
}

// bodyMarkers are checked in order; the challenges come first because a
// challenge page often also mentions logging in.
var bodyMarkers = []marker{
	{"/checkpoint/", Checkpointed},
	{"g-recaptcha", CaptchaHTML},
	{"h-captcha", CaptchaHTML},
	{"captcha", CaptchaHTML},
	{"cf-chl", ChallengeInterstitial},
	{"challenge-platform", ChallengeInterstitial},
	{"just a moment...", ChallengeInterstitial},
	{"account has been disabled", AccountDisabled},
	{"account has been suspended", AccountDisabled},
	{"account is temporarily locked", AccountLocked},
	{"your account has been locked", AccountLocked},
	{"you've been blocked by network security", IPBlocked},
	{"\"reason\": \"banned\"", GroupRemoved},
	{"\"reason\":\"banned\"", GroupRemoved},
	{"\"reason\": \"private\"", NotMember},
	{"\"reason\":\"private\"", NotMember},
	{"you must be a member", NotMember},
	{"removed you from the group", GroupRemoved},
}

// xLocationMarkers are x's own redirect targets, read before the shared
// ones. x sends an account it has locked, or whose sign-in looked
// suspicious, to /account/access to verify its owner (Arkose's captcha,
// a code by email or phone) before it reads again: x's checkpoint, which
// the owner clears in a browser.
var xLocationMarkers = []marker{
	{"/account/access", Checkpointed},
}

func byMarkers(s Signal) Issue {
	if loc := strings.ToLower(s.Location); loc != "" {
		markers := locationMarkers
		if s.Platform == core.X {
			markers = append(slices.Clip(xLocationMarkers), locationMarkers...)
		}
		for _, m := range markers {
			if strings.Contains(loc, m.text) {
				return m.issue
			}
		}
	}
	if s.Body == "" {
		return None
	}
	body := strings.ToLower(s.Body)
	for _, m := range bodyMarkers {
		if strings.Contains(body, m.text) {
			return m.issue
		}
	}
	return None
}

func byStatus(s Signal) Issue {
	if s.NoResponse {
		return NetworkError
	}
	switch {
	case s.Location != "" && s.Status < 400:
		// Sent somewhere the markers do not name: not the answer asked
		// for, so not a healthy one either.
		return Unknown
	case s.Status == 0, s.Status < 400:
		return None
	case s.Status == 429:
		return RateLimited
	case s.Status == 401:
		return SessionExpired
	case s.Status == 407:
		return ProxyBlocked
	case s.Status == 403: // through the proxy, Classify makes it the proxy's
		return IPBlocked
	case s.Status == 408, s.Status >= 500:
		return NetworkError
	}
	return Unknown
}
