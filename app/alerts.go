package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// MaxAlertMatches is the most matches one alert email carries.
const MaxAlertMatches = 10

// Alerts emails each owner the strongest scored matches never emailed.
type Alerts struct {
	store    ports.AlertStore
	leases   ports.LeaseStore
	mailer   ports.Mailer
	clock    ports.Clock
	log      *slog.Logger
	holder   string
	minScore int
	site     string
	// Metrics counts emails; NoMetrics until set.
	Metrics ports.Metrics
}

// NewAlerts returns the alert sweep.
func NewAlerts(store ports.AlertStore, leases ports.LeaseStore, mailer ports.Mailer, clock ports.Clock, log *slog.Logger,
	holder string, minScore int, site string) *Alerts {
	return &Alerts{store: store, leases: leases, mailer: mailer, clock: clock, log: log, holder: holder, minScore: minScore, site: site,
		Metrics: ports.NoMetrics{}}
}

// Sweep sends one email per owner with pending matches and returns how
// many emails went out. A match is marked emailed only after the mail
// server accepted the message, so a refused or failed send is retried by
// a later sweep; a lease per owner keeps two replicas from mailing the
// same matches.
func (a *Alerts) Sweep(ctx context.Context) (int, error) {
	owners, err := a.store.AlertOwners(ctx, a.minScore)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, o := range owners {
		lease := "alerts:" + o.ID
		ok, err := a.leases.Acquire(ctx, lease, a.holder, 10*time.Minute)
		if err != nil || !ok {
			if err != nil {
				return sent, err
			}
			continue
		}
		err = a.owner(ctx, o)
		_ = a.leases.Release(ctx, lease, a.holder)
		if err != nil {
			a.Metrics.Count(ports.EventAlertsFailed, 1)
			a.log.WarnContext(ctx, "alert email not sent; the next sweep retries", "owner", o.ID, "err", err)
			continue
		}
		a.Metrics.Count(ports.EventAlertsSent, 1)
		sent++
	}
	return sent, nil
}

func (a *Alerts) owner(ctx context.Context, o core.Owner) error {
	// Read under the lease: what another replica marked meanwhile is gone.
	ms, err := a.store.PendingAlerts(ctx, o.ID, a.minScore, MaxAlertMatches)
	if err != nil || len(ms) == 0 {
		return err
	}
	if err := a.mailer.Send(ctx, AlertMail(o, ms, a.site)); err != nil {
		return err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return a.store.MarkEmailed(ctx, o.ID, ids, a.clock.Now())
}

// AlertMail renders the plain-text alert for the matches, strongest first.
func AlertMail(o core.Owner, ms []core.Match, site string) ports.Mail {
	var b strings.Builder
	noun := "matches"
	if len(ms) == 1 {
		noun = "match"
	}
	fmt.Fprintf(&b, "%d new %s at or above your alert score.\n\n", len(ms), noun)
	for i, m := range ms {
		fmt.Fprintf(&b, "%d. %q on %s: score %d, %s\n", i+1, m.Phrase, m.Platform, m.Score.Value, m.Score.Intent)
		fmt.Fprintf(&b, "   %s\n", oneLine(m.Score.Reason))
		fmt.Fprintf(&b, "   %s\n\n", m.Post.URL)
	}
	fmt.Fprintf(&b, "All matches: %s/api/v1/matches\n", site)
	return ports.Mail{To: o.Email, Subject: fmt.Sprintf("earshot: %d new %s", len(ms), noun), Body: b.String()}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Run sweeps every interval until ctx ends.
func (a *Alerts) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := a.Sweep(ctx); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "alert sweep failed", "err", err)
		} else if n > 0 {
			a.log.InfoContext(ctx, "alert emails sent", "emails", n)
		}
	}
}
