package health

import (
	"time"

	"github.com/earshothq/earshot/core"
)

// Limits of a reported signal. The body only needs its start for the
// markers (a challenge or captcha page names itself early), and a bound
// keeps a helper from making the classifier read megabytes.
const (
	MaxSignalBody     = 8 << 10
	MaxSignalLocation = 2048
)

// How long a transient issue is expected to last: the account's
// retryAfter is the check's time plus this. Platforms' rate-limit windows
// are 15 minutes (x) to an hour (facebook); 15 minutes is the earliest a
// retry is worth making. A network error is retried at the next check.
const (
	RateLimitedRetry  = 15 * time.Minute
	NetworkErrorRetry = time.Minute
	// MaxRetryAfter bounds the wait a platform names: a day, past any
	// platform's rate-limit window, so a wrong header cannot park an
	// account for months.
	MaxRetryAfter = 24 * time.Hour
)

// RawSignal is the part of a signal kept on the account beside the issue
// it gave, so the dashboard can show what the platform said. The body and
// the redirect target are not kept: they can carry personal data or
// tokens.
type RawSignal struct {
	Status     int
	Code       int
	Subcode    int
	NoResponse bool
	ViaProxy   bool
}

// Raw returns the part of s that is kept.
func (s Signal) Raw() RawSignal {
	return RawSignal{Status: s.Status, Code: s.Code, Subcode: s.Subcode, NoResponse: s.NoResponse, ViaProxy: s.ViaProxy}
}

// Record is an account's stored health: lastIssue, rawSignal (nil when
// none), lastCheckedAt and retryAfter (zero when none).
type Record struct {
	LastIssue     Issue
	RawSignal     *RawSignal
	LastCheckedAt time.Time
	RetryAfter    time.Time
}

// CheckSignal validates a reported signal. status is an HTTP status (100
// to 599), required unless noResponse says no answer came, and then it
// must be absent; code and subcode are not negative; location and body
// are bounded. KindInvalid naming the field.
func CheckSignal(s Signal) error {
	if !s.Platform.Valid() {
		return core.Errorf(core.KindInvalid, "platform must be one of reddit, x, facebook")
	}
	switch {
	case s.NoResponse && s.Status != 0:
		return core.Errorf(core.KindInvalid, "status must be absent or 0 when noResponse is true")
	case !s.NoResponse && (s.Status < 100 || s.Status > 599):
		return core.Errorf(core.KindInvalid, "status must be an HTTP status from 100 to 599, or noResponse true when no answer came")
	case s.Code < 0:
		return core.Errorf(core.KindInvalid, "code must not be negative")
	case s.Subcode < 0:
		return core.Errorf(core.KindInvalid, "subcode must not be negative")
	case s.RetryAfter < 0:
		return core.Errorf(core.KindInvalid, "retryAfter must not be negative")
	case len(s.Location) > MaxSignalLocation:
		return core.Errorf(core.KindInvalid, "location must be at most %d bytes", MaxSignalLocation)
	case len(s.Body) > MaxSignalBody:
		return core.Errorf(core.KindInvalid, "body must be at most %d bytes: send the start of the answer", MaxSignalBody)
	}
	return nil
}

// Apply returns the record after a report of s at now. The signal is
// classified; then:
//
//   - a stored challenge (checkpointed, challenge_interstitial,
//     captcha_html) stays until the resolve action clears it: a healthy
//     answer or another kind of issue does not replace it, since the
//     person still has a challenge to complete; only a newer challenge
//     does;
//   - otherwise the new issue replaces the stored one, and a healthy
//     answer clears it, transient or not, with its raw signal;
//   - lastCheckedAt is stamped every time, and retryAfter is set for the
//     transient issues only.
func (r Record) Apply(s Signal, now time.Time) Record {
	observed := Classify(s)
	next := r
	next.LastCheckedAt = now
	if ParseIssue(string(r.LastIssue)).Resolvable() && !observed.Resolvable() {
		return next
	}
	next.LastIssue = observed
	next.RawSignal = nil
	next.RetryAfter = time.Time{}
	if observed != None {
		raw := s.Raw()
		next.RawSignal = &raw
	}
	switch observed {
	case RateLimited:
		// The wait the platform named when it named one: x's budget
		// resets at the time it says, reddit's and facebook's Retry-After.
		next.RetryAfter = now.Add(RateLimitedRetry)
		if s.RetryAfter > 0 {
			next.RetryAfter = now.Add(min(s.RetryAfter, MaxRetryAfter))
		}
	case NetworkError:
		next.RetryAfter = now.Add(NetworkErrorRetry)
	}
	return next
}

// Resolved applies the resolve action at now: a challenge a human has
// completed is cleared with its raw signal and retry time, and the check
// is stamped. Anything else is left alone with ErrNotResolvable (409).
func (r Record) Resolved(now time.Time) (Record, error) {
	if _, err := Resolve(r.LastIssue); err != nil {
		return r, err
	}
	return Record{LastCheckedAt: now}, nil
}

// Status is one account's health as the dashboard and helpers see it: the
// stored record and its view. An account never connected has no id and
// the not_connected view.
type Status struct {
	AccountID string
	Platform  core.Platform
	Record
	View
}

// StatusOf returns the status of an account: connected is false only for
// a platform where the owner has no account.
func StatusOf(accountID string, p core.Platform, connected bool, r Record) Status {
	return Status{AccountID: accountID, Platform: p, Record: r, View: Evaluate(connected, r.LastIssue)}
}
