package core

import "time"

// NotificationKind says what a notification is about.
type NotificationKind string

const (
	// NotifyAccountHealth: a connected account's state or issue changed
	// (core/health decides when, and what it says).
	NotifyAccountHealth NotificationKind = "account.health"
	// NotifyWebhookOff: a webhook switched itself off after failed
	// deliveries.
	NotifyWebhookOff NotificationKind = "webhook.disabled"
)

// MaxNotifications is how many notifications an owner keeps: older ones
// are dropped as new ones come, unless an email for one is still owed.
const MaxNotifications = 200

// Notification is one message to an owner, listed in the dashboard and,
// when it needs the owner to act, also emailed once.
type Notification struct {
	ID        string
	OwnerID   string
	Kind      NotificationKind
	SubjectID string   // the account or the webhook it is about
	Platform  Platform // the account's platform; empty for a webhook
	// Severity, State, Issue and Action come from the account-health
	// model for account notifications (alert, info or recovery; the new
	// view's state, issue and action); a webhook's switch-off is an alert
	// with no state.
	Severity string
	State    string
	Issue    string
	Action   string
	Title    string // one line, the email's subject
	Message  string
	// Email is set when the notification needs the owner to act: it is
	// then emailed once.
	Email     bool
	CreatedAt time.Time
	ReadAt    time.Time // zero while unread
	EmailedAt time.Time // zero until the mail server accepted it
}

// Read reports whether the owner has marked it read.
func (n Notification) Read() bool { return !n.ReadAt.IsZero() }
