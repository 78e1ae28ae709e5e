package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An owner connects x from the accounts page by uploading a cookies.txt,
// at desktop and phone width, then makes an ingest key in the "Run a
// helper" panel; the key reads back the jar in its canonical form, and
// no page shows a cookie value.
func TestJarUploadInTheBrowser(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_SITE_URL=http://listen.example.com", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	owner := s.mustAdmin("owner", "create", "--email", "jar@example.com")
	secret := "SECRET" + randomHex(t)
	// The cookies.txt shape curl and the "Get cookies.txt LOCALLY"
	// extension write, with a cookie of another site that is dropped.
	jar := filepath.Join(t.TempDir(), "x.com_cookies.txt")
	if err := os.WriteFile(jar, []byte("# Netscape HTTP Cookie File\n"+
		"#HttpOnly_.x.com\tTRUE\t/\tTRUE\t1798761600\tauth_token\t"+secret+"\n"+
		".x.com\tTRUE\t/\tTRUE\t1798761600\tct0\tc"+secret+"\n"+
		".example.org\tTRUE\t/\tFALSE\t0\tother\to"+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.signIn(s.loginLink(owner))
	keys := 0
	atWidths(b, func(w string) {
		b.open(s.URL + "/app/accounts")
		label := "Connect"
		if w == "phone" {
			label = "Replace the cookies"
		}
		if got := b.text("#acct-x details.jar summary"); !strings.HasPrefix(got, label) {
			t.Fatalf("%s: the x card offers %q, want %q", w, got, label)
		}
		if !eval[bool](b, `document.querySelector("#acct-x details.jar").open`) {
			b.click("#acct-x details.jar summary", `document.querySelector("#acct-x details.jar").open`)
		}
		b.do(chromedp.SetUploadFiles(chromedp.CSS("#jar-file-x"), []string{jar}))
		b.submitAndWait(`#acct-x form.jar-form button[type="submit"]`)
		if got := b.text("main"); !strings.Contains(got, "x connected: 2 cookies kept from the upload") || strings.Contains(got, secret) {
			t.Fatalf("%s: after the upload the page says:\n%s", w, got)
		}
		if got := b.text("#acct-x .state"); got != "no report yet" {
			t.Fatalf("%s: x state %q after connecting", w, got)
		}
		if got := eval[string](b, `document.getElementById("helper-command").value`); got !=
			"EARSHOT_HELPER_SERVER=http://listen.example.com EARSHOT_HELPER_KEY_FILE=~/.config/earshot/helper.key earshot helper" {
			t.Fatalf("%s: the helper command is %q", w, got)
		}
		b.submitAndWait("#helper-key")
		keys++
		key := eval[string](b, `document.getElementById("helper-secret").value`)
		if !strings.HasPrefix(key, "svc_ingest_") {
			t.Fatalf("%s: the panel shows the key %q", w, key)
		}
		b.waitFor(`!document.querySelector('button[data-copy="helper-secret"]').hidden`, "the Copy button")
		if over := eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth`); over {
			t.Fatalf("%s: the accounts page is wider than the screen", w)
		}
		got := string(s.call("GET", "/session?platform=x", key, nil).want(t, 200, "").Body)
		if !strings.Contains(got, `"name":"auth_token","value":"`+secret+`","path":"/","expires":1798761600,"secure":true,"httpOnly":true`) ||
			strings.Contains(got, "example.org") {
			t.Fatalf("%s: GET /session with the new key: %s", w, got)
		}
		b.open(s.URL + "/app/accounts")
		if strings.Contains(b.text("main"), "svc_ingest_") || !strings.Contains(b.text("#helper-keys"), "live ingest key") {
			t.Fatalf("%s: the accounts page after the key was made:\n%s", w, b.text("main"))
		}
	})
	if n := strings.Count(s.mustAdmin("ingest-key", "list", "--owner", owner), "\n"); n != keys {
		t.Fatalf("ingest-key list has %d lines, want a header and %d keys", n, keys)
	}
}
