package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
)

// A signed-in owner can make the service mail any address a link, so
// the links an owner asks for are bounded: 3 a minute, past which the
// request is refused with KindRateLimited and nothing is sent; the next
// minute admits again.
func TestAddressChangeMailsAreLimited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &sentMail{}
	clock := &stepClock{now: time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)}
	changes := app.NewAddressChanges(app.AddressChangeDeps{Owners: gormstore.NewOwnerStore(db), Mailer: mail, Clock: clock,
		Limiter: ratelimit.NewMemory(clock.Now), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SiteURL: func() string { return "http://earshot.test/" }})
	boot, err := owners.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		err := changes.Request(ctx, boot.Owner.ID, fmt.Sprintf("v%d@example.com", i))
		if i < 3 && err != nil || i >= 3 && !core.IsKind(err, core.KindRateLimited) {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if n := len(mail.sent); n != 3 {
		t.Fatalf("%d confirmation mails sent, want 3", n)
	}
	clock.now = clock.now.Add(time.Minute)
	if err := changes.Request(ctx, boot.Owner.ID, "next@example.com"); err != nil {
		t.Fatalf("the next minute: %v", err)
	}
}
