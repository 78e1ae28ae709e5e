package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// alertService is the alert sweep of one replica over w's leases and
// store, mailing through box on clock the matches scored 70 and up.
func alertService(w world, store ports.AlertStore, box ports.Mailer, clock ports.Clock) *Alerts {
	return NewAlerts(AlertDeps{Store: store, Leases: w.leases, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
		AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
}

// hourlyOwner is a new owner of w, with email, whose alert emails are
// hourly digests.
func hourlyOwner(t *testing.T, w world, store ports.AlertStore, email string) core.Owner {
	t.Helper()
	o := w.owner(t, email)
	if _, err := NewAlertSchedules(store).Set(context.Background(), o.ID, "hourly", 0, ""); err != nil {
		t.Fatal(err)
	}
	return o
}

// alertBox keeps the mail it is given.
type alertBox struct {
	mu   sync.Mutex
	mail []ports.Mail
}

func (b *alertBox) Send(_ context.Context, m ports.Mail) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mail = append(b.mail, m)
	return nil
}

// take returns the mail to to since the last take.
func (b *alertBox) take(to string) []ports.Mail {
	b.mu.Lock()
	defer b.mu.Unlock()
	var got, kept []ports.Mail
	for _, m := range b.mail {
		if m.To == to {
			got = append(got, m)
		} else {
			kept = append(kept, m)
		}
	}
	b.mail = kept
	return got
}

// Each owner's frequency, on a clock the test moves: at once mails at
// every sweep as before; hourly at most once an hour with everything
// since the last; daily within the chosen hour of the owner's zone; off
// never.
func TestAlertFrequencies(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		clock := &handClock{now: time.Date(2026, 1, 10, 6, 30, 0, 0, time.UTC)} // 08:30 at +02:00
		box := &alertBox{}
		store := gormstore.NewAlertStore(w.db)
		alerts := alertService(w, store, box, clock)
		schedules := NewAlertSchedules(store)

		def, hourly := w.owner(t, "def@example.com"), w.owner(t, "hourly@example.com")
		daily, off := w.owner(t, "daily@example.com"), w.owner(t, "off@example.com")
		for _, c := range []struct {
			o          core.Owner
			freq, zone string
			hour       int
		}{{hourly, "hourly", "", 0}, {daily, "daily", "+02:00", 9}, {off, "off", "", 0}} {
			if _, err := schedules.Set(ctx, c.o.ID, c.freq, c.hour, c.zone); err != nil {
				t.Fatal(err)
			}
		}
		if s, err := schedules.Schedule(ctx, def.ID); err != nil || s.Frequency != core.AlertAtOnce {
			t.Fatalf("default schedule = %+v, %v", s, err)
		}
		if _, err := schedules.Set(ctx, def.ID, "weekly", 0, ""); !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("weekly: %v", err)
		}
		phrases := map[string]core.Phrase{}
		for _, o := range []core.Owner{def, hourly, daily, off} {
			phrases[o.ID] = w.phrase(t, o.ID, "alerting", "golang")
		}
		posts := 0
		scored := func(o core.Owner, scores ...int) {
			t.Helper()
			var batch []ports.PostMatches
			for range scores {
				posts++
				batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint("post-", posts), Text: "t",
					URL: fmt.Sprint("https://x.com/p/", posts)}, PhraseIDs: []string{phrases[o.ID].ID}})
			}
			res, err := w.matches.SaveMatches(ctx, o.ID, core.Reddit, batch)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range res.Matches {
				if _, err := w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: core.Score{Value: scores[i],
					Intent: core.IntentBuying, Reason: fmt.Sprint("cue ", scores[i])}}}, core.QueueMatchCreated); err != nil {
					t.Fatal(err)
				}
			}
		}
		everyone := func(scores ...int) {
			for _, o := range []core.Owner{def, hourly, daily, off} {
				scored(o, scores...)
			}
		}
		sweep := func(at string) {
			t.Helper()
			clock.now = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
			d, err := time.ParseDuration(at)
			if err != nil {
				t.Fatal(err)
			}
			clock.now = clock.now.Add(d)
			if _, err := alerts.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
		}
		expect := func(o core.Owner, subject string, contains ...string) {
			t.Helper()
			got := box.take(o.Email)
			if subject == "" {
				if len(got) != 0 {
					t.Fatalf("%s at %v got %q", o.Email, clock.now, got[0].Subject)
				}
				return
			}
			if len(got) != 1 || got[0].Subject != subject {
				t.Fatalf("%s at %v: want one mail %q, got %+v", o.Email, clock.now, subject, got)
			}
			for _, c := range contains {
				if !strings.Contains(got[0].Body, c) {
					t.Fatalf("%s at %v: body lacks %q:\n%s", o.Email, clock.now, c, got[0].Body)
				}
			}
		}

		everyone(90, 80)
		sweep("6h30m")
		expect(def, "earshot: 2 new matches", "1. \"alerting\" on reddit: score 90")
		expect(hourly, "earshot: hourly digest, 2 new matches", "score 90", "score 80")
		expect(daily, "") // 08:30 in its zone: before 09:00
		expect(off, "")

		everyone(85)
		sweep("6h40m")
		expect(def, "earshot: 1 new match", "score 85")
		expect(hourly, "")
		expect(daily, "")

		everyone(75)
		sweep("7h")
		expect(def, "earshot: 1 new match", "score 75")
		expect(hourly, "") // 30 minutes since the last
		expect(daily, "earshot: daily digest, 4 new matches", "score 90", "score 85", "score 80", "score 75")

		scored(hourly, 70, 71, 72, 73, 74, 76, 77, 78, 79, 81, 82) // 13 pending with 85 and 75
		sweep("7h29m")
		expect(hourly, "")
		sweep("7h30m")
		expect(hourly, "earshot: hourly digest, 13 new matches", "1. \"alerting\" on reddit: score 85", "and 3 more")
		if ms, _ := store.PendingAlerts(ctx, hourly.ID, 70, 100); len(ms) != 0 {
			t.Fatalf("%d matches left after the hourly digest", len(ms))
		}

		sweep("8h30m") // nothing new
		expect(hourly, "")
		expect(daily, "")
		expect(def, "")

		everyone(95)
		sweep("23h59m") // 01:59 next day at +02:00
		expect(daily, "")
		expect(hourly, "earshot: hourly digest, 1 new match", "score 95")
		expect(def, "earshot: 1 new match")
		sweep("31h") // 07:00 UTC next day: 09:00 at +02:00
		expect(daily, "earshot: daily digest, 1 new match", "score 95")

		expect(off, "")
		if ms, _ := store.PendingAlerts(ctx, off.ID, 70, 100); len(ms) != 5 {
			t.Fatalf("off: %d matches pending, want all 5 kept unsent", len(ms))
		}
	})
}

// slowBox is an alertBox whose server takes a while to accept a message,
// as a real one does: the clock moves on during each send.
type slowBox struct {
	alertBox
	clock *handClock
	takes time.Duration
}

func (b *slowBox) Send(ctx context.Context, m ports.Mail) error {
	b.clock.add(b.takes)
	return b.alertBox.Send(ctx, m)
}

// With sweeps an hour apart (the default EARSHOT_ALERT_INTERVAL), an
// hourly owner gets a digest at every sweep that finds matches, even
// though each send takes a moment: the hour counts from the sweep that
// mailed, not from the end of its send.
func TestHourlyDigestEverySweepOfAnHour(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		start := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
		clock := &handClock{now: start}
		box := &slowBox{clock: clock, takes: 2 * time.Second}
		store := gormstore.NewAlertStore(w.db)
		alerts := alertService(w, store, box, clock)
		o := hourlyOwner(t, w, store, "hourly@example.com")
		for i := range 3 {
			scoredMatches(t, w, o, slices.Repeat([]int{90}, i+1)...)
			clock.mu.Lock()
			clock.now = start.Add(time.Duration(i) * time.Hour)
			clock.mu.Unlock()
			if n, err := alerts.Sweep(ctx); err != nil || n != 1 {
				t.Fatalf("sweep %d at %v: %d emails, %v", i, start.Add(time.Duration(i)*time.Hour), n, err)
			}
			if got := box.take(o.Email); len(got) != 1 {
				t.Fatalf("sweep %d: %d emails", i, len(got))
			}
		}
	})
}
