package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// LeaseStore hands out named, timed leases, so that of several replicas
// one does a piece of periodic work (read a community this cycle, email
// an owner) at a time.
type LeaseStore interface {
	// Acquire takes the lease name for holder until ttl from now, when it
	// is free, expired, or held by holder already; ok says whether it was
	// taken.
	Acquire(ctx context.Context, name, holder string, ttl time.Duration) (ok bool, err error)
	// Release gives the lease back if holder holds it.
	Release(ctx context.Context, name, holder string) error
}

// AlertStore finds the scored matches email alerts carry.
type AlertStore interface {
	// AlertOwners returns the owners that have a scored match at or above
	// minScore that was never emailed, leaving out those whose alerts are
	// off.
	AlertOwners(ctx context.Context, minScore int) ([]core.Owner, error)
	// PendingAlerts returns up to limit of the owner's scored matches at
	// or above minScore never emailed, strongest first.
	PendingAlerts(ctx context.Context, ownerID string, minScore, limit int) ([]core.Match, error)
	// MarkEmailed records that the matches went out at at, and that the
	// owner's last alert email went out at at.
	MarkEmailed(ctx context.Context, ownerID string, ids []string, at time.Time) error
	// AlertSchedule returns the owner's alert schedule and when their last
	// alert email went out (zero when none has).
	AlertSchedule(ctx context.Context, ownerID string) (core.AlertSchedule, time.Time, error)
	// SetAlertSchedule stores the owner's alert schedule.
	SetAlertSchedule(ctx context.Context, ownerID string, s core.AlertSchedule) error
}
