package x

import (
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
)

// FuzzClassify hands classify any page a search could see: the
// document's address, status and HTML, and one SearchTimeline answer with
// its status, body and rate-limit headers. Seeds are testdata/'s answer
// (its shape in testdata/README.md), x's login wall and account-access
// addresses, an Arkose challenge page and the 429 of x's API with
// x-rate-limit-reset (a Unix time) and Retry-After (seconds). Whatever
// comes, the signal's body is at most helper.MaxSignalBody bytes, the
// wait x named is 0 to a day, and a signal that is not OK carries no
// posts.
func FuzzClassify(f *testing.F) {
	search, err := os.ReadFile("testdata/search_timeline.json")
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reset := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	f.Add("https://x.com/search?q=acme&f=live", 200, []byte("<html></html>"), 200, search, "", "")
	f.Add("https://x.com/i/flow/login?redirect_after_login=%2Fsearch", 200, []byte("<html>"), 0, []byte(nil), "", "")
	f.Add("https://x.com/account/access", 200, []byte(`<script src="https://client-api.arkoselabs.com/"></script>`), 0, []byte(nil), "", "")
	f.Add("https://x.com/search?q=a", 200, []byte("<html>"), 429, []byte(`{"errors":[{"code":88,"message":"Rate limit exceeded"}]}`), reset(15*time.Minute), "")
	f.Add("https://x.com/search?q=a", 200, []byte("<html>"), 429, []byte(`{}`), "", "900")
	f.Add("https://x.com/search?q=a", 200, []byte("<html>"), 429, []byte(`{}`), "99999999999999", "18446744074")
	f.Add("https://x.com/search?q=a", 503, []byte("<html>over capacity"), 0, []byte(nil), "", "9223372036854775807")
	f.Add("https://x.com/search?q=a", 200, []byte("captcha"), 200, []byte(`{"errors":[{"code":326}]}`), "-1", "-5")
	f.Add("%zz", 0, []byte{}, 200, []byte(`[]`), "", "")
	f.Fuzz(func(t *testing.T, pageURL string, status int, doc []byte, answerStatus int, body []byte, xReset, retryAfter string) {
		h := http.Header{}
		if xReset != "" {
			h.Set("x-rate-limit-reset", xReset)
		}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		p := &browser.Page{URL: pageURL, Status: status, Header: h, Document: doc}
		if answerStatus != 0 {
			p.Answers = []browser.Answer{{URL: "https://x.com/i/api/graphql/q/SearchTimeline", Status: answerStatus, Header: h, Body: body}}
		}
		sig, wait, tweets := classify(p, now)
		if len(sig.Body) > helper.MaxSignalBody {
			t.Fatalf("signal body of %d bytes", len(sig.Body))
		}
		if wait < 0 || wait > maxNamedWait {
			t.Fatalf("x-rate-limit-reset %q, Retry-After %q: wait %v", xReset, retryAfter, wait)
		}
		if !sig.OK() && len(tweets) > 0 {
			t.Fatalf("signal %+v with %d posts", sig, len(tweets))
		}
		_ = describe(sig)
	})
}
