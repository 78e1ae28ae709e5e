package app

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

const testSecret = "0123456789abcdef0123456789abcdef-test-only"

func testLinks(t *testing.T, secret string) *AlertLinks {
	t.Helper()
	l, err := NewAlertLinks(secret)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// offToken returns the token of the link that ends the body's stop line,
// checking the mail carries that same link as its Unsubscribe.
func offToken(t *testing.T, m ports.Mail, site string) string {
	t.Helper()
	prefix := site + AlertsOffPath
	tok, ok := strings.CutPrefix(m.Unsubscribe, prefix)
	if !ok || !core.WellFormedToken(tok) {
		t.Fatalf("Unsubscribe %q is not a token under %s", m.Unsubscribe, prefix)
	}
	lines := strings.Split(strings.TrimRight(m.Body, "\n"), "\n")
	if n := len(lines); n < 2 || lines[n-1] != "Stop these emails: "+m.Unsubscribe ||
		!strings.HasPrefix(lines[n-2], "Alert emails come ") ||
		!strings.HasSuffix(lines[n-2], "; change it on "+site+"/app/account") {
		t.Fatalf("the body does not end with how to stop the emails:\n%s", m.Body)
	}
	return tok
}

// Every alert email, at once or digest, carries the link that turns its
// owner's alert emails off, in the body's last lines and as the mail's
// Unsubscribe; the link turns off that owner's alerts only, with the
// Account page's change, again and again without harm, and a forged or
// altered one does nothing.
func TestAlertEmailsCarryStopLink(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		const site = "https://listen.example.com"
		clock := &handClock{now: time.Date(2026, 1, 10, 6, 30, 0, 0, time.UTC)}
		box := &alertBox{}
		store := gormstore.NewAlertStore(w.db)
		alerts := NewAlerts(AlertDeps{Store: store, Leases: w.leases, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
			AlertConfig{MinScore: 70, SiteURL: func() string { return site + "/" }, Links: testLinks(t, testSecret)})
		schedules := alerts.Schedules()

		ana, ben := w.owner(t, "ana@example.com"), w.owner(t, "ben@example.com")
		if _, err := schedules.Set(ctx, ben.ID, "hourly", 0, ""); err != nil {
			t.Fatal(err)
		}
		scoredMatches(t, w, ana, 90, 80)
		scoredMatches(t, w, ben, 95)
		if _, err := alerts.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		anaMail, benMail := box.take(ana.Email), box.take(ben.Email)
		if len(anaMail) != 1 || len(benMail) != 1 {
			t.Fatalf("mail: ana %d, ben %d", len(anaMail), len(benMail))
		}
		if !strings.HasPrefix(benMail[0].Subject, "earshot: hourly digest") ||
			!strings.Contains(benMail[0].Body, "Alert emails come hourly; change it on "+site+"/app/account\n") ||
			!strings.Contains(anaMail[0].Body, "Alert emails come at once; change it on "+site+"/app/account\n") {
			t.Fatalf("ana:\n%s\nben %q:\n%s", anaMail[0].Body, benMail[0].Subject, benMail[0].Body)
		}
		anaTok, benTok := offToken(t, anaMail[0], site), offToken(t, benMail[0], site)
		if anaTok == benTok {
			t.Fatal("two owners got the same link")
		}

		// Checking a link changes nothing.
		if err := alerts.CheckOffLink(anaTok); err != nil {
			t.Fatalf("CheckOffLink: %v", err)
		}
		if s, _ := schedules.Schedule(ctx, ana.ID); s.Frequency != core.AlertAtOnce {
			t.Fatalf("after a check ana's alerts are %v", s)
		}
		// Forged, altered, another key's, or not a token at all.
		other := NewAlerts(AlertDeps{Store: store, Leases: w.leases, Mailer: box, Log: quiet},
			AlertConfig{SiteURL: func() string { return site }, Links: testLinks(t, testSecret+"-rotated")})
		otherTok := strings.TrimPrefix(other.links.URL(site, ana.ID), site+AlertsOffPath)
		raw, _ := base64.RawURLEncoding.DecodeString(anaTok)
		raw[len(raw)-1] ^= 1
		flipped := base64.RawURLEncoding.EncodeToString(raw)
		idRaw, _ := base64.RawURLEncoding.DecodeString(benTok)
		swapped, _ := base64.RawURLEncoding.DecodeString(anaTok)
		copy(swapped[:16], idRaw[:16]) // ben's id with ana's MAC
		for _, bad := range []string{otherTok, flipped, base64.RawURLEncoding.EncodeToString(swapped), "", "x",
			anaTok + "A", anaTok[:42], strings.Repeat("A", 43), strings.Repeat("!", 43), strings.Repeat("A", 100000)} {
			if err := alerts.CheckOffLink(bad); !core.IsKind(err, core.KindNotFound) {
				t.Errorf("CheckOffLink(%.50q) = %v", bad, err)
			}
			if err := alerts.TurnOffByLink(ctx, bad); !core.IsKind(err, core.KindNotFound) {
				t.Errorf("TurnOffByLink(%.50q) = %v", bad, err)
			}
		}
		for _, o := range []core.Owner{ana, ben} {
			if s, _ := schedules.Schedule(ctx, o.ID); s.Frequency == core.AlertOff {
				t.Fatalf("a bad link turned %s's alerts off", o.Email)
			}
		}

		// The link turns ana's alerts off, twice without harm; ben's stay.
		for range 2 {
			if err := alerts.TurnOffByLink(ctx, anaTok); err != nil {
				t.Fatalf("TurnOffByLink: %v", err)
			}
		}
		if s, _ := schedules.Schedule(ctx, ana.ID); s.Frequency != core.AlertOff {
			t.Fatalf("ana's alerts are %v", s)
		}
		if s, _ := schedules.Schedule(ctx, ben.ID); s.Frequency != core.AlertHourly {
			t.Fatalf("ben's alerts are %v", s)
		}
		scoredMatches(t, w, ana, 99, 98, 97)
		clock.add(2 * time.Hour)
		if _, err := alerts.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := box.take(ana.Email); len(got) != 0 {
			t.Fatalf("ana got %q after turning alerts off", got[0].Subject)
		}
		// A link of an owner not (or no longer) stored finds no one.
		gone := strings.TrimPrefix(alerts.links.URL(site, "0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b"), site+AlertsOffPath)
		if err := alerts.TurnOffByLink(ctx, gone); !core.IsKind(err, core.KindNotFound) {
			t.Fatalf("an unknown owner's link: %v", err)
		}
	})
}

// Without links, or for an owner id that is not a UUID as the store
// writes it, the email goes without the link and still says where
// alerts are changed.
func TestAlertMailWithoutStopLink(t *testing.T) {
	ms := []core.Match{{Phrase: "acme", Platform: core.X, Score: &core.Score{Value: 90, Intent: core.IntentBuying}, Post: core.Post{URL: "https://x.com/1"}}}
	links := testLinks(t, testSecret)
	for _, id := range []string{"own", "0190A3C4-5B6D-7E8F-9A0B-1C2D3E4F5A6B", "0190a3c45b6d7e8f9a0b1c2d3e4f5a6b0000", "0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6"} {
		if u := links.URL("https://listen.example.com", id); u != "" {
			t.Errorf("URL for owner %q = %q", id, u)
		}
	}
	var none *AlertLinks
	o := core.Owner{ID: "0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b", Email: "ana@example.com"}
	for _, m := range []ports.Mail{
		AlertMail(o, ms, "https://listen.example.com", none.URL("https://listen.example.com", o.ID)),
		DigestMail(o, core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}, ms, "https://listen.example.com", ""),
	} {
		if m.Unsubscribe != "" || strings.Contains(m.Body, "Stop these emails") ||
			!strings.HasSuffix(m.Body, "; change it on https://listen.example.com/app/account\n") {
			t.Errorf("mail %+v", m)
		}
	}
	u := links.URL("https://listen.example.com", o.ID)
	if got, ok := links.Owner(strings.TrimPrefix(u, "https://listen.example.com"+AlertsOffPath)); !ok || got != o.ID {
		t.Fatalf("Owner of %q = %q, %v", u, got, ok)
	}
	if _, err := NewAlertLinks("short"); err == nil {
		t.Fatal("a short secret was taken")
	}
}

// Sign-in links are transactional: they carry no unsubscribe link.
func TestSignInMailHasNoStopLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w, _, mail := newSessions(t)
	w.owner(t, "ada@example.com")
	if err := s.RequestLink(ctx, "ada@example.com", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	m := firstMail(t, s, mail)
	if m.Unsubscribe != "" || strings.Contains(m.Body, AlertsOffPath) {
		t.Fatalf("sign-in mail %+v", m)
	}
}
