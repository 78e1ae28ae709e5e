package dashboard

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// FuzzShortCookies hands the dashboard's short-lived cookies, which a
// browser sends back as it likes, any value: the flash that names what
// was deleted and a test's signed outcome. Seeds are the values the
// dashboard writes itself (flash.go, testresult.go) and altered ones.
// What the dashboard wrote reads back as it was (a flash within
// maxFlash bytes of UTF-8; a test's status and error, the error cut to
// maxTestError); any other value names nothing but valid UTF-8 within
// maxFlash bytes, and shows no test outcome, having no valid signature.
func FuzzShortCookies(f *testing.F) {
	f.Add("webhook https://hooks.example.com/x", "d2ViaG9vaw", 404, "slack: the channel was deleted (channel_not_found), http 404")
	f.Add("", "", 0, "")
	f.Add("\xff", "_w", 200, "\xff\x00a")
	f.Add(strings.Repeat("é", maxFlash), "bm9.bm9", -1, strings.Repeat("x", 1000))
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	token := "a" + strings.Repeat("t", 42)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }},
		Deps{Sessions: ownerSessions{owners: map[string]string{token: "a"}}, Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}})
	if err != nil {
		f.Fatal(err)
	}
	const path = "/app/channels/c1"
	request := func(cookies ...string) *http.Request {
		r := httptest.NewRequest("GET", path, nil)
		name, _ := d.sessionCookie()
		r.Header.Add("Cookie", name+"="+token)
		for _, c := range cookies {
			r.Header.Add("Cookie", c)
		}
		return r
	}
	f.Fuzz(func(t *testing.T, subject, value string, status int, errText string) {
		flash, _ := d.flashCookie()
		test, _ := d.testCookie()

		w := httptest.NewRecorder()
		d.setDeleted(w, subject)
		var sent []string
		for _, c := range w.Result().Cookies() {
			sent = append(sent, c.Name+"="+c.Value)
		}
		got := d.takeDeleted(httptest.NewRecorder(), request(sent...))
		if got != subject && (subject != "" && len(subject) <= maxFlash && utf8.ValidString(subject)) {
			t.Fatalf("flash %q read back as %q", subject, got)
		}

		w = httptest.NewRecorder()
		res := ports.WebhookResult{Status: status, Error: errText, Duration: 1500 * time.Millisecond}
		d.setTestOutcome(w, request(), path, res)
		sent = sent[:0]
		for _, c := range w.Result().Cookies() {
			sent = append(sent, c.Name+"="+c.Value)
		}
		v := d.testOutcome(request(sent...), path)
		if v == nil || v.Status != status || v.Error != core.Cut(strings.ToValidUTF8(errText, "\uFFFD"), maxTestError) {
			t.Fatalf("test outcome %+v read back as %+v", res, v)
		}

		if strings.ContainsAny(value, "\r\n\x00") {
			return
		}
		if got := d.takeDeleted(httptest.NewRecorder(), request(flash+"="+value)); len(got) > maxFlash || !utf8.ValidString(got) {
			t.Fatalf("flash cookie %q names %q", value, got)
		}
		if v := d.testOutcome(request(test+"="+value), path); v != nil && !strings.Contains(strings.Join(sent, ";"), value) {
			t.Fatalf("test cookie %q shows %+v", value, v)
		}
	})
}
