package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// Bounds of the notification list and of the email sender.
const (
	DefaultNotificationPage = 50
	// notificationEmailBatch is how many emails one claim takes: one, so
	// that its lease covers the one send that follows. The sends of a
	// larger claim come one after another, each up to the mail server's
	// bound, and the last of them could outlast the lease, by when
	// another replica may have claimed and sent it.
	notificationEmailBatch = 1
	// notificationEmailLease covers a send that waits for a slow mail
	// server; a claim not marked emailed by then is sent again.
	notificationEmailLease = 5 * time.Minute
)

// NotificationList is one page of an owner's notifications, newest
// first, with the count of all unread ones.
type NotificationList struct {
	Items  []core.Notification
	Unread int
}

// Notifications lists owners' notifications, marks them read, and emails
// those that need the owner once, through the mailer (written to the log
// when no mail server is set).
type Notifications struct {
	store  ports.NotificationStore
	owners ports.OwnerStore
	mailer ports.Mailer
	clock  ports.Clock
	log    *slog.Logger
	site   func() string
	wake   chan struct{}
}

// NotificationDeps are the ports the notification service uses.
type NotificationDeps struct {
	Store  ports.NotificationStore
	Owners ports.OwnerStore
	Mailer ports.Mailer
	Clock  ports.Clock  // nil means the system clock
	Log    *slog.Logger // nil means slog.Default
}

// NewNotifications returns the notification service; site gives the
// public address the emails link to, asked at each email because a
// server on port 0 knows it only once it listens.
func NewNotifications(d NotificationDeps, site func() string) *Notifications {
	return &Notifications{store: d.Store, owners: d.Owners, mailer: d.Mailer, clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log),
		site: site, wake: make(chan struct{}, 1)}
}

// List returns up to limit of the owner's notifications, newest first,
// and the unread count. limit 0 means DefaultNotificationPage; it may not
// pass core.MaxNotifications (KindInvalid).
func (s *Notifications) List(ctx context.Context, ownerID string, limit int) (NotificationList, error) {
	if limit == 0 {
		limit = DefaultNotificationPage
	}
	if limit < 1 || limit > core.MaxNotifications {
		return NotificationList{}, core.Errorf(core.KindInvalid, "limit must be 1 to %d", core.MaxNotifications)
	}
	items, unread, err := s.store.Notifications(ctx, ownerID, limit)
	if err != nil {
		return NotificationList{}, err
	}
	return NotificationList{Items: items, Unread: unread}, nil
}

// Unread returns how many of the owner's notifications are unread.
func (s *Notifications) Unread(ctx context.Context, ownerID string) (int, error) {
	return s.store.UnreadNotifications(ctx, ownerID)
}

// MarkRead marks one of the owner's notifications read. KindNotFound.
func (s *Notifications) MarkRead(ctx context.Context, ownerID, id string) error {
	return s.store.MarkRead(ctx, ownerID, id, s.clock.Now())
}

// MarkAllRead marks every notification of the owner read and returns how
// many were unread.
func (s *Notifications) MarkAllRead(ctx context.Context, ownerID string) (int, error) {
	return s.store.MarkAllRead(ctx, ownerID, s.clock.Now())
}

// WebhookSwitchedOff records that w switched itself off, for its owner's
// list and one email naming the webhook and the reason.
func (s *Notifications) WebhookSwitchedOff(ctx context.Context, w core.Webhook) error {
	if w.Kind.IsChannel() {
		return s.add(ctx, channelSwitchedOff(w))
	}
	name := shortAddress(w.URL)
	n := core.Notification{
		OwnerID: w.OwnerID, Kind: core.NotifyWebhookOff, SubjectID: w.ID, Severity: string(health.Alert),
		Title: "Your webhook " + name + " was switched off",
		Message: fmt.Sprintf("The webhook %s is off. Why: %s. What to do: fix the receiver, then switch the webhook on again on its page "+
			"in the dashboard; or with the API: PATCH /api/v1/webhooks/%s {\"active\": true}. Messages queued meanwhile then go out.",
			name, offReason(w.DisabledReason), w.ID),
		Email: true,
	}
	return s.add(ctx, n)
}

// channelSwitchedOff is the notification of channel w switching itself
// off: the service, the redacted destination and the reason, which is
// the service's own words for a destination gone for good.
func channelSwitchedOff(w core.Webhook) core.Notification {
	name := w.Kind.Label() + " channel " + shortAddress(w.URL)
	return core.Notification{
		OwnerID: w.OwnerID, Kind: core.NotifyWebhookOff, SubjectID: w.ID, Severity: string(health.Alert),
		Title: "Your " + name + " was switched off",
		Message: fmt.Sprintf("The %s is off. Why: %s. What to do: fix the destination (or set a new one), then switch the channel on again "+
			"on its page in the dashboard; or with the API: PATCH /api/v1/channels/%s {\"active\": true}. Messages queued meanwhile then go out.",
			name, offReason(w.DisabledReason), w.ID),
		Email: true,
	}
}

// Bounds of what a switch-off notification repeats: an address is
// shortened to what tells two apart at a glance (the webhook's page has
// it whole), and a reason, which may carry a service's own words, is cut.
const (
	offAddressLen     = 60
	offAddressTailLen = 16
	offReasonLen      = 300
)

// shortAddress is a webhook's address, or a channel's redacted one, as a
// notification names it: whole when short, else its start (the host) and
// its end around an ellipsis; on one line either way.
func shortAddress(u string) string {
	r := []rune(oneLine(u))
	if len(r) <= offAddressLen {
		return string(r)
	}
	return string(r[:offAddressLen-offAddressTailLen-1]) + "…" + string(r[len(r)-offAddressTailLen:])
}

// offReason is the recorded reason as a sentence of the notification:
// one line, so that in the plain-text email it cannot start lines of its
// own, and bounded.
func offReason(reason string) string {
	reason = strings.TrimSuffix(oneLine(reason), ".")
	if reason == "" {
		return "not recorded"
	}
	if len([]rune(reason)) > offReasonLen {
		reason = core.Cut(reason, offReasonLen-1) + "…"
	}
	return reason
}

// add stores n and wakes the email sender.
func (s *Notifications) add(ctx context.Context, n core.Notification) error {
	if err := s.store.AddNotification(ctx, &n); err != nil {
		return err
	}
	s.Poke()
	return nil
}

// SwitchedOff is WebhookSwitchedOff for the delivery worker
// (DeliveryDeps.SwitchedOff), which has no caller to hand an error to:
// a failure is logged.
func (s *Notifications) SwitchedOff(ctx context.Context, w core.Webhook) {
	if err := s.WebhookSwitchedOff(ctx, w); err != nil {
		s.log.WarnContext(ctx, "recording a webhook switch-off for its owner failed", "webhook", w.ID, "owner", w.OwnerID, "err", err)
	}
}

// Poke tells the sender that an email may be owed now. It never blocks.
func (s *Notifications) Poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SendEmails sends every email owed and returns how many the mail server
// accepted. Each is claimed with a lease first, so of several replicas
// one sends it, and marked emailed only once the server accepted it: a
// refused or failed send is tried again when the lease runs out. An
// email that can never be sent as given (KindInvalid: a bad address) is
// given up, with a warning.
func (s *Notifications) SendEmails(ctx context.Context) (int, error) {
	sent := 0
	for {
		batch, err := s.store.ClaimEmails(ctx, notificationEmailBatch, notificationEmailLease)
		if err != nil {
			return sent, err
		}
		for _, n := range batch {
			err := s.send(ctx, n)
			switch {
			case err == nil:
				sent++
			case core.IsKind(err, core.KindInvalid):
				s.log.WarnContext(ctx, "notification email cannot be sent; given up", "notification", n.ID, "owner", n.OwnerID, "err", err)
			default:
				s.log.WarnContext(ctx, "notification email not sent; retried when its claim runs out", "notification", n.ID, "owner", n.OwnerID, "err", err)
				continue
			}
			// The server has it: a stop that comes meanwhile must not
			// leave it owed, or it goes out again once its claim ends;
			// nor must a write that fails for a moment.
			if err := again(time.Now().Add(markFor), func() error {
				return s.store.MarkEmailed(context.WithoutCancel(ctx), n.ID, s.clock.Now())
			}); err != nil {
				return sent, err
			}
		}
		if len(batch) < notificationEmailBatch {
			return sent, nil
		}
	}
}

func (s *Notifications) send(ctx context.Context, n core.Notification) error {
	o, err := s.owners.Owner(ctx, n.OwnerID)
	if err != nil {
		return err
	}
	return s.mailer.Send(ctx, NotificationMail(o, n, s.site()))
}

// NotificationMail renders the plain-text email of a notification.
func NotificationMail(o core.Owner, n core.Notification, site string) ports.Mail {
	var b strings.Builder
	b.WriteString(n.Message)
	b.WriteString("\n\n")
	if n.Kind == core.NotifyAccountHealth {
		fmt.Fprintf(&b, "Account: %s (%s)\nIssue: %s\nWhat to do: %s\n\n", n.Platform, n.SubjectID, n.Issue, strings.ReplaceAll(n.Action, "_", " "))
	}
	if n.Kind == core.NotifyWebhookOff {
		// The page where it is switched on again; a channel's redirects
		// to the channel's.
		fmt.Fprintf(&b, "Its page: %s/app/webhooks/%s\n", strings.TrimSuffix(site, "/"), url.PathEscape(n.SubjectID))
	} else {
		fmt.Fprintf(&b, "Dashboard: %s/app/\n", strings.TrimSuffix(site, "/"))
	}
	return ports.Mail{To: o.Email, Subject: "earshot: " + oneLine(n.Title), Body: b.String()}
}

// Run sends owed emails every interval, and at once when poked, until ctx
// ends.
func (s *Notifications) Run(ctx context.Context, interval time.Duration) {
	send := func() {
		if n, err := s.SendEmails(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "sending notification emails failed", "err", err)
		} else if n > 0 {
			s.log.InfoContext(ctx, "notification emails "+mailed(s.mailer), "emails", n)
		}
	}
	send()
	every(ctx, interval, s.wake, send)
}
