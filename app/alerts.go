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

// MaxAlertMatches is the most matches one alert email lists.
const MaxAlertMatches = 10

// MaxDigestMatches is the most matches one digest gathers (it lists the
// strongest MaxAlertMatches and counts the rest); more wait for the next.
const MaxDigestMatches = 1000

// Alerts emails each owner the strongest scored matches never emailed.
type Alerts struct {
	store    ports.AlertStore
	leases   ports.LeaseStore
	mailer   ports.Mailer
	clock    ports.Clock
	log      *slog.Logger
	metrics  ports.Metrics
	holder   string
	minScore int
	site     func() string
}

// AlertDeps are the ports the alert sweep uses.
type AlertDeps struct {
	Store   ports.AlertStore
	Leases  ports.LeaseStore
	Mailer  ports.Mailer
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics ports.Metrics // counts emails; nil counts nothing
	// Holder names this process in leases, so two replicas do not mail
	// the same matches.
	Holder string
}

// AlertConfig is the alert sweep's part of the settings.
type AlertConfig struct {
	// MinScore is the least score an alert carries.
	MinScore int
	// SiteURL gives the public address the emails link to; asked at each
	// email, since a server on port 0 knows it only once it listens.
	SiteURL func() string
}

// NewAlerts returns the alert sweep.
func NewAlerts(d AlertDeps, cfg AlertConfig) *Alerts {
	return &Alerts{store: d.Store, leases: d.Leases, mailer: d.Mailer, holder: d.Holder, minScore: cfg.MinScore, site: cfg.SiteURL,
		clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log), metrics: orNoMetrics(d.Metrics)}
}

// Schedules returns the owners' alert schedules the sweep follows.
func (a *Alerts) Schedules() *AlertSchedules { return NewAlertSchedules(a.store) }

// Sweep sends one email per owner with pending matches whose schedule
// is due (core.AlertSchedule.Due) and returns how many emails went out. A match is marked emailed only after the mail
// server accepted the message, so a refused or failed send is retried by
// a later sweep; a lease per owner keeps two replicas from mailing the
// same matches.
func (a *Alerts) Sweep(ctx context.Context) (int, error) {
	owners, err := a.store.AlertOwners(ctx, a.minScore)
	if err != nil {
		return 0, err
	}
	// One time for the whole sweep, read before any send: an owner's
	// last email is stamped with it, so with sweeps an hour apart an
	// hourly digest is due again at the next sweep, not the one after,
	// however long this sweep's sends take.
	now := a.clock.Now()
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
		mailed, err := a.owner(ctx, o, now)
		_ = a.leases.Release(ctx, lease, a.holder)
		if err != nil {
			a.metrics.Count(ports.EventAlertsFailed, 1)
			a.log.WarnContext(ctx, "alert email not sent; the next sweep retries", "owner", o.ID, "err", err)
			continue
		}
		if mailed {
			a.metrics.Count(ports.EventAlertsSent, 1)
			sent++
		}
	}
	return sent, nil
}

// owner mails o's pending matches if o's schedule is due at now, and
// reports whether it did.
func (a *Alerts) owner(ctx context.Context, o core.Owner, now time.Time) (bool, error) {
	// Read under the lease: what another replica marked, and when it
	// last mailed the owner, are seen here.
	sched, last, err := a.store.AlertSchedule(ctx, o.ID)
	if err != nil || !sched.Due(now, last) {
		return false, err
	}
	limit := MaxAlertMatches
	if sched.Digest() {
		limit = MaxDigestMatches
	}
	ms, err := a.store.PendingAlerts(ctx, o.ID, a.minScore, limit)
	if err != nil || len(ms) == 0 {
		return false, err
	}
	if at := sched.DailyHourBefore(now); !at.IsZero() && now.Sub(at) >= time.Hour && !createdBefore(ms, at) {
		// Past the owner's hour, which found nothing to send: what came
		// since waits for the next one. Only a digest the hour missed
		// (the service was down) goes out late.
		return false, nil
	}
	m := AlertMail(o, ms, a.site())
	if sched.Digest() {
		m = DigestMail(o, sched, ms, a.site())
	}
	if err := a.mailer.Send(ctx, m); err != nil {
		return false, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	// The server has the message: a stop that comes meanwhile must not
	// leave its matches pending, or the next start mails them again.
	return true, a.store.MarkEmailed(context.WithoutCancel(ctx), o.ID, ids, now)
}

// createdBefore reports whether one of ms was created before at.
func createdBefore(ms []core.Match, at time.Time) bool {
	for _, m := range ms {
		if m.CreatedAt.Before(at) {
			return true
		}
	}
	return false
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

// DigestMail renders the plain-text digest of the matches, strongest
// first: the first MaxAlertMatches listed, the rest counted.
func DigestMail(o core.Owner, sched core.AlertSchedule, ms []core.Match, site string) ports.Mail {
	var b strings.Builder
	noun := "matches"
	if len(ms) == 1 {
		noun = "match"
	}
	fmt.Fprintf(&b, "%d new %s at or above your alert score since your last alert email.\n\n", len(ms), noun)
	shown := ms[:min(len(ms), MaxAlertMatches)]
	for i, m := range shown {
		fmt.Fprintf(&b, "%d. %q on %s: score %d, %s\n", i+1, m.Phrase, m.Platform, m.Score.Value, m.Score.Intent)
		fmt.Fprintf(&b, "   %s\n", oneLine(m.Score.Reason))
		fmt.Fprintf(&b, "   %s\n\n", m.Post.URL)
	}
	if rest := len(ms) - len(shown); rest > 0 {
		fmt.Fprintf(&b, "and %d more.\n\n", rest)
	}
	fmt.Fprintf(&b, "All matches: %s/api/v1/matches\n", site)
	fmt.Fprintf(&b, "Alert emails come %s; change it on %s/app/account\n", sched, site)
	return ports.Mail{To: o.Email, Subject: fmt.Sprintf("earshot: %s digest, %d new %s", sched.Frequency, len(ms), noun), Body: b.String()}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Run sweeps at start, then every interval, until ctx ends. The sweep
// at start keeps a restart from holding alerts back an interval, and a
// service restarted more often than the interval from never mailing.
func (a *Alerts) Run(ctx context.Context, interval time.Duration) {
	sweep := func() {
		if n, err := a.Sweep(ctx); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "alert sweep failed", "err", err)
		} else if n > 0 {
			a.log.InfoContext(ctx, "alert emails "+mailed(a.mailer), "emails", n)
		}
	}
	sweep()
	every(ctx, interval, nil, sweep)
}

// mailed is what the sweeps' summary lines say became of the mail m
// took: sent, or only written to the log when no mail server is set.
func mailed(m ports.Mailer) string {
	if ports.Delivers(m) {
		return "sent"
	}
	return "written to the log, not sent (no SMTP server configured)"
}
