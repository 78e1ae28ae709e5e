package core

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Headers on every webhook message (spec section 6).
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderSignature = "X-Service-Signature"
)

// SignatureTolerance is how far a message's timestamp may be from the
// receiver's clock, either way, before Verify refuses it. It bounds how
// long a captured message can be replayed.
const SignatureTolerance = 300 * time.Second

// WebhookSecretPrefix starts every webhook signing secret.
const WebhookSecretPrefix = "whsec_"

// signatureVersion prefixes each signature value, so the scheme can change
// later without breaking receivers that check only the versions they know.
const signatureVersion = "v1="

// NewWebhookSecret returns a new signing secret: "whsec_" and 32 random
// bytes in unpadded base64url. The whole string, prefix included, is the
// HMAC key, so a receiver uses it exactly as shown.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return WebhookSecretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Sign returns the X-Service-Signature value for a message: "v1=" and the
// hex HMAC-SHA256 of "<timestamp>.<body>", keyed with secret as is.
// timestamp is the X-Service-Timestamp value, seconds since 1970.
func Sign(secret string, timestamp int64, body []byte) string {
	return signatureVersion + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret string, timestamp int64, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(strconv.AppendInt(nil, timestamp, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a received message: body must be the raw body exactly as
// received, the headers the X-Service-Signature and X-Service-Timestamp
// values. It refuses a timestamp more than SignatureTolerance from now,
// either way, and compares in constant time.
//
// The signature header may carry several values separated by commas
// ("v1=abc,v1=def"); the message is genuine when any v1 value matches.
// This lets a sender sign with both the old and the new secret while a
// secret is being rotated, so receivers can switch secrets at their own
// pace. Values of other versions are skipped, not refused.
//
// Errors are of kind KindUnauthorized; the message says which check failed
// and never repeats the secret.
func Verify(secret, signatureHeader, timestampHeader string, body []byte, now time.Time) error {
	ts, err := parseTimestamp(timestampHeader)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return Errorf(KindUnauthorized, "webhook timestamp is more than %d seconds from now", int(SignatureTolerance/time.Second))
	}
	want := mac(secret, ts, body)
	seen := false
	for _, v := range strings.Split(signatureHeader, ",") {
		sig, ok := strings.CutPrefix(strings.TrimSpace(v), signatureVersion)
		if !ok {
			continue
		}
		seen = true
		got, err := hex.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	if !seen {
		return Errorf(KindUnauthorized, "webhook signature header has no v1 value")
	}
	return Errorf(KindUnauthorized, "webhook signature does not match")
}

// parseTimestamp reads decimal seconds, digits only: signs, spaces and
// fractions are refused so that one timestamp has one spelling.
func parseTimestamp(s string) (int64, error) {
	bad := Errorf(KindUnauthorized, "webhook timestamp is missing or malformed")
	if s == "" || len(s) > 18 {
		return 0, bad
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, bad
	}
	return ts, nil
}
