package core

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// RetrySchedule is the wait before each retry of a delivery: the first
// entry after the first try failed, and so on. A delivery gets
// len(schedule)+1 tries in all.
type RetrySchedule []time.Duration

// DefaultRetrySchedule is the spec's schedule: retries after 1, 5 and 30
// minutes, 4 tries in all.
var DefaultRetrySchedule = RetrySchedule{time.Minute, 5 * time.Minute, 30 * time.Minute}

// Bounds of a schedule an operator may set: enough room to tune it, not
// enough to keep a delivery queued for weeks.
const (
	maxRetries   = 20
	minRetryWait = 10 * time.Millisecond // test set-ups retry fast; none spins
	maxRetryWait = 24 * time.Hour
)

// MaxRetryJitter is the largest share of a wait added as jitter, so that
// deliveries that failed together do not all retry in the same second.
const MaxRetryJitter = 0.1

// ParseRetrySchedule reads a comma-separated list of Go durations such as
// "1m,5m,30m". An empty or blank string gives DefaultRetrySchedule. Each
// wait is 10ms to 24h and there are at most 20; anything else is a
// KindInvalid error.
func ParseRetrySchedule(s string) (RetrySchedule, error) {
	if strings.TrimSpace(s) == "" {
		return append(RetrySchedule(nil), DefaultRetrySchedule...), nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxRetries {
		return nil, Errorf(KindInvalid, "retry schedule has more than %d waits", maxRetries)
	}
	out := make(RetrySchedule, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		d, err := time.ParseDuration(p)
		if err != nil {
			return nil, Errorf(KindInvalid, "retry schedule: %q is not a duration such as 5m", p)
		}
		if d < minRetryWait || d > maxRetryWait {
			return nil, Errorf(KindInvalid, "retry schedule: %s is outside 10ms to 24h", p)
		}
		out = append(out, d)
	}
	return out, nil
}

// Tries is how many attempts a delivery gets in all.
func (s RetrySchedule) Tries() int { return len(s) + 1 }

// String gives the schedule back in the form ParseRetrySchedule reads.
func (s RetrySchedule) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// DeliveryStep is where a delivery stands after an attempt.
type DeliveryStep struct {
	Status        DeliveryStatus
	Tries         int
	NextAttemptAt time.Time // zero unless Status is DeliveryQueued
}

// NextDeliveryStep moves a delivery on after one attempt made at time at.
// tries counts the attempts before this one. A delivered attempt ends the
// delivery; a failed one queues it again after the next wait of the
// schedule, or marks it failed when that was the last try.
//
// jitter, in [0, 1), comes from the caller (a random source in production,
// a fixed value in tests); the wait grows by jitter*MaxRetryJitter of
// itself. A value outside [0, 1) counts as 0.
func NextDeliveryStep(tries int, schedule RetrySchedule, delivered bool, at time.Time, jitter float64) DeliveryStep {
	// The count stops at math.MaxInt: wrapped, it would index the schedule.
	tries = min(max(tries, 0), math.MaxInt-1) + 1
	if delivered {
		return DeliveryStep{Status: DeliveryDelivered, Tries: tries}
	}
	if tries >= schedule.Tries() {
		return DeliveryStep{Status: DeliveryFailed, Tries: tries}
	}
	if !(jitter >= 0 && jitter < 1) { // also catches NaN
		jitter = 0
	}
	wait := schedule[tries-1]
	wait += time.Duration(math.Floor(float64(wait) * MaxRetryJitter * jitter))
	return DeliveryStep{Status: DeliveryQueued, Tries: tries, NextAttemptAt: at.Add(wait)}
}

// Attempted returns d after an attempt made at time at that got the HTTP
// status (0 when no answer came) and the plain failure reason errText
// (empty when the answer was 2xx). A ping gets a single try: it reports
// at once what the receiver answered, so retrying it would tell nobody.
// A 410 (Gone) to any other message ends it at once, failed (see Gone).
func (d Delivery) Attempted(schedule RetrySchedule, status int, errText string, at time.Time, jitter float64) Delivery {
	if d.Trigger == TriggerPing {
		schedule = nil
	}
	delivered := errText == "" && status >= 200 && status <= 299
	if !delivered && errText == "" {
		errText = "no answer"
		if status != 0 {
			errText = fmt.Sprintf("http %d", status)
		}
	}
	if !delivered && status == statusGone && d.Trigger != TriggerPing {
		// The receiver asked for no more messages: no retry follows, and
		// CountFailure switches the webhook off.
		schedule = nil
	}
	step := NextDeliveryStep(d.Tries, schedule, delivered, at, jitter)
	d.Status = step.Status
	d.Tries = step.Tries
	d.NextAttemptAt = step.NextAttemptAt
	d.LastAttemptAt = at
	d.ResponseStatus = status
	d.Error = ""
	if !delivered {
		d.Error = errText
	}
	return d
}

// MaxConsecutiveFailures is how many deliveries in a row may fail before
// the webhook switches itself off.
const MaxConsecutiveFailures = 5

// CountFailure applies the auto-disable rule. Given the webhook's count of
// failed deliveries in a row and a delivery d, it returns the new count and
// whether the webhook switches off, with the reason to record.
//
// Only final outcomes of real messages count: a delivered one resets the
// count, a failed one adds to it, and at MaxConsecutiveFailures the webhook
// switches off; a delivery that ended on a 410 (Gone) switches it off at
// once. A ping never changes the count, whatever its outcome, so
// testing a broken receiver cannot switch a webhook off and a passing test
// does not hide real failures. A queued delivery changes nothing yet.
//
// The count is read and written by whoever stores it, in one transaction,
// so that two deliveries finishing together both count.
func CountFailure(consecutive int, d Delivery) (next int, switchOff bool, reason string) {
	if d.Trigger == TriggerPing {
		return consecutive, false, ""
	}
	switch d.Status {
	case DeliveryDelivered:
		return 0, false, ""
	case DeliveryFailed:
		next = max(consecutive, 0) + 1
		if d.Gone() {
			return next, true, "switched off at once: the receiver answered http 410 (Gone)"
		}
		if next < MaxConsecutiveFailures {
			return next, false, ""
		}
		last := d.Error
		if last == "" && d.ResponseStatus != 0 {
			last = fmt.Sprintf("http %d", d.ResponseStatus)
		}
		if last == "" {
			last = "unknown"
		}
		return next, true, fmt.Sprintf("switched off after %d failed deliveries in a row; last error: %s", next, last)
	}
	return consecutive, false, ""
}

// HTTP statuses with a meaning of their own to a sender. core does not
// import net/http for three numbers.
const (
	statusGone               = 410
	statusTooManyRequests    = 429
	statusServiceUnavailable = 503
)

// Gone reports whether d, a message other than a ping, ended on a 410
// answer: the receiver says the address is gone for good, as Standard
// Webhooks has it, so the webhook switches off at once rather than after
// MaxConsecutiveFailures. A ping answered 410 only reports it: the owner
// is looking at the answer, and a test never switches a webhook off.
func (d Delivery) Gone() bool {
	return d.Trigger != TriggerPing && d.Status == DeliveryFailed && d.ResponseStatus == statusGone
}

// MaxRetryAfter bounds the wait a receiver's Retry-After may add: the
// value is the receiver's to choose, and a year would hold the delivery
// and its place in the queue for a year. A day is the longest wait the
// retry schedule itself allows.
const MaxRetryAfter = maxRetryWait

// maxRetryAfterLen bounds the Retry-After value read: an HTTP date is
// 29 characters, the longest form (RFC 850) 38.
const maxRetryAfterLen = 64

// ParseRetryAfter reads a Retry-After header value, either whole seconds
// (digits only) or an HTTP date in one of the three forms HTTP allows,
// and returns the wait it asks for from now, at most MaxRetryAfter. ok is
// false when the value is empty, malformed, or asks for no wait (zero
// seconds, a date not after now): the answer then changes nothing.
func ParseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxRetryAfterLen {
		return 0, false
	}
	if digitsOnly(v) {
		// More digits than a day's seconds can have is past the cap, and
		// reading them would overflow; leading zeros count for nothing.
		v = strings.TrimLeft(v, "0")
		if len(v) > 9 {
			return MaxRetryAfter, true
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, false
		}
		return min(time.Duration(n)*time.Second, MaxRetryAfter), true
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			if d := t.Sub(now); d > 0 {
				return min(d, MaxRetryAfter), true
			}
			return 0, false
		}
	}
	return 0, false
}

// httpDateLayouts are the HTTP-date forms of RFC 9110 section 5.6.7: the
// preferred IMF-fixdate, then the obsolete RFC 850 and asctime forms, all
// in GMT.
var httpDateLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// WithRetryAfter returns d, just Attempted at time at, with its next try
// moved to at+wait when its last answer was a 429 or a 503 that asked for
// that wait (ParseRetryAfter) and that is later than the schedule's: the
// receiver knows when it will take messages again, and a try before that
// would only count as a failure. A wait earlier than the schedule's
// changes nothing, so a receiver cannot hurry the retries, nor can it
// hold one for longer than MaxRetryAfter. A delivery not queued (its last
// try is spent, or it was delivered) is returned as it is.
func (d Delivery) WithRetryAfter(wait time.Duration, at time.Time) Delivery {
	if d.Status != DeliveryQueued || wait <= 0 ||
		(d.ResponseStatus != statusTooManyRequests && d.ResponseStatus != statusServiceUnavailable) {
		return d
	}
	if next := at.Add(min(wait, MaxRetryAfter)); next.After(d.NextAttemptAt) {
		d.NextAttemptAt = next
	}
	return d
}
