package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// WebhookService is what the API asks of webhooks. app.Webhooks is one.
type WebhookService interface {
	Create(ctx context.Context, ownerID, url string, minScore *int, platforms []string) (core.Webhook, string, error)
	List(ctx context.Context, ownerID string) ([]core.Webhook, error)
	Update(ctx context.Context, ownerID, id string, ch ports.WebhookChange) (core.Webhook, error)
	Delete(ctx context.Context, ownerID, id string) error
	// Test, Retry and Replay call take, the owner's outbound bucket
	// (spendOutbound), once they have decided to send, and refuse with
	// its error.
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error)
	Retry(ctx context.Context, ownerID, webhookID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	RotateSecret(ctx context.Context, ownerID, id string, overlap *time.Duration) (core.Webhook, string, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
	// Gate is the plan's refusal of webhooks, or nil: of the routes that
	// add one or send a message.
	Gate(ctx context.Context) error
	// Keep is the plan's refusal of the routes that read, change and
	// delete the owner's webhooks, or nil: nil too on a plan without
	// webhooks for an owner who still has some.
	Keep(ctx context.Context, ownerID string) error
}

// webhooks returns the service, or the plan's refusal when the API was
// built without one.
func (a *API) webhooks() (WebhookService, error) {
	if a.deps.Webhooks == nil {
		return nil, core.Errorf(core.KindPlanLimit, "the plan allows no webhooks")
	}
	return a.deps.Webhooks, nil
}

// rowService is what webhooks and channels answer alike: a channel is a
// webhook row of another kind, with the same delivery log, tries and
// replays, so one set of handlers serves both route families.
type rowService interface {
	Delete(ctx context.Context, ownerID, id string) error
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error)
	Retry(ctx context.Context, ownerID, rowID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
}

// rows returns the service of one route family, or its plan refusal.
type rows func() (rowService, error)

func (a *API) webhookRows() (rowService, error) { return a.webhooks() }

func (a *API) channelRows() (rowService, error) { return a.channels() }

func (get rows) delete(ctx context.Context, req any) (any, error) {
	svc, err := get()
	if err != nil {
		return nil, err
	}
	id := req.(idRequest).id
	if err := svc.Delete(ctx, keyFrom(ctx).OwnerID, id); err != nil {
		return nil, err
	}
	return ok(struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true}), nil
}

func (get rows) test(ctx context.Context, req any) (any, error) {
	svc, err := get()
	if err != nil {
		return nil, err
	}
	res, err := svc.Test(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id, spendOutbound)
	if err != nil {
		return nil, err
	}
	return ok(pingRecord(res)), nil
}

func (get rows) deliveries(ctx context.Context, req any) (any, error) {
	svc, err := get()
	if err != nil {
		return nil, err
	}
	ds, err := svc.Deliveries(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id)
	if err != nil {
		return nil, err
	}
	out := make([]deliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = deliveryRecord(d)
	}
	return ok(out), nil
}

func (get rows) retry(ctx context.Context, req any) (any, error) {
	svc, err := get()
	if err != nil {
		return nil, err
	}
	r := req.(retryRequest)
	d, err := svc.Retry(ctx, keyFrom(ctx).OwnerID, r.webhookID, r.deliveryID, spendOutbound)
	if err != nil {
		return nil, err
	}
	resp := ok(deliveryRecord(d))
	resp.status = http.StatusAccepted
	return resp, nil
}

func (get rows) replay(ctx context.Context, req any) (any, error) {
	svc, err := get()
	if err != nil {
		return nil, err
	}
	r := req.(replayRequest)
	from, err := instant("from", r.From)
	if err != nil {
		return nil, err
	}
	to, err := instant("to", r.To)
	if err != nil {
		return nil, err
	}
	res, err := svc.Replay(ctx, keyFrom(ctx).OwnerID, r.id, from, to, spendOutbound)
	if err != nil {
		return nil, err
	}
	resp := ok(replayRecord(res))
	resp.status = http.StatusAccepted
	return resp, nil
}

type addWebhookRequest struct {
	URL       *string   `json:"url"`
	MinScore  *int      `json:"min_score"`
	Platforms *[]string `json:"platforms"`
}

func decodeAddWebhook(_ context.Context, r *http.Request) (any, error) {
	var req addWebhookRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	return req, nil
}

type patchWebhookRequest struct {
	Active    *bool     `json:"active"`
	MinScore  *int      `json:"min_score"`
	Platforms *[]string `json:"platforms"`

	id string
}

func decodePatchWebhook(_ context.Context, r *http.Request) (any, error) {
	var req patchWebhookRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	req.id = r.PathValue("id")
	return req, nil
}

type retryRequest struct{ webhookID, deliveryID string }

func decodeRetry(_ context.Context, r *http.Request) (any, error) {
	return retryRequest{webhookID: r.PathValue("id"), deliveryID: r.PathValue("deliveryId")}, nil
}

type rotateRequest struct {
	OverlapSeconds *int64 `json:"overlap_seconds"`

	id string
}

// decodeRotate takes an optional body: none keeps the service's default
// overlap.
func decodeRotate(_ context.Context, r *http.Request) (any, error) {
	req := rotateRequest{id: r.PathValue("id")}
	if err := decodeOptionalJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeOptionalJSON is decodeJSON for a body that may be left out: an
// empty or blank body leaves v as it is.
func decodeOptionalJSON(r *http.Request, v any, limit int) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", limit)
		}
		return core.Wrap(core.KindInvalidRequest, err, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decodeJSON(r, v, limit)
}

type replayRequest struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`

	id string
}

func decodeReplay(_ context.Context, r *http.Request) (any, error) {
	req := replayRequest{id: r.PathValue("id")}
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	return req, nil
}

// maxInstantMillis is the year 9999 in milliseconds: a later instant is
// a mistake, and beyond it a count of microseconds overflows.
const maxInstantMillis = 253402300799999

// instant reads a time the API takes as milliseconds since 1970, the form
// of every time it answers, or as an RFC 3339 string; absent or null is
// the zero time.
func instant(field string, raw json.RawMessage) (time.Time, error) {
	bad := core.Errorf(core.KindInvalid, "%s must be milliseconds since 1970 or an RFC 3339 time such as 2026-11-26T10:00:00Z", field)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, bad
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, bad
		}
		return t, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil || ms <= 0 || ms > maxInstantMillis {
		return time.Time{}, bad
	}
	return time.UnixMicro(int64(math.Round(ms * 1000))), nil
}

// platformList turns an optional JSON list into the service's form: nil
// when absent or null, the list (possibly empty) when given.
func platformList(p *[]string) []string {
	if p == nil {
		return nil
	}
	if *p == nil {
		return []string{}
	}
	return *p
}

func (a *API) addWebhook(ctx context.Context, req any) (any, error) {
	svc, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	r := req.(addWebhookRequest)
	url := ""
	if r.URL != nil {
		url = *r.URL
	}
	w, secret, err := svc.Create(ctx, keyFrom(ctx).OwnerID, url, r.MinScore, platformList(r.Platforms))
	if err != nil {
		return nil, err
	}
	return created(createdWebhookJSON{webhookRecord(w), secret}, "/api/v1/webhooks/", w.ID), nil
}

func (a *API) listWebhooks(ctx context.Context, _ any) (any, error) {
	svc, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	ws, err := svc.List(ctx, keyFrom(ctx).OwnerID)
	if err != nil {
		return nil, err
	}
	out := make([]webhookJSON, len(ws))
	for i, w := range ws {
		out[i] = webhookRecord(w)
	}
	return ok(out), nil
}

func (a *API) patchWebhook(ctx context.Context, req any) (any, error) {
	svc, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	r := req.(patchWebhookRequest)
	ch := ports.WebhookChange{Active: r.Active, MinScore: r.MinScore}
	if r.Platforms != nil {
		ch.Platforms = platformList(r.Platforms)
	}
	w, err := svc.Update(ctx, keyFrom(ctx).OwnerID, r.id, ch)
	if err != nil {
		return nil, err
	}
	return ok(webhookRecord(w)), nil
}

// pingJSON is what a test message's receiver answered.
type pingJSON struct {
	Delivered      bool    `json:"delivered"`
	ResponseStatus *int    `json:"responseStatus"`
	Error          *string `json:"error"`
	DurationMs     float64 `json:"durationMs"`
}

func pingRecord(res ports.WebhookResult) pingJSON {
	return pingJSON{res.Delivered(), nonZero(res.Status), nullable(res.Error), float64(res.Duration.Microseconds()) / 1000}
}

type webhookJSON struct {
	ID             string          `json:"id"`
	URL            string          `json:"url"`
	MinScore       int             `json:"min_score"`
	Platforms      []core.Platform `json:"platforms"`
	Active         bool            `json:"active"`
	DisabledReason *string         `json:"disabledReason"`
	CreatedAt      float64         `json:"createdAt"`
	// PreviousSecretExpiresAt is when the secret the last rotation
	// replaced stops signing. It is left out when none is kept, so the
	// record of a webhook never rotated is as v1 has it.
	PreviousSecretExpiresAt *float64 `json:"previousSecretExpiresAt,omitempty"`
}

// createdWebhookJSON is the create and rotate answer: the record and,
// this once, the signing secret.
type createdWebhookJSON struct {
	webhookJSON
	Secret string `json:"secret"`
}

func webhookRecord(w core.Webhook) webhookJSON {
	ps := w.Platforms
	if len(ps) == 0 {
		ps = core.Platforms // none stored means every one
	}
	return webhookJSON{
		ID: w.ID, URL: w.URL, MinScore: w.MinScore, Platforms: ps, Active: w.Active,
		DisabledReason: nullable(w.DisabledReason), CreatedAt: core.Millis(w.CreatedAt),
		PreviousSecretExpiresAt: millisOrNull(w.PreviousSecretUntil),
	}
}

type deliveryJSON struct {
	ID             string   `json:"id"`
	Event          string   `json:"event"`
	Trigger        string   `json:"trigger"`
	Status         string   `json:"status"`
	Tries          int      `json:"tries"`
	ResponseStatus *int     `json:"responseStatus"`
	Error          *string  `json:"error"`
	CreatedAt      float64  `json:"createdAt"`
	LastAttemptAt  *float64 `json:"lastAttemptAt"`
	NextAttemptAt  *float64 `json:"nextAttemptAt"`
}

func deliveryRecord(d core.Delivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, Event: d.Event, Trigger: string(d.Trigger), Status: string(d.Status), Tries: d.Tries,
		ResponseStatus: nonZero(d.ResponseStatus), Error: nullable(d.Error), CreatedAt: core.Millis(d.CreatedAt),
		LastAttemptAt: millisOrNull(d.LastAttemptAt),
	}
	if d.Status == core.DeliveryQueued {
		out.NextAttemptAt = millisOrNull(d.NextAttemptAt)
	}
	return out
}

func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func millisOrNull(t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	ms := core.Millis(t)
	return &ms
}

func (a *API) rotateSecret(ctx context.Context, req any) (any, error) {
	svc, err := a.webhooks()
	if err != nil {
		return nil, err
	}
	r := req.(rotateRequest)
	var overlap *time.Duration
	if r.OverlapSeconds != nil {
		// Bounded before the conversion, so that a count of seconds too
		// large for a duration stays past the service's bound rather than
		// wrap round into it.
		d := time.Duration(max(min(*r.OverlapSeconds, int64(core.MaxSecretOverlap/time.Second)+1), -1)) * time.Second
		overlap = &d
	}
	w, secret, err := svc.RotateSecret(ctx, keyFrom(ctx).OwnerID, r.id, overlap)
	if err != nil {
		return nil, err
	}
	return ok(createdWebhookJSON{webhookRecord(w), secret}), nil
}

// replayJSON is the answer of a replay.
type replayJSON struct {
	Queued     int            `json:"queued"`
	More       bool           `json:"more"`
	Deliveries []deliveryJSON `json:"deliveries"`
}

func replayRecord(res ports.ReplayResult) replayJSON {
	out := replayJSON{Queued: len(res.Queued), More: res.More, Deliveries: make([]deliveryJSON, len(res.Queued))}
	for i, d := range res.Queued {
		out.Deliveries[i] = deliveryRecord(d)
	}
	return out
}
