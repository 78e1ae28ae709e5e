package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

func TestSignKnownVector(t *testing.T) {
	// Computed independently: HMAC-SHA256 keyed with the secret string,
	// prefix included, over "<timestamp>.<body>".
	got := core.Sign("whsec_test", 1700000000, []byte(`{"id":"d1"}`))
	want := "v1=7aa818774b12d07b487b77188a423aa42da8d52da13f1fface316ecdf0a91f53"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	const secret = "whsec_abc"
	body := []byte(`{"id":"d1","type":"ping"}`)
	now := time.Unix(1700000000, 0)
	ts := "1700000000"
	good := core.Sign(secret, 1700000000, body)
	other := core.Sign("whsec_other", 1700000000, body)

	cases := []struct {
		name string
		sig  string
		ts   string
		body []byte
		now  time.Time
		ok   bool
	}{
		{"good", good, ts, body, now, true},
		{"upper-case hex", "v1=" + strings.ToUpper(strings.TrimPrefix(good, "v1=")), ts, body, now, true},
		{"rotation: second value matches", other + "," + good, ts, body, now, true},
		{"rotation with spaces", other + ", " + good, ts, body, now, true},
		{"unknown version skipped", "v0=abcd," + good, ts, body, now, true},
		{"299s late", good, ts, body, now.Add(299 * time.Second), true},
		{"300s early", good, ts, body, now.Add(-300 * time.Second), true},
		{"301s late", good, ts, body, now.Add(301 * time.Second), false},
		{"301s early", good, ts, body, now.Add(-301 * time.Second), false},
		{"wrong secret", other, ts, body, now, false},
		{"body changed", good, ts, []byte(`{"id":"d1","type":"ping"} `), now, false},
		{"timestamp changed", core.Sign(secret, 1700000001, body), ts, body, now, false},
		{"empty signature", "", ts, body, now, false},
		{"no v1 value", "v2=" + strings.TrimPrefix(good, "v1="), ts, body, now, false},
		{"not hex", "v1=zz", ts, body, now, false},
		{"truncated", good[:len(good)-2], ts, body, now, false},
		{"empty timestamp", good, "", body, now, false},
		{"signed timestamp", good, "+1700000000", body, now, false},
		{"fractional timestamp", good, "1700000000.0", body, now, false},
		{"milliseconds", good, "1700000000000", body, now, false},
		{"huge timestamp", good, "99999999999999999999", body, now, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := core.Verify(secret, c.sig, c.ts, c.body, c.now)
			if c.ok && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !c.ok {
				if err == nil {
					t.Fatal("Verify accepted")
				}
				if !errors.Is(err, &core.Error{Kind: core.KindUnauthorized}) {
					t.Fatalf("kind = %v, want unauthorized", core.KindOf(err))
				}
				if strings.Contains(err.Error(), secret) {
					t.Fatal("error repeats the secret")
				}
			}
		})
	}
}

func TestNewWebhookSecret(t *testing.T) {
	a, err := core.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := core.NewWebhookSecret()
	if !strings.HasPrefix(a, "whsec_") || len(a) != len("whsec_")+44 {
		t.Fatalf("secret %q: want whsec_ and 44 base64 characters (32 bytes)", a)
	}
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if err := core.Verify(a, core.Sign(a, 5, nil), "5", nil, time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookWants(t *testing.T) {
	scored := func(p core.Platform, v int) core.Match {
		return core.Match{Platform: p, Score: &core.Score{Value: v}}
	}
	all := core.Webhook{Active: true, MinScore: 70}
	redditOnly := core.Webhook{Active: true, MinScore: 70, Platforms: []core.Platform{core.Reddit}}
	cases := []struct {
		name string
		w    core.Webhook
		m    core.Match
		want bool
	}{
		{"at min score", all, scored(core.X, 70), true},
		{"above", all, scored(core.Facebook, 100), true},
		{"below", all, scored(core.X, 69), false},
		{"unscored", all, core.Match{Platform: core.X}, false},
		{"inactive", core.Webhook{MinScore: 0}, scored(core.X, 100), false},
		{"min score 0 takes a 0", core.Webhook{Active: true}, scored(core.X, 0), true},
		{"platform listed", redditOnly, scored(core.Reddit, 80), true},
		{"platform not listed", redditOnly, scored(core.X, 80), false},
	}
	for _, c := range cases {
		if got := c.w.Wants(c.m); got != c.want {
			t.Errorf("%s: Wants = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCheckWebhookMinScore(t *testing.T) {
	for n, ok := range map[int]bool{-1: false, 0: true, 70: true, 100: true, 101: false} {
		if err := core.CheckWebhookMinScore(n); (err == nil) != ok {
			t.Errorf("CheckWebhookMinScore(%d) = %v", n, err)
		}
	}
	if core.DefaultWebhookMinScore != 70 {
		t.Fatal("default min score must be 70")
	}
}

func TestParseRetrySchedule(t *testing.T) {
	cases := []struct {
		in   string
		want core.RetrySchedule
		ok   bool
	}{
		{"", core.DefaultRetrySchedule, true},
		{"  ", core.DefaultRetrySchedule, true},
		{"1m,5m,30m", core.RetrySchedule{time.Minute, 5 * time.Minute, 30 * time.Minute}, true},
		{" 10s , 1h ", core.RetrySchedule{10 * time.Second, time.Hour}, true},
		{"1s", core.RetrySchedule{time.Second}, true},
		{"24h", core.RetrySchedule{24 * time.Hour}, true},
		{"1m,,5m", nil, false},
		{"1m,", nil, false},
		{"5", nil, false},
		{"abc", nil, false},
		{"-1m", nil, false},
		{"0s", nil, false},
		{"500ms", core.RetrySchedule{500 * time.Millisecond}, true},
		{"10ms", core.RetrySchedule{10 * time.Millisecond}, true},
		{"9ms", nil, false},
		{"25h", nil, false},
		{strings.Repeat("1m,", 20) + "1m", nil, false},
	}
	for _, c := range cases {
		got, err := core.ParseRetrySchedule(c.in)
		if !c.ok {
			if !errors.Is(err, &core.Error{Kind: core.KindInvalid}) {
				t.Errorf("ParseRetrySchedule(%q) = %v, %v; want invalid", c.in, got, err)
			}
			continue
		}
		if err != nil || got.String() != c.want.String() {
			t.Errorf("ParseRetrySchedule(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if core.DefaultRetrySchedule.Tries() != 4 {
		t.Fatal("default schedule must give 4 tries")
	}
	if got := core.DefaultRetrySchedule.String(); got != "1m0s,5m0s,30m0s" {
		t.Fatalf("String = %s", got)
	}
	// Parsing the default must not hand out the shared slice.
	s, _ := core.ParseRetrySchedule("")
	s[0] = time.Hour
	if core.DefaultRetrySchedule[0] != time.Minute {
		t.Fatal("ParseRetrySchedule returned DefaultRetrySchedule itself")
	}
}

func TestNextDeliveryStep(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s := core.DefaultRetrySchedule
	cases := []struct {
		name      string
		tries     int
		delivered bool
		jitter    float64
		want      core.DeliveryStep
	}{
		{"first try delivered", 0, true, 0, core.DeliveryStep{Status: core.DeliveryDelivered, Tries: 1}},
		{"last try delivered", 3, true, 0, core.DeliveryStep{Status: core.DeliveryDelivered, Tries: 4}},
		{"first try failed", 0, false, 0, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 1, NextAttemptAt: at.Add(time.Minute)}},
		{"second try failed", 1, false, 0, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 2, NextAttemptAt: at.Add(5 * time.Minute)}},
		{"third try failed", 2, false, 0, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 3, NextAttemptAt: at.Add(30 * time.Minute)}},
		{"fourth try failed", 3, false, 0, core.DeliveryStep{Status: core.DeliveryFailed, Tries: 4}},
		{"past the last try", 7, false, 0, core.DeliveryStep{Status: core.DeliveryFailed, Tries: 8}},
		{"negative tries", -3, false, 0, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 1, NextAttemptAt: at.Add(time.Minute)}},
		{"half jitter", 0, false, 0.5, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 1, NextAttemptAt: at.Add(63 * time.Second)}},
		{"jitter 1 ignored", 0, false, 1, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 1, NextAttemptAt: at.Add(time.Minute)}},
		{"negative jitter ignored", 0, false, -0.5, core.DeliveryStep{Status: core.DeliveryQueued, Tries: 1, NextAttemptAt: at.Add(time.Minute)}},
	}
	for _, c := range cases {
		got := core.NextDeliveryStep(c.tries, s, c.delivered, at, c.jitter)
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := core.NextDeliveryStep(0, nil, false, at, 0); got.Status != core.DeliveryFailed || got.Tries != 1 {
		t.Errorf("empty schedule: %+v, want failed after one try", got)
	}
}

func TestNextDeliveryStepJitterBound(t *testing.T) {
	at := time.Unix(0, 0)
	for i := range 1000 {
		j := float64(i) / 1000
		for tries, wait := range core.DefaultRetrySchedule {
			got := core.NextDeliveryStep(tries, core.DefaultRetrySchedule, false, at, j).NextAttemptAt.Sub(at)
			if got < wait || got >= wait+wait/10 {
				t.Fatalf("jitter %v try %d: wait %v outside [%v, %v)", j, tries+1, got, wait, wait+wait/10)
			}
		}
	}
}

func TestDeliveryAttempted(t *testing.T) {
	at := time.Unix(1000, 0)
	d := core.Delivery{ID: "d1", Trigger: core.TriggerScheduled, Status: core.DeliveryQueued}

	d = d.Attempted(core.DefaultRetrySchedule, 500, "http 500", at, 0)
	if d.Status != core.DeliveryQueued || d.Tries != 1 || d.ResponseStatus != 500 || d.Error != "http 500" ||
		!d.LastAttemptAt.Equal(at) || !d.NextAttemptAt.Equal(at.Add(time.Minute)) {
		t.Fatalf("after a 500: %+v", d)
	}
	d = d.Attempted(core.DefaultRetrySchedule, 0, "timeout", at.Add(time.Minute), 0)
	if d.Status != core.DeliveryQueued || d.Tries != 2 || d.ResponseStatus != 0 || d.Error != "timeout" {
		t.Fatalf("after a timeout: %+v", d)
	}
	d = d.Attempted(core.DefaultRetrySchedule, 204, "", at.Add(6*time.Minute), 0)
	if d.Status != core.DeliveryDelivered || d.Tries != 3 || d.Error != "" || !d.NextAttemptAt.IsZero() {
		t.Fatalf("after a 204: %+v", d)
	}

	// The caller may leave errText empty; the reason is filled in.
	e := core.Delivery{Trigger: core.TriggerScheduled}.Attempted(core.DefaultRetrySchedule, 302, "", at, 0)
	if e.Error != "http 302" || e.Status != core.DeliveryQueued {
		t.Fatalf("302 with no reason: %+v", e)
	}
	e = core.Delivery{Trigger: core.TriggerScheduled}.Attempted(core.DefaultRetrySchedule, 0, "", at, 0)
	if e.Error != "no answer" {
		t.Fatalf("no status, no reason: %+v", e)
	}
	// A 2xx that came with a reason (the sender saw something wrong) is not delivered.
	e = core.Delivery{Trigger: core.TriggerScheduled}.Attempted(core.DefaultRetrySchedule, 200, "tls", at, 0)
	if e.Status == core.DeliveryDelivered {
		t.Fatalf("2xx with a reason counted as delivered: %+v", e)
	}

	// A ping has one try.
	p := core.Delivery{Trigger: core.TriggerPing}.Attempted(core.DefaultRetrySchedule, 500, "http 500", at, 0)
	if p.Status != core.DeliveryFailed || p.Tries != 1 || !p.NextAttemptAt.IsZero() {
		t.Fatalf("failed ping: %+v", p)
	}

	// Four failures in a row fail a scheduled delivery.
	f := core.Delivery{Trigger: core.TriggerManual}
	for range 4 {
		f = f.Attempted(core.DefaultRetrySchedule, 503, "http 503", at, 0.3)
	}
	if f.Status != core.DeliveryFailed || f.Tries != 4 || !f.NextAttemptAt.IsZero() {
		t.Fatalf("after four failures: %+v", f)
	}
}

func TestCountFailure(t *testing.T) {
	failed := core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, ResponseStatus: 500, Error: "http 500"}
	cases := []struct {
		name    string
		count   int
		d       core.Delivery
		next    int
		off     bool
		reason  string
		comment string
	}{
		{name: "first failure", count: 0, d: failed, next: 1},
		{name: "fourth failure", count: 3, d: failed, next: 4},
		{name: "fifth failure", count: 4, d: failed, next: 5, off: true,
			reason: "switched off after 5 failed deliveries in a row; last error: http 500"},
		{name: "fifth, a timeout", count: 4, d: core.Delivery{Trigger: core.TriggerManual, Status: core.DeliveryFailed, Error: "timeout"}, next: 5, off: true,
			reason: "switched off after 5 failed deliveries in a row; last error: timeout"},
		{name: "fifth, status only", count: 4, d: core.Delivery{Status: core.DeliveryFailed, ResponseStatus: 502}, next: 5, off: true,
			reason: "switched off after 5 failed deliveries in a row; last error: http 502"},
		{name: "delivered resets", count: 4, d: core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryDelivered}, next: 0},
		{name: "queued changes nothing", count: 4, d: core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, Error: "http 500"}, next: 4},
		{name: "failed ping never counts", count: 4, d: core.Delivery{Trigger: core.TriggerPing, Status: core.DeliveryFailed, Error: "http 500"}, next: 4},
		{name: "delivered ping does not reset", count: 4, d: core.Delivery{Trigger: core.TriggerPing, Status: core.DeliveryDelivered}, next: 4},
	}
	for _, c := range cases {
		next, off, reason := core.CountFailure(c.count, c.d)
		if next != c.next || off != c.off || reason != c.reason {
			t.Errorf("%s: got %d, %v, %q; want %d, %v, %q", c.name, next, off, reason, c.next, c.off, c.reason)
		}
	}
}

func TestWebhookAfterDeliveryAndEnable(t *testing.T) {
	w := core.Webhook{Active: true, MinScore: 70}
	failed := core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, Error: "connect"}
	for i := 1; i < core.MaxConsecutiveFailures; i++ {
		w = w.AfterDelivery(failed)
		if !w.Active || w.ConsecutiveFailures != i {
			t.Fatalf("after %d failures: %+v", i, w)
		}
	}
	w = w.AfterDelivery(core.Delivery{Trigger: core.TriggerPing, Status: core.DeliveryFailed, Error: "connect"})
	if !w.Active {
		t.Fatal("a failed ping switched the webhook off")
	}
	w = w.AfterDelivery(failed)
	if w.Active || w.DisabledReason != "switched off after 5 failed deliveries in a row; last error: connect" {
		t.Fatalf("after 5 failures: %+v", w)
	}
	// More failures of deliveries already queued keep the first reason.
	w2 := w.AfterDelivery(core.Delivery{Status: core.DeliveryFailed, Error: "dns"})
	if w2.Active || w2.DisabledReason != w.DisabledReason {
		t.Fatalf("reason overwritten: %+v", w2)
	}
	w = w.Enable()
	if !w.Active || w.DisabledReason != "" || w.ConsecutiveFailures != 0 {
		t.Fatalf("after Enable: %+v", w)
	}
	w = w.AfterDelivery(failed)
	if !w.Active || w.ConsecutiveFailures != 1 {
		t.Fatalf("after Enable and one failure: %+v", w)
	}
	w = w.AfterDelivery(core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryDelivered})
	if w.ConsecutiveFailures != 0 {
		t.Fatalf("delivered did not reset: %+v", w)
	}
}

func TestDeliveryEnums(t *testing.T) {
	for _, s := range []core.DeliveryStatus{"queued", "delivered", "failed"} {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
	}
	if core.DeliveryStatus("sent").Valid() || core.DeliveryTrigger("auto").Valid() {
		t.Error("unknown value valid")
	}
	for _, tr := range []core.DeliveryTrigger{"scheduled", "manual", "ping"} {
		if !tr.Valid() {
			t.Errorf("%s not valid", tr)
		}
	}
	if core.DeliveryQueued.Final() || !core.DeliveryFailed.Final() || !core.DeliveryDelivered.Final() {
		t.Error("Final wrong")
	}
}

// A channel switched off by a gone answer keeps the service's own words
// and real status as its reason; a webhook keeps the 410 wording.
func TestAfterDeliveryGoneReasonOfChannels(t *testing.T) {
	d := core.Delivery{Event: core.EventMatchCreated, Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, ResponseStatus: 410,
		Error: "slack: the webhook was removed or turned off (no_service), http 404"}
	ch := core.Webhook{ID: "c", Active: true, Kind: core.ChannelSlack}.AfterDelivery(d)
	if ch.Active || ch.DisabledReason != "switched off at once: slack: the webhook was removed or turned off (no_service), http 404" {
		t.Fatalf("channel after a gone answer: %+v", ch)
	}
	d.Error = "http 410"
	wh := core.Webhook{ID: "w", Active: true}.AfterDelivery(d)
	if wh.Active || wh.DisabledReason != "switched off at once: the receiver answered http 410 (Gone)" {
		t.Fatalf("webhook after a 410: %+v", wh)
	}
	// Five failures in a row read as they do for a webhook.
	d = core.Delivery{Event: core.EventMatchCreated, Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, ResponseStatus: 500, Error: "discord: http 500"}
	ch = core.Webhook{ID: "c", Active: true, Kind: core.ChannelDiscord, ConsecutiveFailures: 4}.AfterDelivery(d)
	if ch.Active || ch.DisabledReason != "switched off after 5 failed deliveries in a row; last error: discord: http 500" {
		t.Fatalf("channel after five failures: %+v", ch)
	}
}
