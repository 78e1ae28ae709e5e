package app

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A delivery that does not exist is not found, whether the webhook is
// switched on or off; the switched-off refusal is for real deliveries.
func TestRetryOfUnknownDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "retry@example.com")
	h := newHooks(t, w, DeliveryConfig{})
	wh, _ := h.webhook(t, o.ID, 0)
	if _, err := h.Retry(ctx, o.ID, wh.ID, "no-such-delivery", nil); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("unknown delivery of an active webhook: %v", err)
	}
	off := false
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, "no-such-delivery", nil); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("unknown delivery of a switched-off webhook: %v", err)
	}
	if _, err := h.Retry(ctx, o.ID, wh.ID, "\x00", nil); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("a delivery id that cannot exist: %v", err)
	}
}
