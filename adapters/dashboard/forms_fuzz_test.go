package dashboard

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// FuzzChannelForms posts any body to the parsers FuzzForms leaves out:
// a channel's add and settings forms, a secret's rotation overlap and a
// replay's range (seeds are the forms templates/channels.html and
// templates/webhooks.html post). A parser takes the form or refuses it
// with KindInvalid naming one of its own fields; an overlap is clamped
// to the service's bound plus one; a replay's times written back in the
// field's layout read the same.
func FuzzChannelForms(f *testing.F) {
	for _, s := range []string{
		"kind=telegram&token=123%3Aabc&chat_id=-100123&min_score=70&platform=reddit&frequency=daily&hour=9&zone=Europe%2FBerlin",
		"kind=ntfy&url=https%3A%2F%2Fntfy.sh%2Ft&no_token=on&min_score=", "min_score=1e3&hour=x", "hour=99999999999999999999",
		"overlap=3600", "overlap=-5", "overlap=9223372036854775807", "overlap=1.5",
		"from=2026-11-26T10:00&to=2026-11-27T10:00:05", "from=2026-02-30T10:00", "from=%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		for _, scoreRequired := range []bool{false, true} {
			in, err := readChannel(form, scoreRequired)
			if err != nil {
				if !core.IsKind(err, core.KindInvalid) || !slices.Contains([]string{"min_score", "hour"}, channelField(err)) {
					t.Fatalf("readChannel(%q): %v names %q", body, err, channelField(err))
				}
				continue
			}
			if in.platforms == nil || scoreRequired && in.minScore == nil {
				t.Fatalf("readChannel(%q) = %+v", body, in)
			}
		}
		d, err := parseOverlap(form)
		if err != nil && !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("parseOverlap(%q): %v", body, err)
		}
		if d != nil && (*d < -time.Second || *d > core.MaxSecretOverlap+time.Second) {
			t.Fatalf("parseOverlap(%q) = %v", body, *d)
		}
		rf := parseReplay(form)
		from, to, err := rf.times()
		if err != nil {
			if field := rf.field(err); field != "from" && field != "to" {
				t.Fatalf("replay %q: %v names %q", body, err, field)
			}
			return
		}
		for _, tm := range []time.Time{from, to} {
			if tm.IsZero() {
				continue
			}
			back, err := time.ParseInLocation(replayLayouts[1], tm.Format(replayLayouts[1]), time.UTC)
			if err != nil || !back.Equal(tm) {
				t.Fatalf("replay %q: %v written back reads %v, %v", body, tm, back, err)
			}
		}
	})
}

// FuzzJarForm uploads any cookie file and paste to the accounts page's
// form, as a multipart upload (the file field) or a plain form (the
// paste), through the middleware's bound on a body. The seeds are the
// two export formats core.ParseCookieJar reads (a browser extension's
// JSON and the Netscape cookies.txt). The form gives a jar no longer
// than one byte past core.MaxCookieJar for a file, and never longer than
// the body, or a KindInvalid refusal.
func FuzzJarForm(f *testing.F) {
	f.Add([]byte(`[{"domain":".reddit.com","name":"reddit_session","value":"v","path":"/","secure":true,"expirationDate":1767225600}]`), "", true)
	f.Add([]byte("# Netscape HTTP Cookie File\n.x.com\tTRUE\t/\tTRUE\t1767225600\tauth_token\tv\n"), "", true)
	f.Add([]byte{}, "  # Netscape HTTP Cookie File\n", false)
	f.Add([]byte{}, "", true)
	f.Add(bytes.Repeat([]byte("a"), core.MaxCookieJar+2), "paste", true)
	f.Fuzz(func(t *testing.T, file []byte, paste string, multi bool) {
		var body bytes.Buffer
		contentType := "application/x-www-form-urlencoded"
		if multi {
			mw := multipart.NewWriter(&body)
			if len(file) > 0 {
				fw, err := mw.CreateFormFile("file", "cookies.txt")
				if err != nil {
					t.Fatal(err)
				}
				_, _ = fw.Write(file)
			}
			_ = mw.WriteField("paste", paste)
			_ = mw.Close()
			contentType = mw.FormDataContentType()
		} else {
			body.WriteString(url.Values{"paste": {paste}}.Encode())
		}
		size := body.Len()
		r := httptest.NewRequest("POST", "/app/accounts/reddit/jar", &body)
		r.Header.Set("Content-Type", contentType)
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxJarForm)
		jar, err := readJarForm(r)
		if err != nil {
			if !core.IsKind(err, core.KindInvalid) {
				t.Fatalf("readJarForm: %v", err)
			}
			return
		}
		if len(jar) == 0 || len(jar) > size || len(jar) > maxJarForm {
			t.Fatalf("readJarForm gave %d bytes of a %d-byte body", len(jar), size)
		}
		if multi && len(file) > 0 && len(jar) > core.MaxCookieJar+1 {
			t.Fatalf("file of %d bytes read as %d", len(file), len(jar))
		}
	})
}
