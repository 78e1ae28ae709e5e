package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// downgraded is a webhook service and a channel service over w's
// database, with limits.
func downgraded(t *testing.T, w world, limits core.Limits) (*Webhooks, *Channels) {
	t.Helper()
	sealer, err := core.NewSealer(testSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	h := NewWebhooks(WebhookDeps{Store: gormstore.NewWebhookStore(w.db), Sealer: sealer, Log: quiet},
		WebhookConfig{Limits: limits, AllowPrivate: true})
	return h, NewChannels(ChannelDeps{Webhooks: h, Store: gormstore.NewChannelStore(w.db)})
}

// An operator who lowers the webhook limit to 0 leaves the webhooks and
// channels made before: their owner can still list and read them, switch
// them off or on, change them, read their logs and delete them, but add
// none, test none, send none again, rotate no secret and replay nothing.
// An owner with none is refused everything, as on a Free plan from the
// start.
func TestWebhooksKeptAfterDowngrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o, other := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")

	proHooks, proChans := downgraded(t, w, core.Limits{WebhooksPerPerson: 2})
	hook, _, err := proHooks.Create(ctx, o.ID, "https://hooks.example.com/in", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A Slack incoming webhook's address (https://api.slack.com/messaging/webhooks).
	ch, err := proChans.Create(ctx, o.ID, ports.NewChannel{Kind: "slack", URL: "https://hooks.slack.com/services/T0/B0/secretpart"})
	if err != nil {
		t.Fatal(err)
	}

	hooks, chans := downgraded(t, w, core.FreeLimits)
	off, min := false, 55
	for name, err := range map[string]error{
		"keep":         hooks.Keep(ctx, o.ID),
		"channel keep": chans.Keep(ctx, o.ID),
		"list":         func() error { l, err := hooks.List(ctx, o.ID); return want(err, len(l) == 1) }(),
		"channel list": func() error { l, err := chans.List(ctx, o.ID); return want(err, len(l) == 1) }(),
		"all":          func() error { l, err := chans.All(ctx, o.ID); return want(err, len(l) == 2) }(),
		"channel get":  func() error { _, err := chans.Get(ctx, o.ID, ch.ID); return err }(),
		"log":          func() error { _, err := hooks.Deliveries(ctx, o.ID, hook.ID); return err }(),
		"channel log":  func() error { _, err := chans.Deliveries(ctx, o.ID, ch.ID); return err }(),
		"switch off": func() error {
			u, err := hooks.Update(ctx, o.ID, hook.ID, ports.WebhookChange{Active: &off})
			return want(err, !u.Active)
		}(),
		"channel off": func() error {
			u, err := chans.Update(ctx, o.ID, ch.ID, ports.ChannelChange{Active: &off})
			return want(err, !u.Active)
		}(),
		"change": func() error {
			u, err := hooks.Update(ctx, o.ID, hook.ID, ports.WebhookChange{MinScore: &min})
			return want(err, u.MinScore == 55)
		}(),
		"channel change": func() error {
			u, err := chans.Update(ctx, o.ID, ch.ID, ports.ChannelChange{MinScore: &min})
			return want(err, u.MinScore == 55)
		}(),
		"unknown is 404":     func() error { _, err := chans.Get(ctx, o.ID, "no-such-id"); return notFoundIs(err) }(),
		"unknown log is 404": func() error { _, err := hooks.Deliveries(ctx, o.ID, "no-such-id"); return notFoundIs(err) }(),
		"gate still refuses": func() error { return notPlan(hooks.Gate(ctx)) }(),
	} {
		if err != nil {
			t.Errorf("%s after the limit went to 0: %v", name, err)
		}
	}

	for name, err := range map[string]error{
		"create": func() error {
			_, _, err := hooks.Create(ctx, o.ID, "https://hooks.example.com/2", nil, nil)
			return err
		}(),
		"channel create": func() error {
			_, err := chans.Create(ctx, o.ID, ports.NewChannel{Kind: "ntfy", URL: "https://ntfy.sh/t"})
			return err
		}(),
		"test":          func() error { _, err := hooks.Test(ctx, o.ID, hook.ID, nil); return err }(),
		"channel test":  func() error { _, err := chans.Test(ctx, o.ID, ch.ID, nil); return err }(),
		"retry":         func() error { _, err := hooks.Retry(ctx, o.ID, hook.ID, "d", nil); return err }(),
		"channel retry": func() error { _, err := chans.Retry(ctx, o.ID, ch.ID, "d", nil); return err }(),
		"rotate":        func() error { _, _, err := hooks.RotateSecret(ctx, o.ID, hook.ID, nil); return err }(),
		"replay": func() error {
			_, err := hooks.Replay(ctx, o.ID, hook.ID, time.Now().Add(-time.Hour), time.Time{}, nil)
			return err
		}(),
		"channel replay": func() error {
			_, err := chans.Replay(ctx, o.ID, ch.ID, time.Now().Add(-time.Hour), time.Time{}, nil)
			return err
		}(),
		"other's keep": hooks.Keep(ctx, other.ID),
		"other's list": func() error { _, err := hooks.List(ctx, other.ID); return err }(),
		"other's all":  func() error { _, err := chans.All(ctx, other.ID); return err }(),
		"other's update": func() error {
			_, err := hooks.Update(ctx, other.ID, hook.ID, ports.WebhookChange{Active: &off})
			return err
		}(),
		"other's delete":  hooks.Delete(ctx, other.ID, hook.ID),
		"other's log":     func() error { _, err := chans.Deliveries(ctx, other.ID, ch.ID); return err }(),
		"other's channel": func() error { _, err := chans.Get(ctx, other.ID, ch.ID); return err }(),
	} {
		if !core.IsKind(err, core.KindPlanLimit) {
			t.Errorf("%s after the limit went to 0: %v, want plan_limit", name, err)
		}
	}

	if err := hooks.Delete(ctx, o.ID, hook.ID); err != nil {
		t.Fatalf("deleting the webhook after the limit went to 0: %v", err)
	}
	if err := chans.Delete(ctx, o.ID, ch.ID); err != nil {
		t.Fatalf("deleting the channel after the limit went to 0: %v", err)
	}
	// With none left, the owner is one of the Free plan's.
	if _, err := chans.All(ctx, o.ID); !core.IsKind(err, core.KindPlanLimit) {
		t.Fatalf("listing with none left: %v, want plan_limit", err)
	}
}

// want is err, or an error when ok is false.
func want(err error, ok bool) error {
	if err == nil && !ok {
		return core.Errorf(core.KindInternal, "not the answer expected")
	}
	return err
}

func notFoundIs(err error) error {
	if core.IsKind(err, core.KindNotFound) {
		return nil
	}
	return core.Errorf(core.KindInternal, "want not found, got %v", err)
}

func notPlan(err error) error {
	if core.IsKind(err, core.KindPlanLimit) {
		return nil
	}
	return core.Errorf(core.KindInternal, "Gate: want plan_limit, got %v", err)
}
