package facebook

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// FuzzHealth hands Health any address the browser ended on, status and
// start of a document, and answersHealth any GraphQL answer. Seeds are
// the pages facebook stops an account at (health_test.go's: /checkpoint/,
// /login/, a "temporarily blocked" page, a captcha), a search page whose
// phrase names a captcha, and the login-required envelope of facebook's
// endpoints (for (;;);{"__ar":1,"error":1357001,...}). Whatever comes, the
// signal's body is at most helper.MaxSignalBody bytes, an answer that
// names an issue is unusable and one that names none is not.
func FuzzHealth(f *testing.F) {
	f.Add("https://www.facebook.com/checkpoint/828281030927956/?next=x", 200, "<html>", []byte(nil))
	f.Add("https://www.facebook.com/login/?next=%2Fsearch%2Fposts%2F%3Fq%3Dacme", 200, "<html>", []byte(nil))
	f.Add("https://www.facebook.com/search/posts/?q=captcha+solver", 200, "<title>captcha solver - Search</title>", []byte(nil))
	f.Add("https://www.facebook.com/search/posts/?q=%ff", 200, "<html>", []byte(nil))
	f.Add("https://www.facebook.com/search/posts/?q=a", 200, "You're Temporarily Blocked", []byte(nil))
	f.Add("https://www.facebook.com/groups/1/", 429, strings.Repeat("x", helper.MaxSignalBody+10), []byte(`for (;;);{"__ar":1,"error":1357001,"errorSummary":"Log in to continue"}`))
	f.Add("%zz", 500, "", []byte(`{"error":1357001.0}{"error":"1357001"}`))
	f.Fuzz(func(t *testing.T, finalURL string, status int, head string, answer []byte) {
		issue, sig := Health(finalURL, status, head)
		if len(sig.Body) > helper.MaxSignalBody || sig.Unusable != (issue != "") {
			t.Fatalf("Health(%q, %d, %q) = %q, %+v", finalURL, status, head, issue, sig)
		}
		issue, sig = answersHealth([][]byte{answer})
		if len(sig.Body) > helper.MaxSignalBody || sig.Unusable != (issue != "") {
			t.Fatalf("answersHealth(%q) = %q, %+v", answer, issue, sig)
		}
		_ = searchedPhrase(finalURL)
	})
}
