package main

// The dashboard's keys page in a real browser against the real binary:
// keys shown once and revoked.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// API keys: made with a name and scopes, shown once with a copy button,
// listed by fingerprint and last use, revoked to 401 from the next
// request; the sixth live key refused beside the name with the service's
// message. Ingest keys: made, shown once, listed, revoked.
func TestDashboardKeys(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/keys")
	b.do(sendKeys("#k-name", "ci"), clickOn(`input[name="scope"][value="webhooks"]`))
	b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
	secret := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(secret, "svc_api_") || b.text("#new-h") != "Your new API key “ci”" {
		t.Fatalf("new key shown as %q under %q\n%s", secret, b.text("#new-h"), b.text("main"))
	}
	// The copy button puts the key on the clipboard.
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: s.URL}); err != nil {
				return err
			}
		}
		return nil
	}))
	b.click(`button.copy`, `document.querySelector(".copy-status").textContent === "Copied."`)
	if got := eval[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise); got != secret {
		t.Fatalf("the clipboard holds %q", got)
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 200, "")
	b.open(s.URL + "/app/keys")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) || b.text("#new-secret") != "" {
		t.Fatal("the key is shown again")
	}
	ci := b.rowOf("#api-keys", "ci")
	row := b.text(`tr[data-key="` + ci + `"]`)
	if !strings.Contains(row, "read, webhooks") || !strings.Contains(row, "just now") || strings.Contains(row, "never") ||
		!regexp.MustCompile(`[0-9a-f]{4}…[0-9a-f]{4}`).MatchString(row) {
		t.Fatalf("the key's row (scopes, fingerprint, created, last used): %q", row)
	}
	b.submitAndWait(`tr[data-key="` + ci + `"] form button`)
	if got := b.text(".notice"); !strings.Contains(got, "Key revoked") {
		t.Fatalf("after revoking: %q", got)
	}
	s.call("GET", "/api/v1/me", secret, nil).want(t, 401, "unauthorized")
	if got := b.text(`tr[data-key="` + ci + `"]`); !strings.Contains(got, "revoked") || strings.Contains(got, "Revoke") {
		t.Fatalf("the revoked key's row: %q", got)
	}

	// Five live keys: the bootstrap key and four more; the sixth is
	// refused beside the name, in the words the admin console gives.
	for i := 2; i <= 5; i++ {
		b.do(setValue("#k-name", fmt.Sprint("key ", i)))
		b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
		if !strings.HasPrefix(eval[string](b, `document.querySelector("#new-secret").value`), "svc_api_") {
			t.Fatalf("key %d not made:\n%s", i, b.text("main"))
		}
	}
	if got := b.text("#api-h + .hint"); !strings.Contains(got, "5 of 5 live keys") {
		t.Fatalf("the count says %q", got)
	}
	b.do(setValue("#k-name", "sixth"))
	b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
	const limit = "an owner may hold at most 5 API keys: revoke one first"
	if got := b.text("#e-name"); got != limit {
		t.Fatalf("beside the name: %q\n%s", got, b.text("main"))
	}
	if b.text("#new-secret") != "" || eval[string](b, `document.querySelector("#k-name").value`) != "sixth" ||
		eval[string](b, `document.querySelector("#k-name").getAttribute("aria-describedby")`) != "e-name" {
		t.Fatal("a refused key shows a secret, loses the name typed, or its error is not tied to the field")
	}
	if _, err := s.admin("key", "create", "--owner", s.OwnerID, "--name", "cli"); err == nil || !strings.Contains(err.Error(), limit) {
		t.Fatalf("the admin console says: %v", err)
	}

	// Ingest keys: made with a name, shown once, used by a helper,
	// revoked to 401.
	b.open(s.URL + "/app/keys")
	b.do(sendKeys("#i-name", "laptop helper"))
	b.submitAndWait(`form[action="/app/ingest-keys"] button[type="submit"]`)
	ingest := eval[string](b, `document.querySelector("#new-secret").value`)
	if !strings.HasPrefix(ingest, "svc_ingest_") || b.text("#new-h") != "Your new ingest key “laptop helper”" {
		t.Fatalf("new ingest key shown as %q under %q", ingest, b.text("#new-h"))
	}
	s.ingest(ingest, "x", xPost("k1", "ada", "hello"))
	b.open(s.URL + "/app/keys")
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(ingest)+`)`) {
		t.Fatal("the ingest key is shown again")
	}
	helper := b.rowOf("#ingest-keys", "laptop helper")
	if row := b.text(`tr[data-key="` + helper + `"]`); helper == "" || !strings.Contains(row, "ingest, account status") || !strings.Contains(row, "just now") {
		t.Fatalf("the ingest key's row: %q\n%s", row, b.text("#ingest-keys"))
	}
	if n := eval[int](b, `document.querySelectorAll("#ingest-keys tbody tr").length`); n != 2 {
		t.Fatalf("%d ingest keys listed, want the bootstrap one and the new one", n)
	}
	b.submitAndWait(`tr[data-key="` + helper + `"] form button`)
	if got := b.text(`tr[data-key="` + helper + `"]`); !strings.Contains(got, "revoked") {
		t.Fatalf("the revoked ingest key's row: %q", got)
	}
	s.call("POST", "/ingest", ingest, map[string]any{"platform": "x", "posts": []any{xPost("k2", "ada", "hello")}}).want(t, 401, "unauthorized")
	s.ingest(s.IngestKey, "x", xPost("k3", "ada", "the other key still works"))
}
