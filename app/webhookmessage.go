package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// pingMessage is the text of a test ping's data. It is written before
// anything answers, so it claims no check: it names the header whose
// check proves the message came from earshot.
const pingMessage = "This is a test message from earshot. If your endpoint checked its signature (" + core.HeaderSignature + ") it came from us."

// messenger is the one place webhook messages are made and sent, for the
// subscription service's test pings and for the delivery worker alike:
// the envelope, the match record inside it (rendered as GET
// /matches/{id} shows it), the signing secret opened from its seal, and
// the send itself, which signs each try afresh (core.Sign) and is
// counted here.
type messenger struct {
	sender   ports.WebhookSender
	renderer ports.MatchRenderer // nil where only pings are made
	sealer   *core.Sealer
	metrics  ports.Metrics
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
	data, err := m.renderer.RenderMatch(match)
	if err != nil {
		return nil, err
	}
	return envelope(d.ID, d.Event, d.CreatedAt, data)
}

// errSecretUnreadable is the delivery log's reason when a webhook's
// signing secret does not open (the key changed): nothing is sent.
const errSecretUnreadable = "signing_secret_unreadable"

// send opens the webhook's signing secret and sends d's payload to it
// once, counting the outcome. The error says the secret did not open:
// nothing was sent or counted then.
func (m messenger) send(ctx context.Context, w core.Webhook, sealed []byte, d core.Delivery) (ports.WebhookResult, error) {
	secret, err := m.sealer.Open(sealed, []byte(w.ID))
	if err != nil {
		return ports.WebhookResult{Error: errSecretUnreadable}, err
	}
	res := m.sender.Send(ctx, ports.WebhookMessage{
		URL: w.URL, Secret: string(secret), DeliveryID: d.ID, Event: d.Event, Body: d.Payload,
	})
	if res.Delivered() {
		m.metrics.Count(ports.EventDeliveriesOK, 1)
	} else {
		m.metrics.Count(ports.EventDeliveriesFail, 1)
	}
	return res, nil
}
