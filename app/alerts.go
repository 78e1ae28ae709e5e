package app

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

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
	links    *AlertLinks
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
	// Links makes the link each email carries that turns its owner's
	// alert emails off; nil sends the emails without one.
	Links *AlertLinks
}

// NewAlerts returns the alert sweep.
func NewAlerts(d AlertDeps, cfg AlertConfig) *Alerts {
	return &Alerts{store: d.Store, leases: d.Leases, mailer: d.Mailer, holder: d.Holder, minScore: cfg.MinScore, site: cfg.SiteURL, links: cfg.Links,
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
	if err != nil {
		return false, err
	}
	if last.After(now) {
		// Mailed since this sweep began, by another replica: judged by
		// the sweep's start, that email would pass for one stamped by a
		// clock running ahead, that is for none, and the owner would be
		// mailed again minutes after it, the stamp moved back.
		now = a.clock.Now()
	}
	if !sched.Due(now, last) && !sched.Due(now.Add(sweepSlack(sched, last)), last) {
		return false, nil
	}
	limit := MaxAlertMatches
	if sched.Digest() {
		limit = MaxDigestMatches
	}
	ms, err := a.store.PendingAlerts(ctx, o.ID, a.minScore, limit)
	if err != nil || len(ms) == 0 {
		return false, err
	}
	if at := sched.DailyHourBefore(now); !at.IsZero() && now.Sub(at) >= time.Hour+slack && !createdBefore(ms, at) {
		// Past the owner's hour, which found nothing to send: what came
		// since waits for the next one. Only a digest the hour missed
		// (the service was down) goes out late.
		return false, nil
	}
	// Trimmed as the sign-in links' is, so a site address given with a
	// slash makes no "//" in the links.
	site := strings.TrimSuffix(a.site(), "/")
	off := a.links.URL(site, o.ID)
	m := AlertMail(o, ms, site, off)
	if sched.Digest() {
		m = DigestMail(o, sched, ms, site, off)
	}
	if err := a.mailer.Send(ctx, m); err != nil {
		return false, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	// The server has the message: a stop that comes meanwhile must not
	// leave its matches pending, or the next start mails them again; nor
	// must a write that fails for a moment, within the owner's lease.
	return true, again(time.Now().Add(markFor), func() error {
		return a.store.MarkEmailed(context.WithoutCancel(ctx), o.ID, ids, now)
	})
}

// slack is how far a sweep's time may be off the hour and still count
// as on it. Sweeps an hour apart by the ticker read the clock a little
// later or sooner in their hour each time (the wake-up, the read of the
// owners before it): one that read it a moment sooner than the last
// would leave an hourly digest to the sweep after, two hours after the
// last email; and the sweeps on either side of a daily owner's hour may
// both miss it by a moment, which would leave the first digest, and the
// matches that came within the hour, to the next day.
const slack = 30 * time.Second

// sweepSlack is the shift of a sweep's time by which sched, last
// emailed at last, may be due too (see slack): forward for an hourly
// digest; back for the first daily one, whose chosen hour then ends
// slack later. A daily owner emailed before is due as soon as the
// hour begins, however late in it a sweep comes; shifted back, a last
// email stamped a little ahead would read as one stamped too far ahead,
// that is as none.
func sweepSlack(sched core.AlertSchedule, last time.Time) time.Duration {
	switch {
	case sched.Frequency == core.AlertHourly:
		return slack
	case sched.Frequency == core.AlertDaily && last.IsZero():
		return -slack
	}
	return 0
}

// markFor is how long a failed mark of an email the server accepted is
// made again: well within the lease of the alerts' owner and of a
// notification's claim.
const markFor = time.Minute

// createdBefore reports whether one of ms was created before at.
func createdBefore(ms []core.Match, at time.Time) bool {
	for _, m := range ms {
		if m.CreatedAt.Before(at) {
			return true
		}
	}
	return false
}

// AlertMail renders the plain-text alert for the matches, strongest
// first. off is the link that turns the owner's alert emails off (see
// AlertLinks), empty for none.
func AlertMail(o core.Owner, ms []core.Match, site, off string) ports.Mail {
	var b strings.Builder
	noun := "matches"
	if len(ms) == 1 {
		noun = "match"
	}
	fmt.Fprintf(&b, "%d new %s at or above your alert score.\n\n", len(ms), noun)
	for i, m := range ms {
		fmt.Fprintf(&b, "%d. %q on %s: score %d, %s\n", i+1, m.Phrase, m.Platform, m.Score.Value, m.Score.Intent)
		fmt.Fprintf(&b, "   %s\n", oneLine(m.Score.Reason))
		fmt.Fprintf(&b, "   %s\n\n", mailLink(m.Post.URL))
	}
	fmt.Fprintf(&b, "All matches: %s/api/v1/matches\n", site)
	stopLines(&b, core.AlertSchedule{Frequency: core.AlertAtOnce}, site, off)
	return ports.Mail{To: o.Email, Subject: fmt.Sprintf("earshot: %d new %s", len(ms), noun), Body: b.String(), Unsubscribe: off}
}

// DigestMail renders the plain-text digest of the matches, strongest
// first: the first MaxAlertMatches listed, the rest counted. off is as
// for AlertMail.
func DigestMail(o core.Owner, sched core.AlertSchedule, ms []core.Match, site, off string) ports.Mail {
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
		fmt.Fprintf(&b, "   %s\n\n", mailLink(m.Post.URL))
	}
	if rest := len(ms) - len(shown); rest > 0 {
		fmt.Fprintf(&b, "and %d more.\n\n", rest)
	}
	fmt.Fprintf(&b, "All matches: %s/api/v1/matches\n", site)
	stopLines(&b, sched, site, off)
	return ports.Mail{To: o.Email, Subject: fmt.Sprintf("earshot: %s digest, %d new %s", sched.Frequency, len(ms), noun), Body: b.String(),
		Unsubscribe: off}
}

// stopLines ends an alert email with how to have fewer or none: the
// Account page, where the frequency is set, and the link that stops
// them at once, which the mail's List-Unsubscribe header carries too.
func stopLines(b *strings.Builder, sched core.AlertSchedule, site, off string) {
	fmt.Fprintf(b, "\nAlert emails come %s; change it on %s/app/account\n", sched, site)
	if off != "" {
		fmt.Fprintf(b, "Stop these emails: %s\n", off)
	}
}

// oneLine is s as one line of plain text: white space runs, line
// separators among them, made single spaces, and dropped what a reader
// does not see but obeys: control characters and the bidirectional
// controls, which can make the rest of a line read backwards.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\ufeff':
			return -1
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// mailLink is a post's address as one word of plain text: every byte
// that is white space, a control or not ASCII is percent-encoded (RFC
// 3986 section 2.1), so the address cannot end early, break its line or
// read backwards, and opens the same page.
func mailLink(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(u[i])
	}
	return b.String()
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

// AlertsOffPath is where the links that turn alert emails off point,
// under the site address: AlertsOffPath + token.
const AlertsOffPath = "/app/alerts/off/"

// alertsOffPurpose is what an alerts-off token grants, MACed with the
// owner so that a MAC made for another purpose under the same key
// never passes for one of these.
const alertsOffPurpose = "earshot alerts off v1"

// AlertLinks makes and checks the links in alert emails that turn the
// owner's alert emails off, without storing anything: a token is the
// owner's id and the first 16 bytes of an HMAC-SHA256 of the purpose
// and that id, in unpadded base64url. Owners are named by UUIDs (the
// store makes them), so the id takes 16 bytes and the token 32: 43
// characters, the shape of every other token in a path (sign-in links,
// address confirmations), which the request logs write as {token}. A
// 128-bit MAC cannot be guessed, and the link can do nothing but turn
// alerts off, so it never expires; changing EARSHOT_SECRET_KEY voids
// every link sent.
type AlertLinks struct{ key []byte }

// alertLinkKeyLabel derives the links' key from the secret key, so the
// MAC key is neither the secret nor any other key made from it (the
// sealer's of secrets at rest).
const alertLinkKeyLabel = "earshot alert email stop links"

// NewAlertLinks returns the links keyed by a key derived (HKDF-SHA256)
// from secret, the service's secret key (EARSHOT_SECRET_KEY), which
// must be at least 32 bytes.
func NewAlertLinks(secret string) (*AlertLinks, error) {
	if len(secret) < 32 {
		return nil, errors.New("the secret key must be at least 32 bytes")
	}
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, alertLinkKeyLabel, sha256.Size)
	if err != nil {
		return nil, err
	}
	return &AlertLinks{key: key}, nil
}

// Sizes of an alerts-off token: the owner's UUID, then the MAC.
const (
	alertLinkID    = 16
	alertLinkMAC   = 16
	alertLinkBytes = alertLinkID + alertLinkMAC
)

// alertsOffTokenLen is the length of an alerts-off token in unpadded
// base64 (43): anything else is refused before it is decoded.
const alertsOffTokenLen = (alertLinkBytes*8 + 5) / 6

// URL returns the address under site that turns ownerID's alert emails
// off, or "" when l is nil or ownerID is not a UUID in its canonical
// lowercase form (the email then goes without the link, and says where
// on the Account page alerts are turned off).
func (l *AlertLinks) URL(site, ownerID string) string {
	if l == nil {
		return ""
	}
	id, ok := uuidBytes(ownerID)
	if !ok {
		return ""
	}
	tok := append(id, l.mac(ownerID)...)
	// The link goes in List-Unsubscribe too, where a comma separates
	// addresses (RFC 2369) and a mailer refuses it: a site path may hold
	// one (EARSHOT_SITE_URL keeps it), so it is written %2C.
	site = strings.ReplaceAll(strings.TrimSuffix(site, "/"), ",", "%2C")
	return site + AlertsOffPath + base64.RawURLEncoding.EncodeToString(tok)
}

// Owner returns the owner of the link whose token is token, and false
// for anything URL did not make under this key: the length is checked
// before anything is decoded, and the MAC compared in constant time.
func (l *AlertLinks) Owner(token string) (string, bool) {
	if l == nil || len(token) != alertsOffTokenLen {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != alertLinkBytes {
		return "", false
	}
	id := uuidString(b[:alertLinkID])
	if !hmac.Equal(b[alertLinkID:], l.mac(id)) {
		return "", false
	}
	return id, true
}

func (l *AlertLinks) mac(ownerID string) []byte {
	h := hmac.New(sha256.New, l.key)
	h.Write([]byte(alertsOffPurpose))
	h.Write([]byte{0})
	h.Write([]byte(ownerID))
	return h.Sum(nil)[:alertLinkMAC]
}

// uuidBytes returns the 16 bytes of s, a UUID written as the store
// writes it: 8-4-4-4-12 lowercase hex digits. Any other writing is
// refused, so that the id read back from a token is the very string
// the owner is stored under.
func uuidBytes(s string) ([]byte, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, false
	}
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	if err != nil || uuidString(b) != s {
		return nil, false
	}
	return b, true
}

// uuidString writes 16 bytes as uuidBytes reads them.
func uuidString(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// CheckOffLink reports whether token is that of a link that turns alert
// emails off (KindNotFound if not). It changes nothing: opening a link
// (a mail scanner, a preview) must not act on it.
func (a *Alerts) CheckOffLink(token string) error {
	if _, ok := a.links.Owner(token); !ok {
		return errNoOffLink
	}
	return nil
}

// TurnOffByLink turns alert emails off for the owner token names, with
// the same change as choosing "off" on the Account page, and nothing
// else. Doing it again changes nothing more. KindNotFound for a token
// not made here or an owner no longer stored.
func (a *Alerts) TurnOffByLink(ctx context.Context, token string) error {
	owner, ok := a.links.Owner(token)
	if !ok {
		return errNoOffLink
	}
	_, err := a.Schedules().Set(ctx, owner, string(core.AlertOff), 0, "")
	return err
}

var errNoOffLink = core.Errorf(core.KindNotFound, "this link does not turn alert emails off: copy the whole link from the email")
