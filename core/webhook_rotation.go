package core

import "time"

// Bounds of a secret rotation's overlap: the time the replaced secret
// keeps signing beside the new one, so that receivers can switch to the
// new secret at their own pace. Zero stops the old secret at once (a
// secret that leaked); a week is room for a slow deploy, not a second
// permanent secret.
const (
	DefaultSecretOverlap = 24 * time.Hour
	MaxSecretOverlap     = 7 * 24 * time.Hour
)

// SecretOverlapEnd returns when a secret replaced at time at stops
// signing beside the new one: at+overlap, or the zero time when overlap
// is 0 and it stops at once. A secret replaced by an earlier rotation is
// forgotten either way, so at most two secrets ever sign. KindInvalid
// unless overlap is 0 to MaxSecretOverlap.
func SecretOverlapEnd(at time.Time, overlap time.Duration) (time.Time, error) {
	if overlap < 0 || overlap > MaxSecretOverlap {
		return time.Time{}, Errorf(KindInvalid, "overlap must be 0 to 7 days (%d seconds)", int(MaxSecretOverlap/time.Second))
	}
	if overlap == 0 {
		return time.Time{}, nil
	}
	return at.Add(overlap), nil
}

// PreviousSecretSigns reports whether the secret the last rotation
// replaced still signs a message sent at time at: the overlap runs up to,
// not including, PreviousSecretUntil.
func (w Webhook) PreviousSecretSigns(at time.Time) bool {
	return !w.PreviousSecretUntil.IsZero() && at.Before(w.PreviousSecretUntil)
}

// SigningSecrets returns the secrets that sign a message of w sent at
// time at, given its current secret and the previous one (empty when none
// is kept): the current one, then the previous one while its overlap
// runs. The first keys X-Service-Signature, which holds one value in the
// spec; each keys one value of webhook-signature, in this order
// (SignStandardEach).
func (w Webhook) SigningSecrets(current, previous string, at time.Time) []string {
	if previous != "" && w.PreviousSecretSigns(at) {
		return []string{current, previous}
	}
	return []string{current}
}
