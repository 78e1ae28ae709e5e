package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// AccountHealth is a connected account with its stored health.
type AccountHealth struct {
	Account core.Account
	Health  health.Record
}

// AccountHealthStore keeps the health of owners' connected accounts. Every
// method is scoped to one owner: another owner's account is KindNotFound.
type AccountHealthStore interface {
	// AccountHealth lists the owner's accounts with their health, oldest
	// first.
	AccountHealth(ctx context.Context, ownerID string) ([]AccountHealth, error)
	// UpdateHealth reads the owner's account under a row lock, calls
	// change with it and stores the record change returns; when change
	// also returns a notification, it is stored in the same transaction
	// (its ID and CreatedAt set, OwnerID taken from ownerID) and the
	// owner's list is trimmed as NotificationStore.AddNotification trims
	// it, so a change of health and its notification are stored together
	// or not at all, and two reports at once see each other's result.
	// An error from change is returned as is and nothing is stored.
	// KindNotFound.
	UpdateHealth(ctx context.Context, ownerID, accountID string,
		change func(AccountHealth) (health.Record, *core.Notification, error)) (AccountHealth, error)
}

// NotificationStore keeps owners' notifications and which of them were
// emailed. Methods that take an owner are scoped to that owner.
type NotificationStore interface {
	// AddNotification stores n, setting its ID and CreatedAt, and drops
	// the owner's oldest notifications beyond core.MaxNotifications,
	// except those whose email is still owed. KindNotFound for an unknown
	// owner.
	AddNotification(ctx context.Context, n *core.Notification) error
	// Notifications returns up to limit of the owner's notifications,
	// newest first, and how many of all of them are unread.
	Notifications(ctx context.Context, ownerID string, limit int) (ns []core.Notification, unread int, err error)
	// UnreadNotifications returns how many of the owner's notifications
	// are unread: every dashboard page shows it, so it reads no more.
	UnreadNotifications(ctx context.Context, ownerID string) (int, error)
	// MarkRead marks the owner's notification read at at; one read
	// already keeps its first time. KindNotFound when id is not the
	// owner's.
	MarkRead(ctx context.Context, ownerID, id string, at time.Time) error
	// MarkAllRead marks every unread notification of the owner read at at
	// and returns how many it marked.
	MarkAllRead(ctx context.Context, ownerID string, at time.Time) (int, error)
	// ClaimEmails leases up to limit notifications of any owner whose
	// email is owed and not leased, oldest first, for lease, so that of
	// several replicas one sends each. A claim that is not followed by
	// MarkEmailed is taken again once its lease runs out.
	ClaimEmails(ctx context.Context, limit int, lease time.Duration) ([]core.Notification, error)
	// MarkEmailed records that the notification's email was accepted at
	// at; it is never claimed again.
	MarkEmailed(ctx context.Context, id string, at time.Time) error
}
