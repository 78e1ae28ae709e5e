package app_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
)

// An owner who asked for a link to a mistyped address, then confirmed the
// right one, is not left exposed to whoever reads the mistyped mailbox.
func TestConfirmedChangeVoidsOlderLinks(t *testing.T) {
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &sentMail{}
	changes := addressChanges(gormstore.NewOwnerStore(db), mail)
	boot, err := owners.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := changes.Request(ctx, boot.Owner.ID, "ada@exmaple.com"); err != nil {
		t.Fatal(err)
	}
	typo := confirmLink.FindStringSubmatch(mail.last(t).Body)
	if err := changes.Request(ctx, boot.Owner.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	right := confirmLink.FindStringSubmatch(mail.last(t).Body)
	if _, _, err := changes.Confirm(ctx, right[1]); err != nil {
		t.Fatal(err)
	}
	if o, _, err := changes.Confirm(ctx, typo[1]); err == nil {
		t.Fatalf("the older link still changed the address, to %q", o.Email)
	}
}

// A sign-in link sitting in the mailbox the owner moved away from stops
// working once the new address is confirmed.
func TestSignInLinkToOldAddress(t *testing.T) {
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &sentMail{}
	clock := &stepClock{now: time.Now()}
	changes := app.NewAddressChanges(app.AddressChangeDeps{Owners: gormstore.NewOwnerStore(db), Mailer: mail, Clock: clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), SiteURL: func() string { return "http://earshot.test" }})
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Mailer: mail, Clock: clock}, app.SessionConfig{})
	boot, _ := owners.Bootstrap(ctx)
	link, err := sessions.LoginLink(ctx, boot.Owner.ID) // mailed to the old address
	if err != nil {
		t.Fatal(err)
	}
	if err := changes.Request(ctx, boot.Owner.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	tok := confirmLink.FindStringSubmatch(mail.last(t).Body)
	if _, _, err := changes.Confirm(ctx, tok[1]); err != nil {
		t.Fatal(err)
	}
	old := link[strings.LastIndex(link, "/")+1:]
	if _, _, err := sessions.SignIn(ctx, old); err == nil {
		t.Fatal("a sign-in link mailed to the old address still signs in after the change")
	}
}

// The operator's change of an owner's address (earshot admin owner
// update --email) voids the links sent before, as a confirmed change
// does; a change of the name alone leaves them.
func TestOwnerUpdateVoidsLinksToTheOldAddress(t *testing.T) {
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &sentMail{}
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Mailer: mail, Clock: &stepClock{now: time.Now()}}, app.SessionConfig{})
	boot, _ := owners.Bootstrap(ctx)
	token := func(link string) string { return link[strings.LastIndex(link, "/")+1:] }
	kept, err := sessions.LoginLink(ctx, boot.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	name := "Ada"
	if _, err := owners.Update(ctx, boot.Owner.ID, nil, &name); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessions.SignIn(ctx, token(kept)); err != nil {
		t.Fatalf("a link after a change of the name alone: %v", err)
	}
	old, err := sessions.LoginLink(ctx, boot.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	email := "ada@example.com"
	if _, err := owners.Update(ctx, boot.Owner.ID, &email, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessions.SignIn(ctx, token(old)); err == nil {
		t.Fatal("a sign-in link mailed to the old address still signs in after the operator changed it")
	}
}
