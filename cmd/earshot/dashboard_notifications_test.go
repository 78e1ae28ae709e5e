package main

// The dashboard's notifications in a real browser against the real
// binary.

import (
	"strings"
	"testing"
)

// Notifications: listed newest first with an unread count in the
// navigation on every page; a repeated identical report adds none;
// marking one read, then all, lowers the count to nothing.
func TestDashboardNotifications(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	fb := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "").JSON(t)
	x := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 401}).want(t, 200, "").JSON(t)
	count := func() string {
		t.Helper()
		return strings.TrimSuffix(eval[string](b, `(function(){var c=document.getElementById("unread-count");return c?c.textContent:""})()`), " unread")
	}
	b.signIn(s.loginLink(s.OwnerID))
	if got := count(); got != "2" {
		t.Fatalf("unread count on the inbox %q", got)
	}
	// The accounts page shows each view exactly as /account-status
	// answered it.
	b.open(s.URL + "/app/accounts")
	for _, v := range []map[string]any{fb, x} {
		sec := "#acct-" + v["platform"].(string)
		// The state in words ("action required"), its code in the class.
		if got := b.text(sec + " .state"); got != strings.ReplaceAll(v["state"].(string), "_", " ") ||
			!eval[bool](b, `document.querySelector("`+sec+` .state").classList.contains(`+jsString(v["state"].(string))+`)`) {
			t.Fatalf("%s state %q, the API says %v", sec, got, v["state"])
		}
		if got := b.text(sec + " .issue"); !strings.HasPrefix(got, v["issue"].(string)) {
			t.Fatalf("%s issue %q, the API says %v", sec, got, v["issue"])
		}
		if got := eval[string](b, `document.querySelector("`+sec+` .action").dataset.action`); got != v["action"] {
			t.Fatalf("%s action %q, the API says %v", sec, got, v["action"])
		}
	}
	// The same reports again: no new notification.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 401}).want(t, 200, "")
	b.open(s.URL + "/app/notifications")
	if got := count(); got != "2" {
		t.Fatalf("unread count %q after repeated reports", got)
	}
	titles := eval[[]string](b, `Array.from(document.querySelectorAll("li.note h2")).map(function(h){return h.innerText})`)
	if len(titles) != 2 || !strings.HasPrefix(titles[0], "Your x account needs you") || !strings.HasPrefix(titles[1], "Your facebook account needs you") {
		t.Fatalf("notifications %q", titles)
	}
	if n := eval[int](b, `document.querySelectorAll("li.note.unread").length`); n != 2 {
		t.Fatalf("%d unread", n)
	}
	b.submitAndWait(`li.note:last-of-type form button`)
	if got := b.text(".notice"); got != "Marked read." || count() != "1" {
		t.Fatalf("after marking one read: %q, count %q", got, count())
	}
	if eval[bool](b, `document.querySelector("li.note:last-of-type").classList.contains("unread")`) ||
		!eval[bool](b, `document.querySelector("li.note:first-of-type").classList.contains("unread")`) {
		t.Fatal("the wrong notification was marked read")
	}
	// A recovery makes one too.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 200}).want(t, 200, "")
	b.open(s.URL + "/app/notifications")
	if got := count(); got != "2" || !strings.HasPrefix(b.text("li.note h2"), "Your x account is healthy again") {
		t.Fatalf("after the recovery: count %q, newest %q", got, b.text("li.note h2"))
	}
	b.submitAndWait(`#read-all`)
	if got := b.text(".notice"); got != "2 marked read." || count() != "" || b.text("#read-all") != "" {
		t.Fatalf("after marking all read: %q, count %q", got, count())
	}
	if n := eval[int](b, `document.querySelectorAll("li.note").length`); n != 3 {
		t.Fatalf("%d notifications listed, want 3", n)
	}
	b.open(s.URL + "/app/plan")
	if got := count(); got != "" {
		t.Fatalf("unread count %q on another page", got)
	}
}
