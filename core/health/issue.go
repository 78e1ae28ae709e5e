package health

import "strings"

// Issue is a normalised account problem, as stored in an account's
// lastIssue. The empty Issue means no problem (lastIssue null).
type Issue string

// None is the absence of an issue: lastIssue null.
const None Issue = ""

// The issue vocabulary. The first five are the names the legacy spec shows;
// the rest cover what facebook, x and reddit otherwise report about a
// session. New issues are only ever appended.
const (
	Checkpointed          Issue = "checkpointed"           // facebook identity checkpoint (subcode 459), x's /account/access
	ChallengeInterstitial Issue = "challenge_interstitial" // a challenge page stands in front of the content
	CaptchaHTML           Issue = "captcha_html"           // the answer was a captcha page instead of data
	RateLimited           Issue = "rate_limited"           // too many requests; clears by waiting
	SessionExpired        Issue = "session_expired"        // the stored cookies or token no longer work
	LoggedOut             Issue = "logged_out"             // the platform ended the session everywhere
	AccountLocked         Issue = "account_locked"         // the platform wants the owner to confirm identity
	AccountDisabled       Issue = "account_disabled"       // suspended or disabled; only an appeal helps
	IPBlocked             Issue = "ip_blocked"             // the server's address is blocked
	ProxyBlocked          Issue = "proxy_blocked"          // the configured proxy is blocked or refused
	GroupRemoved          Issue = "group_removed"          // removed or banned from a group or subreddit
	NotMember             Issue = "not_member"             // the community needs membership the account lacks
	NetworkError          Issue = "network_error"          // no usable answer: time-out, reset, 5xx
	Unknown               Issue = "unknown"                // a failure the detector could not name
)

// Issues lists the vocabulary in a stable order.
var Issues = []Issue{
	Checkpointed, ChallengeInterstitial, CaptchaHTML, RateLimited, SessionExpired,
	LoggedOut, AccountLocked, AccountDisabled, IPBlocked, ProxyBlocked,
	GroupRemoved, NotMember, NetworkError, Unknown,
}

// Info describes an issue for display: the issue-info object of a view.
type Info struct {
	Issue Issue
	// Title is a short headline.
	Title string
	// Remedy says what the user does about it, in one sentence.
	Remedy string
	// Transient issues clear on their own; they degrade an account without
	// demanding anything of the user.
	Transient bool
	// Resolvable issues are cleared by the resolve route once a human has
	// completed the challenge in a browser.
	Resolvable bool
	// State and Action are what the dashboard shows for a connected account
	// carrying the issue.
	State  State
	Action Action
}

// infos holds each issue's headline, remedy and action; the rest of its
// Info follows from the action (Describe).
var infos = map[Issue]Info{
	Checkpointed: {Title: "The platform wants to verify the account", Action: OpenChallenge,
		Remedy: "Open the challenge, complete the checkpoint in the browser, then mark it resolved."},
	ChallengeInterstitial: {Title: "A challenge page blocks the account", Action: OpenChallenge,
		Remedy: "Open the challenge, get past it in the browser, then mark it resolved."},
	CaptchaHTML: {Title: "The platform answered with a captcha", Action: OpenChallenge,
		Remedy: "Open the challenge, solve the captcha in the browser, then mark it resolved."},
	RateLimited: {Title: "Rate limited", Action: Wait,
		Remedy: "Nothing to do: reads resume once the platform's limit resets."},
	SessionExpired: {Title: "Session expired", Action: Reconnect,
		Remedy: "Re-export the cookies from a logged-in browser and reconnect the account."},
	LoggedOut: {Title: "Logged out", Action: LoginInBrowser,
		Remedy: "Log in to the platform in a browser, then reconnect the account."},
	AccountLocked: {Title: "Account locked", Action: LoginInBrowser,
		Remedy: "Log in to the platform in a browser and confirm your identity to unlock it."},
	AccountDisabled: {Title: "Account disabled", Action: Appeal,
		Remedy: "The platform disabled the account; appeal the decision from its help centre."},
	IPBlocked: {Title: "Address blocked", Action: UseProxy,
		Remedy: "The platform blocks this server's address; route the account through a proxy."},
	ProxyBlocked: {Title: "Proxy blocked", Action: UseProxy,
		Remedy: "The platform refuses the configured proxy; switch to another proxy."},
	GroupRemoved: {Title: "Removed from a community", Action: Rejoin,
		Remedy: "The account was removed from a group it listens in; ask to rejoin."},
	NotMember: {Title: "Not a member", Action: Rejoin,
		Remedy: "The community only shows posts to members; join it with this account."},
	NetworkError: {Title: "Network trouble", Action: Wait,
		Remedy: "Nothing to do: the next check retries."},
	// An unnamed failure has no known remedy; it degrades the account and
	// the next check either clears it or names it.
	Unknown: {Title: "Unrecognised problem", Action: NoAction,
		Remedy: "Nothing to do yet: the next check retries and names the problem if it persists."},
}

// Describe returns the display information of an issue. Issues outside the
// vocabulary are described as Unknown; None gives ok false.
//
// The action decides the rest: a challenge (open_challenge) is the one
// kind a human resolves; an issue to wait out is transient; both waiting
// and having nothing to do leave the account degraded, and every other
// action means the owner must act.
func Describe(issue Issue) (Info, bool) {
	if issue == None {
		return Info{}, false
	}
	if !issue.Known() {
		issue = Unknown
	}
	in := infos[issue]
	in.Issue = issue
	in.Resolvable = in.Action == OpenChallenge
	in.Transient = in.Action == Wait
	in.State = ActionRequired
	if in.Action == Wait || in.Action == NoAction {
		in.State = Degraded
	}
	return in, true
}

// Known reports whether issue is in the vocabulary.
func (i Issue) Known() bool {
	_, ok := infos[i]
	return ok
}

// Resolvable reports whether the issue is one of the three challenges a
// human clears in a browser: checkpointed, challenge_interstitial and
// captcha_html. Only these are ever cleared by the resolve route.
func (i Issue) Resolvable() bool { return infos[i].Action == OpenChallenge }

// aliases maps loose spellings seen in logs, detectors and older clients to
// the vocabulary. Keys are already lower case with '_' separators.
var aliases = map[string]Issue{
	"checkpoint": Checkpointed, "checkpoint_required": Checkpointed, "checkpointed": Checkpointed,
	"identity_checkpoint": Checkpointed, "459": Checkpointed,
	"challenge": ChallengeInterstitial, "challenge_required": ChallengeInterstitial,
	"interstitial": ChallengeInterstitial, "challenge_interstitial": ChallengeInterstitial,
	"captcha": CaptchaHTML, "captcha_html": CaptchaHTML, "recaptcha": CaptchaHTML, "hcaptcha": CaptchaHTML,
	"rate_limited": RateLimited, "rate_limit": RateLimited, "ratelimited": RateLimited, "throttled": RateLimited,
	"too_many_requests": RateLimited, "429": RateLimited,
	"session_expired": SessionExpired, "expired_session": SessionExpired, "token_expired": SessionExpired,
	"invalid_session": SessionExpired, "expired": SessionExpired, "190": SessionExpired, "401": SessionExpired,
	"logged_out": LoggedOut, "logout": LoggedOut, "login_required": LoggedOut, "not_logged_in": LoggedOut,
	"account_locked": AccountLocked, "locked": AccountLocked,
	"account_disabled": AccountDisabled, "disabled": AccountDisabled, "suspended": AccountDisabled,
	"account_suspended": AccountDisabled, "banned": AccountDisabled,
	"ip_blocked": IPBlocked, "blocked": IPBlocked, "ip_banned": IPBlocked,
	"proxy_blocked": ProxyBlocked, "proxy_error": ProxyBlocked, "407": ProxyBlocked,
	"group_removed": GroupRemoved, "removed_from_group": GroupRemoved, "kicked": GroupRemoved,
	"not_member": NotMember, "not_a_member": NotMember, "membership_required": NotMember, "private": NotMember,
	"network_error": NetworkError, "network": NetworkError, "timeout": NetworkError, "timed_out": NetworkError,
	"connection_reset": NetworkError, "connection_refused": NetworkError, "dns": NetworkError,
	"unknown": Unknown, "error": Unknown,
}

// noIssue are the spellings of "nothing wrong".
var noIssue = map[string]bool{"": true, "null": true, "none": true, "nil": true, "ok": true, "healthy": true, "resolved": true}

// ParseIssue normalises a raw issue string: case, surrounding space and the
// separators '-', ' ' and '.' are ignored, known aliases map to the
// vocabulary, spellings of "nothing" give None, and any other text gives
// Unknown so that a new failure never passes for a healthy account.
func ParseIssue(raw string) Issue {
	s := strings.ToLower(strings.TrimSpace(raw))
	s = strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(s)
	if noIssue[s] {
		return None
	}
	if is, ok := aliases[s]; ok {
		return is
	}
	return Unknown
}
