package core_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// Secrets of both formats with vectors computed independently (Python's
// hmac and base64), not with the code under test.
const (
	// newSecret is whsec_ and the standard base64 of the bytes 0 to 31.
	newSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	// oldSecret is a secret as made before: whsec_ and 32 bytes in
	// unpadded base64url, which a standard library's decoder refuses.
	oldSecret = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM"
)

func TestSignStandardKnownVectors(t *testing.T) {
	body := []byte(`{"id":"d1"}`)
	cases := []struct {
		name, secret, want string
	}{
		// Keyed with the decoded bytes 0 to 31, over "d1.1700000000.<body>".
		{"new secret", newSecret, "v1,JfFMZlAu07sUcDzRmSLBMu7xQWRj8BfP/aKzDPwQ5aw="},
		// Keyed with the secret string's own bytes, prefix included.
		{"old secret", oldSecret, "v1,/yVPf/gMgAD+w5YMn/MkkJyuctkVt5TevAX5AExOhQQ="},
	}
	for _, c := range cases {
		if got := core.SignStandard(c.secret, "d1", 1700000000, body); got != c.want {
			t.Errorf("%s: SignStandard = %s, want %s", c.name, got, c.want)
		}
	}
	// The spec's signature of a new secret is still keyed with the string
	// as returned, prefix included.
	if got, want := core.Sign(newSecret, 1700000000, body), "v1=3374365f3e40d881ec7fe94642594ea49044ca1896dff89089768d76c6a33ad7"; got != want {
		t.Errorf("Sign with a new secret = %s, want %s", got, want)
	}
}

func TestStandardKey(t *testing.T) {
	seq := make([]byte, 32)
	for i := range seq {
		seq[i] = byte(i)
	}
	cases := []struct {
		name, secret string
		want         []byte
	}{
		{"new secret: decoded", newSecret, seq},
		{"old secret: as is", oldSecret, []byte(oldSecret)},
		{"no prefix: as is", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", []byte("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")},
		{"prefix only: as is", "whsec_", []byte("whsec_")},
		{"line break inside: as is", "whsec_AAEC\nAwQF", []byte("whsec_AAEC\nAwQF")},
		{"stray padding bits: as is", "whsec_AB==", []byte("whsec_AB==")},
		{"base64url characters: as is", "whsec_ab-_", []byte("whsec_ab-_")},
	}
	for _, c := range cases {
		if got := core.StandardKey(c.secret); !bytes.Equal(got, c.want) {
			t.Errorf("%s: StandardKey(%q) = %x, want %x", c.name, c.secret, got, c.want)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	body := []byte(`{"id":"d1","type":"ping"}`)
	now := time.Unix(1700000000, 0)
	ts := "1700000000"
	good := core.SignStandard(newSecret, "d1", 1700000000, body)
	other := core.SignStandard(oldSecret, "d1", 1700000000, body)
	cases := []struct {
		name, id, sig, ts string
		body              []byte
		now               time.Time
		ok                bool
	}{
		{"good", "d1", good, ts, body, now, true},
		{"several, space-separated", "d1", other + " " + good, ts, body, now, true},
		{"unknown version skipped", "d1", "v1a,abc " + good, ts, body, now, true},
		{"300s late", "d1", good, ts, body, now.Add(300 * time.Second), true},
		{"301s late", "d1", good, ts, body, now.Add(301 * time.Second), false},
		{"301s early", "d1", good, ts, body, now.Add(-301 * time.Second), false},
		{"other secret", "d1", other, ts, body, now, false},
		{"other id", "d2", good, ts, body, now, false},
		{"body changed", "d1", good, ts, append(bytes.Clone(body), ' '), now, false},
		{"empty id", "", good, ts, body, now, false},
		{"empty signature", "d1", "", ts, body, now, false},
		{"spec's form", "d1", "v1=" + strings.TrimPrefix(good, "v1,"), ts, body, now, false},
		{"no v1 value", "d1", "v2," + strings.TrimPrefix(good, "v1,"), ts, body, now, false},
		{"not base64", "d1", "v1,!!!", ts, body, now, false},
		{"malformed timestamp", "d1", good, "1700000000.5", body, now, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := core.VerifyStandard(newSecret, c.id, c.sig, c.ts, c.body, c.now)
			if c.ok != (err == nil) {
				t.Fatalf("VerifyStandard = %v, want ok %v", err, c.ok)
			}
			if err != nil && !errors.Is(err, &core.Error{Kind: core.KindUnauthorized}) {
				t.Fatalf("kind = %v, want unauthorized", core.KindOf(err))
			}
			if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(newSecret, "whsec_")) {
				t.Fatal("error repeats the secret")
			}
		})
	}
}

// A new secret verifies by both schemes exactly as returned: the spec's
// recipe keys with the string, the standard's with its decoded bytes.
func TestNewWebhookSecretServesBothSchemes(t *testing.T) {
	s, err := core.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(s, "whsec_"))
	if !strings.HasPrefix(s, "whsec_") || err != nil || len(raw) < 24 {
		t.Fatalf("secret %q: want whsec_ and the standard base64 of at least 24 bytes (%d bytes, %v)", s, len(raw), err)
	}
	if !bytes.Equal(core.StandardKey(s), raw) {
		t.Fatal("the standard key of a new secret is not its decoded bytes")
	}
	body := []byte(`{}`)
	if err := core.Verify(s, core.Sign(s, 5, body), "5", body, time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	if err := core.VerifyStandard(s, "d1", core.SignStandard(s, "d1", 5, body), "5", body, time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		name, v string
		want    time.Duration
		ok      bool
	}{
		{"seconds", "120", 2 * time.Minute, true},
		{"spaces around", " 90 ", 90 * time.Second, true},
		{"a day", "86400", 24 * time.Hour, true},
		{"over a day: capped", "86401", core.MaxRetryAfter, true},
		{"huge: capped", "99999999999999999999999999999999", core.MaxRetryAfter, true},
		{"zero", "0", 0, false},
		{"many zeros", "000000000000000000000", 0, false},
		{"leading zeros", "0000000000000120", 2 * time.Minute, true},
		{"negative", "-5", 0, false},
		{"plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"unit", "5s", 0, false},
		{"empty", "", 0, false},
		{"words", "soon", 0, false},
		{"http date", "Tue, 04 Mar 2025 05:16:07 GMT", 10 * time.Minute, true},
		{"rfc 850 date", "Tuesday, 04-Mar-25 05:16:07 GMT", 10 * time.Minute, true},
		{"asctime date", "Tue Mar  4 05:16:07 2025", 10 * time.Minute, true},
		{"date in a week: capped", "Tue, 11 Mar 2025 05:06:07 GMT", core.MaxRetryAfter, true},
		{"date far ahead: capped", "Fri, 31 Dec 9999 23:59:59 GMT", core.MaxRetryAfter, true},
		{"date passed", "Tue, 04 Mar 2025 05:06:06 GMT", 0, false},
		{"date now", "Tue, 04 Mar 2025 05:06:07 GMT", 0, false},
		{"date in another zone", "Tue, 04 Mar 2025 06:16:07 +0100", 0, false},
		{"date with trailing junk", "Tue, 04 Mar 2025 05:16:07 GMT; x", 0, false},
		{"long junk", strings.Repeat("9", 4096) + "x", 0, false},
	}
	for _, c := range cases {
		got, ok := core.ParseRetryAfter(c.v, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: ParseRetryAfter(%.40q) = %v, %v; want %v, %v", c.name, c.v, got, ok, c.want, c.ok)
		}
	}
}

func TestDeliveryWithRetryAfter(t *testing.T) {
	at := time.Unix(1000, 0)
	// After a first failed try the default schedule waits a minute.
	failed := func(status int) core.Delivery {
		return core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryQueued}.
			Attempted(core.DefaultRetrySchedule, status, "", at, 0)
	}
	cases := []struct {
		name   string
		d      core.Delivery
		wait   time.Duration
		want   time.Time // zero: the delivery is final
		status core.DeliveryStatus
	}{
		{"429, later than the schedule", failed(429), 10 * time.Minute, at.Add(10 * time.Minute), core.DeliveryQueued},
		{"503, later than the schedule", failed(503), 2 * time.Hour, at.Add(2 * time.Hour), core.DeliveryQueued},
		{"429, earlier than the schedule", failed(429), 5 * time.Second, at.Add(time.Minute), core.DeliveryQueued},
		{"429, none given", failed(429), 0, at.Add(time.Minute), core.DeliveryQueued},
		{"429, negative", failed(429), -time.Hour, at.Add(time.Minute), core.DeliveryQueued},
		{"503, past the cap", failed(503), 30 * 24 * time.Hour, at.Add(core.MaxRetryAfter), core.DeliveryQueued},
		{"500 ignores it", failed(500), time.Hour, at.Add(time.Minute), core.DeliveryQueued},
		{"502 ignores it", failed(502), time.Hour, at.Add(time.Minute), core.DeliveryQueued},
		{"delivered", failed(200), time.Hour, time.Time{}, core.DeliveryDelivered},
	}
	for _, c := range cases {
		got := c.d.WithRetryAfter(c.wait, at)
		if got.Status != c.status || !got.NextAttemptAt.Equal(c.want) || got.Tries != c.d.Tries {
			t.Errorf("%s: %s next %v tries %d; want %s next %v", c.name, got.Status, got.NextAttemptAt, got.Tries, c.status, c.want)
		}
	}
	// The last try failed: no retry follows, whatever the answer asked.
	last := core.Delivery{Trigger: core.TriggerScheduled, Tries: 3}.Attempted(core.DefaultRetrySchedule, 503, "", at, 0).WithRetryAfter(time.Hour, at)
	if last.Status != core.DeliveryFailed || !last.NextAttemptAt.IsZero() {
		t.Fatalf("last try: %+v", last)
	}
}

func TestGoneEndsDeliveryAndSwitchesOff(t *testing.T) {
	at := time.Unix(1000, 0)
	d := core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryQueued}.Attempted(core.DefaultRetrySchedule, 410, "http 410", at, 0)
	if d.Status != core.DeliveryFailed || d.Tries != 1 || !d.NextAttemptAt.IsZero() || d.ResponseStatus != 410 || !d.Gone() {
		t.Fatalf("after a 410: %+v", d)
	}
	w := core.Webhook{Active: true}.AfterDelivery(d)
	if w.Active || w.ConsecutiveFailures != 1 || w.DisabledReason != "switched off at once: the receiver answered http 410 (Gone)" {
		t.Fatalf("webhook after a 410: %+v", w)
	}
	// A 410 to a retry ends it too, and to a manual retry.
	r := core.Delivery{Trigger: core.TriggerManual}.Attempted(core.DefaultRetrySchedule, 500, "", at, 0)
	r = r.Attempted(core.DefaultRetrySchedule, 410, "", at.Add(time.Minute), 0)
	if r.Status != core.DeliveryFailed || r.Tries != 2 || !r.Gone() {
		t.Fatalf("a 410 to a retry: %+v", r)
	}
	if w := (core.Webhook{Active: true, ConsecutiveFailures: 2}).AfterDelivery(r); w.Active {
		t.Fatalf("webhook after a 410 to a retry: %+v", w)
	}
	// A ping answered 410 reports it to the owner and switches nothing off.
	p := core.Delivery{Trigger: core.TriggerPing}.Attempted(nil, 410, "", at, 0)
	if p.Gone() {
		t.Fatal("a ping's 410 counts as gone")
	}
	if w := (core.Webhook{Active: true}).AfterDelivery(p); !w.Active {
		t.Fatalf("a ping's 410 switched the webhook off: %+v", w)
	}
	// Other refusals are ordinary failures, retried on the schedule.
	for _, status := range []int{400, 404, 451} {
		if d := (core.Delivery{Trigger: core.TriggerScheduled}).Attempted(core.DefaultRetrySchedule, status, "", at, 0); d.Status != core.DeliveryQueued || d.Gone() {
			t.Fatalf("a %d: %+v", status, d)
		}
	}
}

// Whatever a receiver sends as Retry-After, the wait is a positive
// duration no longer than MaxRetryAfter, or none.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "99999999999999999999", "Tue, 04 Mar 2025 05:16:07 GMT",
		"Tuesday, 04-Mar-25 05:16:07 GMT", "Tue Mar  4 05:16:07 2025", " 7 ", "1e9", "0x10"} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := core.ParseRetryAfter(v, now)
		if ok && (d <= 0 || d > core.MaxRetryAfter) || !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}
