package app_test

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// sentMail keeps what it is asked to send; it delivers, as an SMTP
// mailer does.
type sentMail struct {
	mu   sync.Mutex
	sent []ports.Mail
}

func (m *sentMail) Send(_ context.Context, mm ports.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, mm)
	return nil
}

func (m *sentMail) last(t *testing.T) ports.Mail {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no mail sent")
	}
	return m.sent[len(m.sent)-1]
}

// logOnly stands for a server without SMTP.
type logOnly struct{ sentMail }

func (*logOnly) Delivers() bool { return false }

// stepClock is a clock the test moves.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

func ownersOver(t *testing.T) (*gormstore.DB, *app.Owners) {
	db := dbtest.Memory(t)
	os := gormstore.NewOwnerStore(db)
	return db, app.NewOwners(os, app.NewKeys(gormstore.NewKeyStore(db), os, ports.SystemClock{}))
}

// On a deployment with one owner, that owner runs it: a plan limit's
// refusal names the setting that raises it, the same words from the
// phrase service and the webhook gate. Once a second owner exists, it
// sends them to the operator instead.
func TestPlanLimitRefusalOnADeploymentOfOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, owners := ownersOver(t)
	phrases := app.NewPhrases(gormstore.NewPhraseStore(db), core.FreeLimits, ports.SystemClock{})
	hooks := app.NewWebhooks(app.WebhookDeps{Store: gormstore.NewWebhookStore(db), Owners: gormstore.NewOwnerStore(db)},
		app.WebhookConfig{Limits: core.FreeLimits})
	ada, err := owners.Create(ctx, "ada@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := phrases.Add(ctx, ada.ID, "acme crm", "reddit", "smallbusiness", ""); err != nil {
		t.Fatal(err)
	}
	_, _, err = phrases.Add(ctx, ada.ID, "other crm", "reddit", "smallbusiness", "")
	want := "the plan allows 1 phrase per platform (reddit has 1); the operator raises it with EARSHOT_PLAN_PHRASES_PER_PLATFORM"
	if !core.IsKind(err, core.KindPlanLimit) || core.Message(err) != want {
		t.Fatalf("second phrase, one owner: %v\nwant %q", err, want)
	}
	_, err = hooks.List(ctx, ada.ID)
	if want := "the plan allows no webhooks; the operator raises it with EARSHOT_PLAN_WEBHOOKS_PER_PERSON"; core.Message(err) != want {
		t.Fatalf("webhooks, one owner: %v\nwant %q", err, want)
	}
	p, err := phrases.Plan(ctx, ada.ID)
	if err != nil || !p.Usage.RunByOwner() {
		t.Fatalf("Plan of the only owner: %+v, %v", p.Usage, err)
	}

	if _, err := owners.Create(ctx, "bob@example.com", ""); err != nil {
		t.Fatal(err)
	}
	_, _, err = phrases.Add(ctx, ada.ID, "other crm", "reddit", "smallbusiness", "")
	if want := "the plan allows 1 phrase per platform (reddit has 1); ask the operator to raise it"; core.Message(err) != want {
		t.Fatalf("second phrase, two owners: %v\nwant %q", err, want)
	}
	_, err = hooks.List(ctx, ada.ID)
	if want := "the plan allows no webhooks; ask the operator to raise it"; core.Message(err) != want {
		t.Fatalf("webhooks, two owners: %v\nwant %q", err, want)
	}
}

// The console lists owners and changes an owner's address and name;
// the bootstrap owner's owner@localhost can be replaced.
func TestOwnerListAndUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, owners := ownersOver(t)
	boot, err := owners.Bootstrap(ctx)
	if err != nil || boot == nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	bob, err := owners.Create(ctx, "bob@example.com", "Bob")
	if err != nil {
		t.Fatal(err)
	}
	email, name := " Ada@Example.com ", "Ada"
	got, err := owners.Update(ctx, boot.Owner.ID, &email, &name)
	if err != nil || got.Email != "ada@example.com" || got.Name != "Ada" {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	list, err := owners.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != boot.Owner.ID || list[0].Email != "ada@example.com" || list[1].ID != bob.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
	only := "Ada Lovelace"
	if got, err := owners.Update(ctx, bob.ID, nil, &only); err != nil || got.Email != "bob@example.com" || got.Name != only {
		t.Fatalf("name only: %+v, %v", got, err)
	}
	_, err = owners.Update(ctx, bob.ID, &email, nil)
	if !core.IsKind(err, core.KindConflict) {
		t.Fatalf("taken address: %v", err)
	}
	bad := "not an address"
	if _, err := owners.Update(ctx, bob.ID, &bad, nil); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("bad address: %v", err)
	}
	if _, err := owners.Update(ctx, "no-such-owner", nil, &only); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("unknown owner: %v", err)
	}
}

var confirmLink = regexp.MustCompile(`http://earshot\.test/app/account/confirm/([A-Za-z0-9_-]{43})`)

// An owner's new address is theirs only once a link sent to it is
// opened, once and within the hour; the old address is told.
func TestAddressChangeConfirmedByLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, owners := ownersOver(t)
	mail := &sentMail{}
	clock := &stepClock{now: time.Now()}
	changes := app.NewAddressChanges(app.AddressChangeDeps{Owners: gormstore.NewOwnerStore(db), Mailer: mail, Clock: clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), SiteURL: func() string { return "http://earshot.test/" }})
	boot, err := owners.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := boot.Owner.ID
	if err := changes.Request(ctx, id, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	m := mail.last(t)
	token := confirmLink.FindStringSubmatch(m.Body)
	if m.To != "ada@example.com" || !m.Secret || token == nil {
		t.Fatalf("confirmation mail: %+v", m)
	}
	if o, _ := owners.List(ctx); o[0].Email != app.BootstrapEmail {
		t.Fatalf("the address changed before its link was opened: %q", o[0].Email)
	}
	o, _, err := changes.Confirm(ctx, token[1])
	if err != nil || o.ID != id || o.Email != "ada@example.com" {
		t.Fatalf("Confirm = %+v, %v", o, err)
	}
	if n := mail.last(t); n.To != app.BootstrapEmail || !strings.Contains(n.Body, "ada@example.com") || n.Secret {
		t.Fatalf("notice to the old address: %+v", n)
	}
	if _, _, err := changes.Confirm(ctx, token[1]); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("second use: %v", err)
	}

	// Past the hour the link is dead.
	if err := changes.Request(ctx, id, "late@example.com"); err != nil {
		t.Fatal(err)
	}
	late := confirmLink.FindStringSubmatch(mail.last(t).Body)
	clock.now = clock.now.Add(core.EmailChangeTTL + time.Minute)
	if _, _, err := changes.Confirm(ctx, late[1]); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("expired link: %v", err)
	}

	// An address another owner took meanwhile is refused at the link.
	if err := changes.Request(ctx, id, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	taken := confirmLink.FindStringSubmatch(mail.last(t).Body)
	if _, err := owners.Create(ctx, "bob@example.com", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := changes.Confirm(ctx, taken[1]); !core.IsKind(err, core.KindConflict) {
		t.Fatalf("taken address: %v", err)
	}

	if err := changes.Request(ctx, id, "ADA@example.com"); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("the address it has: %v", err)
	}
	if err := changes.Request(ctx, id, "nope"); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("not an address: %v", err)
	}
	silent := app.NewAddressChanges(app.AddressChangeDeps{Owners: gormstore.NewOwnerStore(db), Mailer: &logOnly{},
		SiteURL: func() string { return "http://earshot.test" }})
	err = silent.Request(ctx, id, "new@example.com")
	if !core.IsKind(err, core.KindUnavailable) || !strings.Contains(core.Message(err), "earshot admin owner update") {
		t.Fatalf("without SMTP: %v", err)
	}
}
