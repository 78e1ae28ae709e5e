package ports

import (
	"context"

	"github.com/earshothq/earshot/core"
)

// ChannelMessage is one attempt to deliver a channel's message.
type ChannelMessage struct {
	// Target is the channel's destination, opened from its sealed form
	// just before the send and never stored beside the body.
	Target core.ChannelTarget
	// DeliveryID names the delivery for the log; none of the four
	// services takes an idempotency key, so it is not sent.
	DeliveryID string
	// Body is the delivery's stored payload (core.RenderChannelMatch and
	// its kin): the JSON the service takes, without the target's secrets.
	Body []byte
}

// ChannelSender delivers channel messages to Slack, Discord, Telegram
// and ntfy.
type ChannelSender interface {
	// SendChannel posts m.Body once to m.Target, with what the target
	// adds (the Telegram chat, the ntfy topic and access token), under
	// the same guards as WebhookSender.Send: the target checked again
	// (core.CheckChannelTarget), the address every name resolves to
	// checked at connect time, no proxy, no redirect, a bounded answer
	// within the configured timeout.
	//
	// The answer is classified into a WebhookResult so that the webhook
	// rules act on channels unchanged: Status is the HTTP status, except
	// that an answer saying the destination is gone for good (a revoked or
	// deleted webhook, a bot blocked or removed from the chat, an unknown
	// chat, a refused token) is reported as 410, which fails the delivery
	// and switches the channel off at once (core.Delivery.Gone). Error is
	// a plain reason naming the service, what it said in a few bounded and
	// sanitized words, and the real status; it never repeats the answer
	// whole nor any secret of the target. RetryAfter is the wait a 429 or
	// 503 asked for, in its Retry-After header or in the service's own
	// field (Discord's retry_after, Telegram's parameters.retry_after),
	// the longer of the two, capped by core.MaxRetryAfter.
	//
	// SendChannel never returns an error and is safe for concurrent use.
	SendChannel(ctx context.Context, m ChannelMessage) WebhookResult
}
