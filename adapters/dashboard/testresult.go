package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testCookieName carries a test's outcome from its POST to the row's
// page it redirects to, so that a reload of that page shows the outcome
// again and sends nothing. It is a cookie, not the address, so the page
// keeps its own address (bookmarks, history, the ids tests read from
// it). On an https site it is "__Host-" + testCookieName.
const testCookieName = "earshot_test"

// testShownFor is how long after a test its outcome is shown: long
// enough for the redirect and a reload, short enough that a later visit
// does not show an old answer as news.
const testShownFor = 2 * time.Minute

// maxTestError bounds the receiver's words the cookie carries, in bytes;
// the senders keep theirs shorter (no answer body), so this only guards
// the cookie's size.
const maxTestError = 1000

func (d *Dashboard) testCookie() (name, path string) { return d.shortCookie(testCookieName) }

// testMAC signs a test's outcome for the row page at path with the
// session's token: only this session's browser holds it, so no other
// site, subdomain or owner can make a page show an outcome, and one
// row's outcome is not shown on another's page.
func testMAC(token, path, payload string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("earshot test outcome\x00" + path + "\x00" + payload))
	return m.Sum(nil)
}

// setTestOutcome keeps res, the answer to a test of the row page at
// path, for that page to show.
func (d *Dashboard) setTestOutcome(w http.ResponseWriter, r *http.Request, path string, res ports.WebhookResult) {
	c, err := d.readCookie(r)
	if err != nil {
		return
	}
	payload := strings.Join([]string{path, strconv.FormatInt(d.cfg.Now().Unix(), 10), strconv.Itoa(res.Status),
		strconv.FormatInt(res.Duration.Milliseconds(), 10), core.Cut(strings.ToValidUTF8(res.Error, "\uFFFD"), maxTestError)}, "\x00")
	value := base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." +
		base64.RawURLEncoding.EncodeToString(testMAC(c.Value, path, payload))
	name, cpath := d.testCookie()
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: cpath, MaxAge: int(testShownFor / time.Second),
		HttpOnly: true, Secure: d.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
}

// testOutcome returns the outcome setTestOutcome kept for the row page
// at path, in this session and lately; nil otherwise.
func (d *Dashboard) testOutcome(r *http.Request, path string) *testView {
	name, _ := d.testCookie()
	tc, err := r.Cookie(name)
	if err != nil {
		return nil
	}
	sc, err := d.readCookie(r)
	if err != nil {
		return nil
	}
	enc, sig, ok := strings.Cut(tc.Value, ".")
	if !ok {
		return nil
	}
	b, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	payload := string(b)
	if err1 != nil || err2 != nil || !utf8.ValidString(payload) || !hmac.Equal(mac, testMAC(sc.Value, path, payload)) {
		return nil
	}
	f := strings.SplitN(payload, "\x00", 5)
	if len(f) != 5 || f[0] != path {
		return nil
	}
	at, err1 := strconv.ParseInt(f[1], 10, 64)
	status, err2 := strconv.Atoi(f[2])
	ms, err3 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	if age := d.cfg.Now().Sub(time.Unix(at, 0)); age < 0 || age > testShownFor {
		return nil
	}
	res := ports.WebhookResult{Status: status, Error: f[4], Duration: time.Duration(ms) * time.Millisecond}
	return &testView{OK: res.Delivered(), Status: res.Status, Error: res.Error, Took: res.Duration.Round(time.Millisecond).String()}
}

// testPage sends the address of a test, opened again from a bookmark or
// an old history entry, to the row's page: the test is a POST, and
// opening its address sends nothing. The id is not checked here, so it
// goes back escaped: decoded, its slashes and dots would be cleaned
// into a Location off the dashboard ("/\evil.example").
func (p rowPage) testPage(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, p.path+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}
