package app

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// sendCount answers every message at once, webhook or channel, and
// counts them; no receiver is dialled.
type sendCount struct{ n atomic.Int64 }

func (c *sendCount) Send(context.Context, ports.WebhookMessage) ports.WebhookResult {
	c.n.Add(1)
	return ports.WebhookResult{Status: 204}
}

func (c *sendCount) SendChannel(context.Context, ports.ChannelMessage) ports.WebhookResult {
	c.n.Add(1)
	return ports.WebhookResult{Status: 200}
}

// takeRows is an owner with a webhook and a Slack channel over the
// real services, whose sends sender counts.
type takeRows struct {
	h        *hooks
	chans    *Channels
	sender   *sendCount
	o        core.Owner
	hook, ch core.Webhook
}

// newTakeRows makes the rows of takeRows, named after name.
func newTakeRows(t *testing.T, name string) takeRows {
	t.Helper()
	ctx := context.Background()
	w := newWorld(t)
	r := takeRows{o: w.owner(t, name+"@example.com"), sender: new(sendCount)}
	r.h = newHooksVia(t, w, DeliveryConfig{}, r.sender, nil)
	r.chans = NewChannels(ChannelDeps{Webhooks: r.h.Webhooks, Store: gormstore.NewChannelStore(w.db)})
	var err error
	if r.hook, _, err = r.h.Create(ctx, r.o.ID, "https://hooks.example.com/"+name, nil, nil); err != nil {
		t.Fatal(err)
	}
	// A Slack incoming webhook's address (https://api.slack.com/messaging/webhooks).
	if r.ch, err = r.chans.Create(ctx, r.o.ID, ports.NewChannel{Kind: "slack", URL: "https://hooks.slack.com/services/T0/B0/" + name}); err != nil {
		t.Fatal(err)
	}
	return r
}

// The caller's take is made once the service has decided to send, and
// only then: every refusal of a test, a redelivery or a replay leaves it
// untaken, a delivery that a full log does not hold and a replay from a
// time to come among them; a take that refuses (past the caller's
// limit) refuses the send with its own error, and nothing goes out or
// is queued; one that allows is made once.
func TestOutboundTakeWhereTheServiceSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTakeRows(t, "take")
	h, chans, sender, o, hook, ch := r.h, r.chans, r.sender, r.o, r.hook, r.ch
	at := time.Now().Add(-time.Hour)
	add := func(id string, trigger core.DeliveryTrigger, status core.DeliveryStatus) {
		at = at.Add(time.Second)
		d := core.Delivery{ID: id, WebhookID: hook.ID, OwnerID: o.ID, Event: core.EventMatchCreated, Trigger: trigger,
			Status: status, Payload: []byte(`{}`), CreatedAt: at, NextAttemptAt: at.Add(time.Hour)}
		if err := h.store.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
			t.Fatal(err)
		}
	}
	add("ping", core.TriggerPing, core.DeliveryDelivered)
	add("queued", core.TriggerScheduled, core.DeliveryQueued)
	add("failed", core.TriggerScheduled, core.DeliveryFailed)
	for i := range core.DeliveryLogSize - 3 {
		add(fmt.Sprintf("done%d", i), core.TriggerScheduled, core.DeliveryDelivered)
	}

	var taken int
	count := func(context.Context) error { taken++; return nil }
	past := time.Now().Add(-2 * time.Hour)
	refusals := map[string]func() error{
		"test of an unknown webhook": func() error { _, err := h.Test(ctx, o.ID, "nope", count); return err },
		"test of a channel as a webhook": func() error {
			_, err := h.Test(ctx, o.ID, ch.ID, count)
			return err
		},
		"test of an unknown channel": func() error { _, err := chans.Test(ctx, o.ID, "nope", count); return err },
		"retry of an unknown webhook": func() error {
			_, err := h.Retry(ctx, o.ID, "nope", "failed", count)
			return err
		},
		"retry of a delivery a full log does not hold": func() error {
			_, err := h.Retry(ctx, o.ID, hook.ID, "nope", count)
			return err
		},
		"retry of a ping":   func() error { _, err := h.Retry(ctx, o.ID, hook.ID, "ping", count); return err },
		"retry of a queued": func() error { _, err := h.Retry(ctx, o.ID, hook.ID, "queued", count); return err },
		"replay of an unknown webhook": func() error {
			_, err := h.Replay(ctx, o.ID, "nope", past, time.Time{}, count)
			return err
		},
		"replay from a time to come": func() error {
			_, err := h.Replay(ctx, o.ID, hook.ID, time.Now().Add(time.Hour), time.Time{}, count)
			return err
		},
		"replay of a range that is none": func() error {
			_, err := h.Replay(ctx, o.ID, hook.ID, past, past, count)
			return err
		},
	}
	for name, call := range refusals {
		if err := call(); err == nil {
			t.Errorf("%s: no refusal", name)
		}
		if taken != 0 {
			t.Fatalf("%s: taken", name)
		}
	}
	off := false
	if _, err := h.Update(ctx, o.ID, hook.ID, ports.WebhookChange{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retry(ctx, o.ID, hook.ID, "failed", count); !core.IsKind(err, core.KindConflict) || taken != 0 {
		t.Fatalf("retry of a switched-off webhook: %v, %d taken", err, taken)
	}
	if _, err := h.Replay(ctx, o.ID, hook.ID, past, time.Time{}, count); !core.IsKind(err, core.KindConflict) || taken != 0 {
		t.Fatalf("replay of a switched-off webhook: %v, %d taken", err, taken)
	}
	on := true
	if _, err := h.Update(ctx, o.ID, hook.ID, ports.WebhookChange{Active: &on}); err != nil {
		t.Fatal(err)
	}

	// Past the caller's limit nothing goes out and nothing is queued.
	limited := core.Errorf(core.KindRateLimited, "past the limit")
	refuse := func(context.Context) error { return limited }
	if _, err := h.Test(ctx, o.ID, hook.ID, refuse); !errors.Is(err, limited) {
		t.Fatalf("test past the limit: %v", err)
	}
	if _, err := chans.Test(ctx, o.ID, ch.ID, refuse); !errors.Is(err, limited) {
		t.Fatalf("channel test past the limit: %v", err)
	}
	if _, err := h.Retry(ctx, o.ID, hook.ID, "failed", refuse); !errors.Is(err, limited) {
		t.Fatalf("retry past the limit: %v", err)
	}
	if _, err := h.Replay(ctx, o.ID, hook.ID, past, time.Time{}, refuse); !errors.Is(err, limited) {
		t.Fatalf("replay past the limit: %v", err)
	}
	if n := sender.n.Load(); n != 0 {
		t.Fatalf("%d sent past the limit", n)
	}
	if ds := h.log(t, o.ID, hook.ID); len(ds) != core.DeliveryLogSize || ds[len(ds)-3].Status != core.DeliveryFailed {
		t.Fatalf("the log changed past the limit: %d entries", len(ds))
	}

	// Within it each is taken once.
	if _, err := h.Test(ctx, o.ID, hook.ID, count); err != nil || taken != 1 || sender.n.Load() != 1 {
		t.Fatalf("test: %v, %d taken", err, taken)
	}
	if _, err := chans.Test(ctx, o.ID, ch.ID, count); err != nil || taken != 2 || sender.n.Load() != 2 {
		t.Fatalf("channel test: %v, %d taken", err, taken)
	}
	if d, err := h.Retry(ctx, o.ID, hook.ID, "failed", count); err != nil || taken != 3 || d.Status != core.DeliveryQueued {
		t.Fatalf("retry: %+v %v, %d taken", d, err, taken)
	}
	if _, err := h.Replay(ctx, o.ID, hook.ID, past, time.Time{}, count); err != nil || taken != 4 {
		t.Fatalf("replay: %v, %d taken", err, taken)
	}
	// A nil take counts nothing and refuses nothing.
	if _, err := h.Test(ctx, o.ID, hook.ID, nil); err != nil {
		t.Fatal(err)
	}
}

// A redelivery whose webhook is switched off while its send is taken is
// refused as one asked of a switched-off webhook, and nothing is queued:
// the checks made again as the delivery is queued read the row as it
// then stands, not as it was before the take.
func TestRetrySwitchedOffDuringTheTake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTakeRows(t, "offtake")
	h, o, hook := r.h, r.o, r.hook
	at := time.Now().Add(-time.Hour)
	d := core.Delivery{ID: "failed", WebhookID: hook.ID, OwnerID: o.ID, Event: core.EventMatchCreated, Trigger: core.TriggerScheduled,
		Status: core.DeliveryFailed, Payload: []byte(`{}`), CreatedAt: at, NextAttemptAt: at}
	if err := h.store.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
		t.Fatal(err)
	}
	off := false
	switchOff := func(ctx context.Context) error {
		_, err := h.Update(ctx, o.ID, hook.ID, ports.WebhookChange{Active: &off})
		return err
	}
	if _, err := h.Retry(ctx, o.ID, hook.ID, "failed", switchOff); !core.IsKind(err, core.KindConflict) {
		t.Fatalf("a redelivery of a webhook switched off during its take: %v", err)
	}
	if ds := h.log(t, o.ID, hook.ID); len(ds) != 1 || ds[0].Status != core.DeliveryFailed {
		t.Fatalf("the log after the refusal: %+v", ds)
	}
}

// An embedder that passes no take sends without a limit: a nil take
// refuses none of the six sends, as their comments say.
func TestNilTakeSetsNoLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTakeRows(t, "niltake")
	h, chans, sender, o, hook, ch := r.h, r.chans, r.sender, r.o, r.hook, r.ch
	at := time.Now().Add(-time.Hour)
	for _, row := range []string{hook.ID, ch.ID} {
		d := core.Delivery{ID: row + "-failed", WebhookID: row, OwnerID: o.ID, Event: core.EventMatchCreated, Trigger: core.TriggerScheduled,
			Status: core.DeliveryFailed, Payload: []byte(`{}`), CreatedAt: at, NextAttemptAt: at}
		if err := h.store.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
			t.Fatal(err)
		}
	}
	past := at.Add(-time.Hour)
	for name, call := range map[string]func() error{
		"webhook test":  func() error { _, err := h.Test(ctx, o.ID, hook.ID, nil); return err },
		"channel test":  func() error { _, err := chans.Test(ctx, o.ID, ch.ID, nil); return err },
		"webhook retry": func() error { _, err := h.Retry(ctx, o.ID, hook.ID, hook.ID+"-failed", nil); return err },
		"channel retry": func() error { _, err := chans.Retry(ctx, o.ID, ch.ID, ch.ID+"-failed", nil); return err },
		"webhook replay": func() error {
			_, err := h.Replay(ctx, o.ID, hook.ID, past, time.Time{}, nil)
			return err
		},
		"channel replay": func() error {
			_, err := chans.Replay(ctx, o.ID, ch.ID, past, time.Time{}, nil)
			return err
		},
	} {
		if err := call(); err != nil {
			t.Errorf("%s with a nil take: %v", name, err)
		}
	}
	if n := sender.n.Load(); n != 2 {
		t.Fatalf("%d tests sent with a nil take, want 2", n)
	}
}
