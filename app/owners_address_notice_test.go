package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// addressChanges is the address change service over owners, mailing
// through mail, at the time the test runs.
func addressChanges(owners ports.OwnerStore, mail ports.Mailer) *app.AddressChanges {
	return app.NewAddressChanges(app.AddressChangeDeps{Owners: owners, Mailer: mail, Clock: &stepClock{now: time.Now()},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), SiteURL: func() string { return "http://earshot.test" }})
}

// refusingTo sends as sentMail does but refuses mail to one address, as
// an SMTP server that rejects a recipient does.
type refusingTo struct {
	sentMail
	to string
}

func (m *refusingTo) Send(ctx context.Context, mm ports.Mail) error {
	if mm.To == m.to {
		return errors.New("550 mailbox unavailable")
	}
	return m.sentMail.Send(ctx, mm)
}

// A change whose notice to the old address could not be sent is made,
// and Confirm says the old address was not told, so the page does not
// claim it was.
func TestAddressChangeNoticeNotSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &refusingTo{to: app.BootstrapEmail}
	changes := addressChanges(gormstore.NewOwnerStore(db), mail)
	boot, err := owners.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := changes.Request(ctx, boot.Owner.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	token := confirmLink.FindStringSubmatch(mail.last(t).Body)
	o, told, err := changes.Confirm(ctx, token[1])
	if err != nil || o.Email != "ada@example.com" || told {
		t.Fatalf("Confirm with the notice refused = %+v, told %v, %v", o, told, err)
	}
	if got, _ := owners.Get(ctx, boot.Owner.ID); got.Email != "ada@example.com" {
		t.Fatalf("the change was not kept: %q", got.Email)
	}

	// Once the old address takes mail, Confirm says it was told.
	mail.to = ""
	if err := changes.Request(ctx, boot.Owner.ID, "ada@example.org"); err != nil {
		t.Fatal(err)
	}
	token = confirmLink.FindStringSubmatch(mail.last(t).Body)
	if o, told, err := changes.Confirm(ctx, token[1]); err != nil || o.Email != "ada@example.org" || !told {
		t.Fatalf("Confirm with the notice sent = %+v, told %v, %v", o, told, err)
	}
	if n := mail.last(t); n.To != "ada@example.com" {
		t.Fatalf("notice went to %q", n.To)
	}
}

// cancelAfterUse cancels the request's context once the change is
// stored, as a browser that leaves right after the POST does.
type cancelAfterUse struct {
	ports.OwnerStore
	cancel context.CancelFunc
}

func (s cancelAfterUse) UseEmailChange(ctx context.Context, hash string, now time.Time) (core.Owner, string, error) {
	o, old, err := s.OwnerStore.UseEmailChange(ctx, hash, now)
	s.cancel()
	return o, old, err
}

// ctxMail refuses a send whose context has ended, as the SMTP sender
// does.
type ctxMail struct{ sentMail }

func (m *ctxMail) Send(ctx context.Context, mm ports.Mail) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.sentMail.Send(ctx, mm)
}

// The notice to the old address goes out when the browser leaves once
// the change is stored: the change stands, so its notice must too.
func TestAddressChangeNoticeOutlivesTheRequest(t *testing.T) {
	t.Parallel()
	db, owners := ownersOver(t)
	mail := &ctxMail{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := addressChanges(cancelAfterUse{gormstore.NewOwnerStore(db), cancel}, mail)
	boot, err := owners.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := changes.Request(ctx, boot.Owner.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	token := confirmLink.FindStringSubmatch(mail.last(t).Body)
	if _, told, err := changes.Confirm(ctx, token[1]); err != nil || !told {
		t.Fatalf("Confirm with the request gone after the change = told %v, %v", told, err)
	}
	if n := mail.last(t); n.To != app.BootstrapEmail {
		t.Fatalf("last mail went to %q, want the old address", n.To)
	}
}
