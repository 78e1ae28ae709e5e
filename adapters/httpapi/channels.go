package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// ChannelService is what the API asks of channels. app.Channels is one.
type ChannelService interface {
	Create(ctx context.Context, ownerID string, in ports.NewChannel) (core.Webhook, error)
	List(ctx context.Context, ownerID string) ([]core.Webhook, error)
	Get(ctx context.Context, ownerID, id string) (core.Webhook, error)
	Update(ctx context.Context, ownerID, id string, ch ports.ChannelChange) (core.Webhook, error)
	Delete(ctx context.Context, ownerID, id string) error
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error)
	Retry(ctx context.Context, ownerID, channelID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
	// Gate is the plan's refusal of channels, or nil: of the routes that
	// add one or send a message.
	Gate(ctx context.Context) error
	// Keep is the plan's refusal of the routes that read, change and
	// delete the owner's channels, or nil: nil too on a plan without
	// webhooks for an owner who still has webhooks or channels.
	Keep(ctx context.Context, ownerID string) error
}

// channels returns the service, or the plan's refusal when the API was
// built without one: channels count against the webhook limit.
func (a *API) channels() (ChannelService, error) {
	if a.deps.Channels == nil {
		return nil, core.Errorf(core.KindPlanLimit, "the plan allows no webhooks or channels")
	}
	return a.deps.Channels, nil
}

// channelFields are the fields of a channel an owner sets, on create and
// on change. chat_id is read as a string or an integer: the Bot API
// gives chat ids as numbers, and an owner pastes what it shows.
type channelFields struct {
	URL       *string         `json:"url"`
	Token     *string         `json:"token"`
	ChatID    json.RawMessage `json:"chat_id"`
	MinScore  *int            `json:"min_score"`
	Platforms *[]string       `json:"platforms"`
	Frequency *string         `json:"frequency"`
	Hour      *int            `json:"hour"`
	Zone      *string         `json:"zone"`
}

type addChannelRequest struct {
	Kind *string `json:"kind"`
	channelFields
}

type patchChannelRequest struct {
	Active *bool `json:"active"`
	channelFields

	id string
}

func decodeAddChannel(_ context.Context, r *http.Request) (any, error) {
	var req addChannelRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	return req, nil
}

func decodePatchChannel(_ context.Context, r *http.Request) (any, error) {
	var req patchChannelRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	req.id = r.PathValue("id")
	return req, nil
}

// chatID reads chat_id: absent or null is nil, a string as it is, an
// integer in its decimal form.
func chatID(raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, core.Errorf(core.KindInvalid, "chat_id must be a string or an integer")
		}
		return &s, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, core.Errorf(core.KindInvalid, "chat_id must be a string or an integer")
	}
	s = strconv.FormatInt(n, 10)
	return &s, nil
}

// onlyWhenDaily refuses an hour or a zone sent with a frequency other
// than daily: the schedule would drop them and the answer would say the
// change was made. Without a frequency the service decides, from the
// channel's own.
func onlyWhenDaily(frequency *string, hour *int, zone *string) error {
	if frequency == nil || hour == nil && zone == nil || strings.TrimSpace(*frequency) == string(core.AlertDaily) {
		return nil
	}
	return core.Errorf(core.KindInvalid, "hour and zone are for a daily channel: send them with frequency daily")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (a *API) addChannel(ctx context.Context, req any) (any, error) {
	svc, err := a.channels()
	if err != nil {
		return nil, err
	}
	r := req.(addChannelRequest)
	chat, err := chatID(r.ChatID)
	if err != nil {
		return nil, err
	}
	freq := r.Frequency
	if freq == nil {
		freq = new(string) // at once, the default
	}
	if err := onlyWhenDaily(freq, r.Hour, r.Zone); err != nil {
		return nil, err
	}
	in := ports.NewChannel{
		Kind: deref(r.Kind), URL: deref(r.URL), Token: deref(r.Token), ChatID: deref(chat),
		MinScore: r.MinScore, Platforms: platformList(r.Platforms),
		Frequency: deref(r.Frequency), Hour: deref(r.Hour), Zone: deref(r.Zone),
	}
	ch, err := svc.Create(ctx, keyFrom(ctx).OwnerID, in)
	if err != nil {
		return nil, err
	}
	return created(channelRecord(ch), "/api/v1/channels/", ch.ID), nil
}

func (a *API) listChannels(ctx context.Context, _ any) (any, error) {
	svc, err := a.channels()
	if err != nil {
		return nil, err
	}
	cs, err := svc.List(ctx, keyFrom(ctx).OwnerID)
	if err != nil {
		return nil, err
	}
	out := make([]channelJSON, len(cs))
	for i, c := range cs {
		out[i] = channelRecord(c)
	}
	return ok(out), nil
}

func (a *API) getChannel(ctx context.Context, req any) (any, error) {
	svc, err := a.channels()
	if err != nil {
		return nil, err
	}
	ch, err := svc.Get(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id)
	if err != nil {
		return nil, err
	}
	return ok(channelRecord(ch)), nil
}

func (a *API) patchChannel(ctx context.Context, req any) (any, error) {
	svc, err := a.channels()
	if err != nil {
		return nil, err
	}
	r := req.(patchChannelRequest)
	chat, err := chatID(r.ChatID)
	if err != nil {
		return nil, err
	}
	if err := onlyWhenDaily(r.Frequency, r.Hour, r.Zone); err != nil {
		return nil, err
	}
	ch := ports.ChannelChange{Active: r.Active, MinScore: r.MinScore, Frequency: r.Frequency, Hour: r.Hour, Zone: r.Zone,
		URL: r.URL, Token: r.Token, ChatID: chat}
	if r.Platforms != nil {
		ch.Platforms = platformList(r.Platforms)
	}
	c, err := svc.Update(ctx, keyFrom(ctx).OwnerID, r.id, ch)
	if err != nil {
		return nil, err
	}
	return ok(channelRecord(c)), nil
}

// channelJSON is a channel as the API shows it: its destination only in
// its redacted form (core.ChannelTarget.Redacted), never whole.
type channelJSON struct {
	ID                  string          `json:"id"`
	Kind                string          `json:"kind"`
	Address             string          `json:"address"`
	MinScore            int             `json:"min_score"`
	Platforms           []core.Platform `json:"platforms"`
	Frequency           string          `json:"frequency"`
	Hour                *int            `json:"hour"`
	Zone                *string         `json:"zone"`
	Active              bool            `json:"active"`
	DisabledReason      *string         `json:"disabledReason"`
	ConsecutiveFailures int             `json:"consecutiveFailures"`
	CreatedAt           float64         `json:"createdAt"`
	LastDigestAt        *float64        `json:"lastDigestAt"`
}

func channelRecord(w core.Webhook) channelJSON {
	ps := w.Platforms
	if len(ps) == 0 {
		ps = core.Platforms
	}
	freq := w.Schedule.Frequency
	if freq == "" {
		freq = core.AlertAtOnce
	}
	out := channelJSON{
		ID: w.ID, Kind: string(w.Kind), Address: w.URL, MinScore: w.MinScore, Platforms: ps, Frequency: string(freq),
		Active: w.Active, DisabledReason: nullable(w.DisabledReason), ConsecutiveFailures: w.ConsecutiveFailures,
		CreatedAt: core.Millis(w.CreatedAt),
	}
	if freq == core.AlertDaily {
		hour, zone := w.Schedule.Hour, w.Schedule.Zone
		if zone == "" {
			zone = "UTC"
		}
		out.Hour, out.Zone = &hour, &zone
	}
	if w.Schedule.Digest() {
		out.LastDigestAt = millisOrNull(w.LastDigestAt)
	}
	return out
}
