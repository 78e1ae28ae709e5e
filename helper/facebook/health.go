package facebook

import (
	"html"
	"net/url"
	"regexp"
	"strings"

	"github.com/earshothq/earshot/helper"
)

// The issues facebook's answers name, as core/health spells them.
const (
	SessionExpired        = "session_expired"
	Checkpointed          = "checkpointed"
	ChallengeInterstitial = "challenge_interstitial"
	CaptchaHTML           = "captcha_html"
	RateLimited           = "rate_limited"
)

// codeBlocked is facebook's error code for "You're temporarily blocked"
// (going too fast), which core/health reads as rate_limited.
const codeBlocked = 368

// Health classifies what facebook answered a page read: the address the
// browser ended on, the document's status, and the start of its body.
// It returns the issue ("" when the answer is normal) and the signal
// that reports it through POST /account-status, built from what was
// seen so that the server's classifier (core/health.Classify) names the
// same issue.
//
// The address decides first, since facebook sends an account it stops
// to a page of its own (/checkpoint/, /login/); then the status; then
// the body, where a block or a captcha shows on a page whose address
// stayed put.
func Health(finalURL string, status int, head string) (string, helper.Signal) {
	issue, sig := classify(finalURL, status, head)
	// A block or a captcha can come with status 200: the signal still
	// says the answer was not the page asked for, so that the account's
	// pause applies.
	sig.Unusable = issue != ""
	return issue, sig
}

func classify(finalURL string, status int, head string) (string, helper.Signal) {
	head = head[:min(len(head), helper.MaxSignalBody)]
	path, query := "", ""
	if u, err := url.Parse(finalURL); err == nil {
		path = strings.ToLower(u.Path)
		query = strings.ToLower(strings.TrimSpace(u.Query().Get("q")))
	}
	// A search page repeats its phrase (its title, its configuration):
	// a phrase naming a captcha or a block is the owner's words, not
	// facebook's, here and in the body reported, which the server reads
	// for the same words.
	head = withoutPhrase(head, query)
	body := strings.ToLower(head)
	seen := helper.Signal{Status: status, Body: head}
	moved := helper.Signal{Status: status, Location: finalURL, Body: head}
	switch {
	case strings.HasPrefix(path, "/checkpoint"):
		return Checkpointed, moved
	case strings.Contains(path, "/challenge"):
		return ChallengeInterstitial, moved
	case strings.Contains(path, "captcha"):
		return CaptchaHTML, moved
	case status == 401 || strings.HasPrefix(path, "/login"):
		// A login wall is what a 401 is to a browser: the session sent
		// no longer opens the page. It is reported as that 401, since
		// core/health reads a /login address as logged_out (the
		// platform ended every session), which asks the owner to sign in
		// again where re-exporting the cookies is what helps.
		return SessionExpired, helper.Signal{Status: 401, Body: head}
	case status == 429:
		return RateLimited, seen
	case strings.Contains(body, "temporarily blocked"):
		return RateLimited, helper.Signal{Status: status, Code: codeBlocked, Body: head}
	case strings.Contains(body, "captcha"):
		return CaptchaHTML, seen
	}
	if status >= 200 && status < 300 {
		return "", helper.Signal{Status: status}
	}
	return "", seen
}

// withoutPhrase returns head without the phrase q, as written or
// escaped for HTML, in any case.
func withoutPhrase(head, q string) string {
	if q == "" {
		return head
	}
	re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(q) + "|" + regexp.QuoteMeta(html.EscapeString(q)))
	return re.ReplaceAllString(head, "")
}

// searchedPhrase is the phrase of a search page's address, "" for none.
func searchedPhrase(pageURL string) string {
	if u, err := url.Parse(pageURL); err == nil {
		return strings.TrimSpace(u.Query().Get("q"))
	}
	return ""
}

// codeLoginRequired is the error facebook's endpoints answer a request
// whose session no longer signs in, in the envelope the page's script
// reads before any data: for (;;);{"__ar":1,"error":1357001,
// "errorSummary":"Log in to continue",...}. It comes in an answer while
// the page's own address stays put, when the session ends mid-load.
const codeLoginRequired = 1357001

// answersHealth classifies what the answers a page received say about
// the account, as Health does the page's document: "" when none names an
// issue.
func answersHealth(answers [][]byte) (string, helper.Signal) {
	for _, a := range answers {
		login := false
		eachDocument(a, func(doc any) {
			if m, ok := doc.(map[string]any); ok && num(m["error"]) == codeLoginRequired {
				login = true
			}
		})
		if login {
			// Reported as the login wall is, for the same reason.
			return SessionExpired, helper.Signal{Status: 401, Body: string(a[:min(len(a), helper.MaxSignalBody)]), Unusable: true}
		}
	}
	return "", helper.Signal{}
}
