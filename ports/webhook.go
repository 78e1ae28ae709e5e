package ports

import (
	"context"
	"time"
)

// WebhookMessage is one attempt to deliver a webhook message.
type WebhookMessage struct {
	URL        string // the webhook's address, as stored
	Secret     string // the webhook's signing secret, whsec_..., the HMAC key as is
	DeliveryID string // X-Service-Delivery; equals the body's id
	Event      string // X-Service-Event: core.EventMatchCreated or core.EventPing
	Body       []byte // the exact JSON bytes to send; signed as they are
	// PreviousSecret is the secret a rotation replaced, while its overlap
	// runs (core.Webhook.SigningSecrets); empty otherwise. It signs
	// webhook-signature beside Secret, after it; X-Service-Signature,
	// one value in the spec, is Secret's alone.
	PreviousSecret string
}

// WebhookResult is what came of one attempt.
type WebhookResult struct {
	// Status is the HTTP status the receiver answered, 0 when no answer came.
	Status int
	// Error is empty when the receiver answered 2xx, else a plain reason:
	// timeout, dns, connect, tls, blocked_destination, redirect,
	// "http 500" and the like. It is shown to the owner in the delivery log,
	// so it never carries the answer body.
	Error string
	// Duration is how long the attempt took.
	Duration time.Duration
	// RetryAfter is the wait a 429 or 503 answer asked for in its
	// Retry-After header (core.ParseRetryAfter); zero when none, or when
	// unreadable.
	RetryAfter time.Duration
}

// Delivered reports whether the receiver took the message.
func (r WebhookResult) Delivered() bool {
	return r.Error == "" && r.Status >= 200 && r.Status <= 299
}

// WebhookSender delivers webhook messages over HTTP.
type WebhookSender interface {
	// Send POSTs m.Body to m.URL once. It checks the address again with
	// core.CheckWebhookURL and refuses to connect to a private, loopback or
	// otherwise non-public address whatever the name resolves to. It signs
	// the body afresh with the current time (core.Sign) and sets the
	// headers of spec section 6: X-Service-Event, X-Service-Delivery,
	// X-Service-Timestamp, X-Service-Signature and Content-Type
	// application/json, and beside them the Standard Webhooks headers
	// webhook-id, webhook-timestamp and webhook-signature
	// (core.SignStandardEach: Secret's value, then PreviousSecret's when
	// set). It never follows a redirect: a 3xx is a failure.
	// It waits at most its configured timeout, or less if ctx ends sooner,
	// and reads at most a few KB of the answer, which it discards.
	//
	// Send never returns an error: every failure is a WebhookResult with a
	// reason, because a failed attempt is an ordinary outcome the caller
	// records and retries. It is safe for concurrent use.
	Send(ctx context.Context, m WebhookMessage) WebhookResult
}
