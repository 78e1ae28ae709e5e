package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// standardHook creates a webhook of the owner behind a receiver that
// refuses messages without valid Standard Webhooks headers, and returns
// the secret as the create answer gave it.
func standardHook(t *testing.T, h *hooks, ownerID string) (core.Webhook, string, *webhooktest.Receiver) {
	t.Helper()
	r := webhooktest.NewRelay(t)
	min := 0
	w, secret, err := h.Create(context.Background(), ownerID, r.URL(), &min, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv := webhooktest.NewReceiver(t, secret)
	rcv.RequireStandard()
	r.Connect(rcv)
	return w, secret, rcv
}

// specRecipe is spec section 5's check written out with crypto/hmac:
// "v1=" and the hex HMAC-SHA256 of "<X-Service-Timestamp>.<raw body>"
// keyed with the secret as returned.
func specRecipe(secret string, m webhooktest.Message) bool {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(m.Header.Get(core.HeaderTimestamp) + "."))
	h.Write(m.Body)
	return hmac.Equal([]byte(m.Header.Get(core.HeaderSignature)), []byte("v1="+hex.EncodeToString(h.Sum(nil))))
}

// Real deliveries, a first try and its retry and a test ping, each
// verify with the Standard Webhooks Go library given the secret exactly
// as the create answer returned it, and by the spec's recipe, on the
// same message.
func TestWebhookStandardSignatures(t *testing.T) {
	t.Parallel()
	h, o := ownerHooks(t, DeliveryConfig{Schedule: core.RetrySchedule{20 * time.Millisecond}})
	h.start()
	wh, secret, rcv := standardHook(t, h, o.ID)
	lib, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the library refuses the secret the create answer returned: %v", err)
	}
	rcv.SetStatus(http.StatusInternalServerError)
	h.score(t, o.ID, 1, 90)
	rcv.WaitFor(1, 3*time.Second)
	rcv.SetStatus(http.StatusOK)
	h.waitLog(t, o.ID, wh.ID, 3*time.Second, allFinal(1))
	if _, err := h.Test(context.Background(), o.ID, wh.ID, nil); err != nil {
		t.Fatal(err)
	}
	msgs := rcv.Messages()
	if len(msgs) != 3 || msgs[0].DeliveryID != msgs[1].DeliveryID || msgs[2].Event != core.EventPing {
		t.Fatalf("want a try, its retry and a ping; got %d messages", len(msgs))
	}
	for i, m := range msgs {
		if err := lib.Verify(m.Body, m.Header); err != nil {
			t.Errorf("message %d (%s): the Standard Webhooks library refuses it: %v", i, m.Event, err)
		}
		if !specRecipe(secret, m) {
			t.Errorf("message %d (%s): the spec's recipe refuses it", i, m.Event)
		}
		if m.Header.Get("webhook-id") != m.DeliveryID || m.Header.Get("webhook-timestamp") != m.Header.Get(core.HeaderTimestamp) {
			t.Errorf("message %d: webhook-id %q webhook-timestamp %q; X-Service-Delivery %q X-Service-Timestamp %q", i,
				m.Header.Get("webhook-id"), m.Header.Get("webhook-timestamp"), m.DeliveryID, m.Header.Get(core.HeaderTimestamp))
		}
	}
}

// A webhook whose secret was made before the standard form, unpadded
// base64url, still gets messages that verify by the spec's recipe with
// that secret: its X-Service signature is unchanged. Its webhook-signature
// is keyed with the secret's own bytes.
func TestWebhookOldSecretStillVerifies(t *testing.T) {
	t.Parallel()
	const old = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM" // as NewWebhookSecret made them
	h, o := ownerHooks(t, DeliveryConfig{})
	h.start()
	r := webhooktest.NewRelay(t)
	rcv := webhooktest.NewReceiver(t, old)
	rcv.RequireStandard()
	r.Connect(rcv)
	// Stored as Create stored webhooks before: the secret sealed to the
	// webhook's id.
	wh := core.Webhook{OwnerID: o.ID, URL: r.URL(), Platforms: slices.Clone(core.Platforms), Active: true}
	seal := func(id string) ([]byte, error) { return h.sealer.Seal([]byte(old), []byte(id)) }
	if err := h.store.CreateWebhook(context.Background(), &wh, func(core.Usage) error { return nil }, seal); err != nil {
		t.Fatal(err)
	}
	h.score(t, o.ID, 1, 90)
	msgs := rcv.WaitFor(1, 3*time.Second)
	if len(msgs) == 0 {
		t.FailNow() // WaitFor reported it
	}
	msg := msgs[0]
	if !specRecipe(old, msg) {
		t.Fatal("the spec's recipe refuses a message signed with an old secret")
	}
	if _, err := standardwebhooks.NewWebhook(old); err == nil {
		t.Fatal("the library decodes an old secret: the premise of this test is wrong")
	}
	raw, _ := standardwebhooks.NewWebhookRaw([]byte(old))
	if err := raw.Verify(msg.Body, msg.Header); err != nil {
		t.Fatalf("with the old secret's bytes as the key the library refuses it: %v", err)
	}
}

// A 410 switches the webhook off at its first answer, with that reason,
// and its owner gets the switch-off email. The deliveries the worker held
// for it are not sent into the 410: they stay queued and go out once the
// owner switches the webhook on again.
func TestWebhookGoneSwitchesOffAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.NewServer(t)
	mailer, err := smtpmail.New(smtp.URL(), "earshot@example.com", quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	o := w.owner(t, "gone@example.com")
	notes := NewNotifications(NotificationDeps{Store: gormstore.NewNotificationStore(w.db), Owners: gormstore.NewOwnerStore(w.db), Mailer: mailer, Log: quiet}, func() string { return "http://earshot.test" })
	runCtx, stopNotes := context.WithCancel(ctx)
	notesDone := make(chan struct{})
	go func() { defer close(notesDone); notes.Run(runCtx, time.Hour) }() // only pokes wake it
	t.Cleanup(func() { stopNotes(); <-notesDone })

	var mu sync.Mutex
	var offs []core.Webhook
	h := newHooksWith(t, w, DeliveryConfig{}, func(ctx context.Context, wh core.Webhook) {
		mu.Lock()
		offs = append(offs, wh)
		mu.Unlock()
		if err := notes.WebhookSwitchedOff(ctx, wh); err != nil {
			t.Error(err)
		}
	})
	wh, rcv := h.webhook(t, o.ID, 0)
	rcv.SetStatus(http.StatusGone)
	const n = 12
	// Scored before the worker starts, so its first claim holds them all.
	h.score(t, o.ID, n, 80)
	h.start()
	var got core.Webhook
	waitUntil(t, 5*time.Second, h.claims.wrote, func() bool {
		got, _, _ = h.store.Webhook(ctx, o.ID, wh.ID)
		return !got.Active
	}, func() string { return fmt.Sprintf("webhook still on: %+v", got) })
	h.settle(t)

	if got.DisabledReason != "switched off at once: the receiver answered http 410 (Gone)" {
		t.Fatalf("reason %q", got.DisabledReason)
	}
	sent := len(rcv.Messages())
	failed, queued := 0, 0
	for _, d := range h.log(t, o.ID, wh.ID) {
		switch {
		case d.Status == core.DeliveryFailed && d.ResponseStatus == http.StatusGone && d.Tries == 1:
			failed++
		case d.Status == core.DeliveryQueued && d.Tries == 0:
			queued++
		default:
			t.Errorf("delivery %+v", d)
		}
	}
	// At most the sends under way when the first 410 came back were made.
	if sent < 1 || sent > DefaultWebhookPerWebhook || failed != sent || queued != n-sent {
		t.Fatalf("%d sent, %d failed with 410, %d queued; want at most %d sent, each failed, the rest queued", sent, failed, queued, DefaultWebhookPerWebhook)
	}
	mu.Lock()
	if len(offs) != 1 || offs[0].ID != wh.ID {
		t.Errorf("switch-offs told: %+v", offs)
	}
	mu.Unlock()
	mail := smtp.WaitFor(1, 5*time.Second)
	if len(mail) != 1 || mail[0].To[0] != "gone@example.com" || !strings.Contains(mail[0].Body, got.DisabledReason) {
		t.Fatalf("switch-off email %+v", mail)
	}

	// Switched on, the queued messages go out.
	rcv.SetStatus(http.StatusOK)
	on := true
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &on}); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.Poke()
	rcv.WaitFor(n, 10*time.Second)
	h.waitLog(t, o.ID, wh.ID, 5*time.Second, allFinal(n))
}

// A Retry-After on a 429 or 503 that is later than the schedule moves the
// next try to it; one earlier than the schedule leaves the schedule; a
// huge or malformed one, which a stranger's server can send, is capped or
// ignored.
func TestWebhookRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		status   int
		value    string
		schedule time.Duration
		want     time.Duration // from the try to the next
	}{
		{"429 later than the schedule", 429, "3600", time.Minute, time.Hour},
		{"503 later, as an HTTP date", 503, "date:+2h", time.Minute, 2 * time.Hour},
		{"429 earlier than the schedule", 429, "5", time.Hour, time.Hour},
		{"503 huge: capped at a day", 503, "99999999999999999999", time.Minute, core.MaxRetryAfter},
		{"429 malformed: the schedule", 429, "tomorrow", time.Minute, time.Minute},
		{"429 negative: the schedule", 429, "-3600", time.Minute, time.Minute},
		{"500 with one: the schedule", 500, "3600", time.Minute, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, o := ownerHooks(t, DeliveryConfig{Schedule: core.RetrySchedule{c.schedule}})
			h.start()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				v := c.value
				if d, ok := strings.CutPrefix(v, "date:+"); ok {
					wait, _ := time.ParseDuration(d)
					v = time.Now().Add(wait).UTC().Format(http.TimeFormat)
				}
				w.Header().Set("Retry-After", v)
				w.WriteHeader(c.status)
			}))
			t.Cleanup(srv.Close)
			min := 0
			wh, _, err := h.Create(context.Background(), o.ID, srv.URL, &min, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.score(t, o.ID, 1, 90)
			ds := h.waitLog(t, o.ID, wh.ID, 3*time.Second, func(ds []core.Delivery) bool { return len(ds) == 1 && ds[0].Tries == 1 })
			d := ds[0]
			wait := d.NextAttemptAt.Sub(d.LastAttemptAt)
			// The schedule adds up to 10% jitter; a Retry-After wait has
			// none. An HTTP date has whole seconds.
			low, high := c.want-time.Second, c.want+c.want/10+time.Millisecond
			if d.Status != core.DeliveryQueued || d.ResponseStatus != c.status || wait < low || wait > high {
				t.Fatalf("after a %d with Retry-After %q: %s, next try in %v; want about %v", c.status, c.value, d.Status, wait, c.want)
			}
		})
	}
}
