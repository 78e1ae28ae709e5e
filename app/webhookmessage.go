package app

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// pingMessage is the text of a test ping's data. It is written before
// anything answers, so it claims no check: it names the headers, one per
// signing scheme, whose check proves the message came from earshot.
const pingMessage = "This is a test message from earshot. If your endpoint checked its signature (" + core.HeaderSignature + " or " + core.HeaderStandardSignature + ") it came from us."

// messenger is the one place webhook messages are made and sent, for the
// subscription service's test pings and for the delivery worker alike:
// the envelope, the match record inside it (record.Match, the record GET
// /matches/{id} shows), the signing secret opened from its seal, and the
// send itself, which signs each try afresh by both schemes (core.Sign,
// core.SignStandard) and is counted here.
type messenger struct {
	sender   ports.WebhookSender
	channels ports.ChannelSender // sends channels' messages (sendChannel)
	sealer   *core.Sealer
	metrics  ports.Metrics
}

// channelSender is the sender of channels' messages: c, or else s when
// it sends those too (webhooksender.Sender does); nil when neither.
func channelSender(c ports.ChannelSender, s ports.WebhookSender) ports.ChannelSender {
	if c != nil {
		return c
	}
	c, _ = s.(ports.ChannelSender)
	return c
}

// envelope renders a message body: the bytes every try of a delivery
// signs and sends.
func envelope(id, event string, at time.Time, data []byte) ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt string          `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}{id, event, at.UTC().Format("2006-01-02T15:04:05.000Z07:00"), data})
}

// ping returns a test ping of webhook w, not yet sent: a delivery with
// the id given, trigger ping and its body.
func (m messenger) ping(w core.Webhook, id string, at time.Time) (core.Delivery, error) {
	data, err := json.Marshal(struct {
		WebhookID string `json:"webhookId"`
		Message   string `json:"message"`
	}{w.ID, pingMessage})
	if err != nil {
		return core.Delivery{}, err
	}
	body, err := envelope(id, core.EventPing, at, data)
	if err != nil {
		return core.Delivery{}, err
	}
	return core.Delivery{
		ID: id, WebhookID: w.ID, OwnerID: w.OwnerID, Event: core.EventPing, Trigger: core.TriggerPing,
		Status: core.DeliveryQueued, Payload: body, CreatedAt: at,
	}, nil
}

// matchCreated renders the body of d, a match.created delivery of m: the
// envelope with d's id and creation time around m's public record.
func (m messenger) matchCreated(d core.Delivery, match core.Match) ([]byte, error) {
	data, err := json.Marshal(record.NewMatch(match))
	if err != nil {
		return nil, err
	}
	return envelope(d.ID, d.Event, d.CreatedAt, data)
}

// errSecretUnreadable is the delivery log's reason when a webhook's
// signing secret does not open (the key changed): nothing is sent.
const errSecretUnreadable = "signing_secret_unreadable"

// send opens the webhook's signing secrets and sends d's payload to it
// once, at time at, counting the outcome. The previous secret (nil when
// none is kept) signs too while the last rotation's overlap runs at at
// (core.Webhook.SigningSecrets). The error says a secret did not open:
// nothing was sent or counted then.
func (m messenger) send(ctx context.Context, w core.Webhook, current, previous []byte, d core.Delivery, at time.Time) (ports.WebhookResult, error) {
	secret, err := m.sealer.Open(current, []byte(w.ID))
	if err != nil {
		return ports.WebhookResult{Error: errSecretUnreadable}, err
	}
	msg := ports.WebhookMessage{URL: w.URL, Secret: string(secret), DeliveryID: d.ID, Event: d.Event, Body: d.Payload}
	if previous != nil && w.PreviousSecretSigns(at) {
		old, err := m.sealer.Open(previous, []byte(w.ID))
		if err != nil {
			return ports.WebhookResult{Error: errSecretUnreadable}, err
		}
		msg.PreviousSecret = string(old)
	}
	res := m.sender.Send(ctx, msg)
	if res.Delivered() {
		m.metrics.Count(ports.EventDeliveriesOK, 1)
	} else {
		m.metrics.Count(ports.EventDeliveriesFail, 1)
	}
	return res, nil
}

// errTargetUnreadable is the delivery log's reason when a channel's
// sealed target does not open (the key changed) or no sender of channel
// messages is set: nothing is sent.
const errTargetUnreadable = "destination_unreadable"

// channelRender renders the body of d, a match.created delivery of
// channel w about m: the message written for w's service
// (core.RenderChannelMatch), which carries none of the target's secrets.
func channelRender(w core.Webhook, m core.Match) ([]byte, error) {
	return core.RenderChannelMatch(w.Kind, core.ChannelMatchOf(m))
}

// sendChannel opens channel w's sealed target and sends d's payload to
// it once, counting the outcome as send does, for each of the n
// deliveries the message carries (a burst carries several). The error
// says the target did not open (or no sender of channel messages is
// set): nothing was sent or counted then.
func (m messenger) sendChannel(ctx context.Context, w core.Webhook, sealed []byte, d core.Delivery, n int) (ports.WebhookResult, error) {
	if m.channels == nil {
		return ports.WebhookResult{Error: errTargetUnreadable}, errors.New("no sender of channel messages")
	}
	opened, err := m.sealer.Open(sealed, []byte(w.ID))
	if err != nil {
		return ports.WebhookResult{Error: errTargetUnreadable}, err
	}
	target, err := core.UnmarshalTarget(opened)
	if err != nil {
		return ports.WebhookResult{Error: errTargetUnreadable}, err
	}
	res := m.channels.SendChannel(ctx, ports.ChannelMessage{Target: target, DeliveryID: d.ID, Body: d.Payload})
	if res.Delivered() {
		m.metrics.Count(ports.EventDeliveriesOK, n)
	} else {
		m.metrics.Count(ports.EventDeliveriesFail, n)
	}
	return res, nil
}
