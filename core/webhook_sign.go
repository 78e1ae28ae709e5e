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
// bytes in standard, padded base64, the form Standard Webhooks libraries
// decode. Both schemes use it exactly as returned: the spec's
// X-Service-Signature is keyed with the whole string, prefix included
// (Sign); webhook-signature with the decoded bytes (SignStandard).
//
// Secrets made before this form were "whsec_" and unpadded base64url,
// which those libraries refuse; StandardKey keys them as they are.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
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

// Standard Webhooks headers (https://www.standardwebhooks.com), sent on
// every message beside the spec's X-Service-* ones so that a receiver can
// verify with an off-the-shelf library. Header names are
// case-insensitive; these are the standard's spelling.
const (
	HeaderStandardID        = "webhook-id"        // the delivery id, as X-Service-Delivery
	HeaderStandardTimestamp = "webhook-timestamp" // the same instant as X-Service-Timestamp
	HeaderStandardSignature = "webhook-signature" // SignStandard
)

// standardVersion prefixes a Standard Webhooks signature; a header may
// carry several, separated by spaces.
const standardVersion = "v1,"

// StandardKey returns the HMAC key of webhook-signature for a secret as
// returned on create. A secret of the current form, "whsec_" and strict
// standard base64, is keyed with its decoded bytes, as Standard Webhooks
// libraries decode it. Any other secret, every one made before that form
// (unpadded base64url, which those libraries refuse to decode), is keyed
// with its own bytes as they are, prefix included: the same key its
// X-Service-Signature uses, so its receivers need no second key, and a
// library's raw-key constructor (NewWebhookRaw in Go) verifies it.
func StandardKey(secret string) []byte {
	enc, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	// The decoder skips line breaks; a secret holding one is not of the
	// current form.
	if ok && enc != "" && !strings.ContainsAny(enc, "\r\n") {
		if key, err := base64.StdEncoding.Strict().DecodeString(enc); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// SignStandard returns the webhook-signature value for a message: "v1,"
// and the standard base64 of the HMAC-SHA256 of "<id>.<timestamp>.<body>",
// keyed with StandardKey(secret). id is the delivery id (webhook-id),
// timestamp the webhook-timestamp value, seconds since 1970.
func SignStandard(secret, id string, timestamp int64, body []byte) string {
	return standardVersion + base64.StdEncoding.EncodeToString(standardMAC(StandardKey(secret), id, timestamp, body))
}

// SignStandardEach returns the webhook-signature value of a message
// signed by several secrets, during a rotation's overlap
// (Webhook.SigningSecrets): one SignStandard value per secret, in the
// order given, separated by spaces, as Standard Webhooks allows. A
// receiver holding any one of the secrets verifies the message.
func SignStandardEach(secrets []string, id string, timestamp int64, body []byte) string {
	vals := make([]string, len(secrets))
	for i, s := range secrets {
		vals[i] = SignStandard(s, id, timestamp, body)
	}
	return strings.Join(vals, " ")
}

func standardMAC(key []byte, id string, timestamp int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, timestamp, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// VerifyStandard checks a received message by the Standard Webhooks
// scheme: body is the raw body exactly as received, the others the
// webhook-id, webhook-signature and webhook-timestamp values. Like Verify
// it refuses a timestamp more than SignatureTolerance from now and
// compares in constant time. The signature header may carry several
// values separated by spaces; the message is genuine when any v1 value
// matches. Errors are of kind KindUnauthorized and never repeat the
// secret.
func VerifyStandard(secret, idHeader, signatureHeader, timestampHeader string, body []byte, now time.Time) error {
	if idHeader == "" {
		return Errorf(KindUnauthorized, "webhook id header is missing")
	}
	ts, err := parseTimestamp(timestampHeader)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return Errorf(KindUnauthorized, "webhook timestamp is more than %d seconds from now", int(SignatureTolerance/time.Second))
	}
	want := standardMAC(StandardKey(secret), idHeader, ts, body)
	seen := false
	for _, v := range strings.Fields(signatureHeader) {
		sig, ok := strings.CutPrefix(v, standardVersion)
		if !ok {
			continue
		}
		seen = true
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	if !seen {
		return Errorf(KindUnauthorized, "webhook signature header has no v1 value")
	}
	return Errorf(KindUnauthorized, "webhook signature does not match")
}
