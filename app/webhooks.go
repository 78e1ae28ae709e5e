package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Defaults of WebhookConfig.
const (
	DefaultWebhookWorkers    = 32
	DefaultWebhookPerWebhook = 2
	DefaultWebhookPoll       = time.Second
)

// pingMessage is the text of a test ping's data.
const pingMessage = "This is a test message from earshot. Your endpoint is reachable and verifies signatures."

// WebhookConfig is the webhook service's part of the settings.
type WebhookConfig struct {
	Limits core.Limits
	// Schedule is the wait before each retry; nil means
	// core.DefaultRetrySchedule.
	Schedule core.RetrySchedule
	// AllowPrivate applies the relaxed address rules of local development
	// when a webhook is saved; the sender applies its own at each send.
	AllowPrivate bool
	// Timeout is the sender's answer wait. A claim holds its deliveries
	// long enough for a queued one to wait for a busy slot and then be
	// sent.
	Timeout time.Duration
	// Workers bounds the sends in flight over every webhook, PerWebhook
	// those to one webhook, so that a receiver that never answers holds
	// PerWebhook slots and never the whole pool.
	Workers    int
	PerWebhook int
	// Poll is how often the worker looks for due retries and for
	// deliveries queued by other processes. Scores stored by this
	// process wake it at once (Poke).
	Poll time.Duration
}

// WebhookDeps are the ports the webhook service uses.
type WebhookDeps struct {
	Store    ports.WebhookStore
	Sender   ports.WebhookSender
	Renderer ports.MatchRenderer
	Sealer   *core.Sealer
	Clock    ports.Clock
	Log      *slog.Logger
	Metrics  ports.Metrics // counts tries; nil counts nothing
}

// Webhooks manages owners' webhooks and delivers their messages. The
// deliveries themselves are rows of the store: MatchStore.SetScore queues
// them with the score, Run sends whatever is due, and a process that
// stops leaves nothing but rows that the next one picks up.
type Webhooks struct {
	deps  WebhookDeps
	cfg   WebhookConfig
	lease time.Duration
	wake  chan struct{}
	// switchedOff is told of each switch-off stored (OnSwitchedOff).
	switchedOff func(context.Context, core.Webhook)
}

// NewWebhooks returns the webhook service.
func NewWebhooks(deps WebhookDeps, cfg WebhookConfig) *Webhooks {
	if cfg.Schedule == nil {
		cfg.Schedule = core.DefaultRetrySchedule
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWebhookWorkers
	}
	if cfg.PerWebhook <= 0 {
		cfg.PerWebhook = DefaultWebhookPerWebhook
	}
	if cfg.PerWebhook > cfg.Workers {
		cfg.PerWebhook = cfg.Workers
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultWebhookPoll
	}
	if deps.Clock == nil {
		deps.Clock = ports.SystemClock{}
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Metrics == nil {
		deps.Metrics = ports.NoMetrics{}
	}
	return &Webhooks{
		deps: deps,
		cfg:  cfg,
		// A claimed delivery may wait for the sends of its webhook claimed
		// with it, each within the timeout; the margin covers a slow
		// database.
		lease: max(time.Minute, time.Duration(claimAhead+2)*cfg.Timeout),
		wake:  make(chan struct{}, 1),
	}
}

// Create validates and adds a webhook and returns it with its signing
// secret, which is shown this once: the store keeps it sealed. minScore
// nil means core.DefaultWebhookMinScore, platforms nil every platform.
// KindInvalid names the field; KindConflict for a URL the owner has;
// KindPlanLimit.
func (s *Webhooks) Create(ctx context.Context, ownerID, url string, minScore *int, platforms []string) (core.Webhook, string, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return core.Webhook{}, "", err
	}
	u, err := core.CheckWebhookURL(url, s.cfg.AllowPrivate)
	if err != nil {
		return core.Webhook{}, "", err
	}
	w := core.Webhook{OwnerID: ownerID, URL: u, MinScore: core.DefaultWebhookMinScore, Platforms: slices.Clone(core.Platforms), Active: true}
	if minScore != nil {
		if err := core.CheckWebhookMinScore(*minScore); err != nil {
			return core.Webhook{}, "", err
		}
		w.MinScore = *minScore
	}
	if platforms != nil {
		if w.Platforms, err = parsePlatforms(platforms); err != nil {
			return core.Webhook{}, "", err
		}
	}
	secret, err := core.NewWebhookSecret()
	if err != nil {
		return core.Webhook{}, "", err
	}
	seal := func(id string) ([]byte, error) { return s.deps.Sealer.Seal([]byte(secret), []byte(id)) }
	if err := s.deps.Store.CreateWebhook(ctx, &w, s.cfg.Limits, seal); err != nil {
		return core.Webhook{}, "", err
	}
	return w, secret, nil
}

// parsePlatforms checks a non-empty list of platforms and returns it
// without repeats, in the order core.Platforms lists them.
func parsePlatforms(list []string) ([]core.Platform, error) {
	if len(list) == 0 {
		return nil, core.Errorf(core.KindInvalid, "platforms must name at least one of reddit, x, facebook")
	}
	var out []core.Platform
	for _, v := range list {
		p, err := core.ParsePlatform("platforms", v)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b core.Platform) int {
		return slices.Index(core.Platforms, a) - slices.Index(core.Platforms, b)
	})
	return out, nil
}

// List returns the owner's webhooks, oldest first. KindPlanLimit.
func (s *Webhooks) List(ctx context.Context, ownerID string) ([]core.Webhook, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return nil, err
	}
	return s.deps.Store.Webhooks(ctx, ownerID)
}

// Update switches a webhook on or off and changes its filters. Switching
// it on forgets its failures and the reason it was switched off; its
// queued deliveries then go out. KindInvalid, KindNotFound, KindPlanLimit.
func (s *Webhooks) Update(ctx context.Context, ownerID, id string, ch ports.WebhookChange) (core.Webhook, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return core.Webhook{}, err
	}
	if ch.Active == nil && ch.MinScore == nil && ch.Platforms == nil {
		return core.Webhook{}, core.Errorf(core.KindInvalid, "send at least one of active, min_score, platforms")
	}
	if ch.MinScore != nil {
		if err := core.CheckWebhookMinScore(*ch.MinScore); err != nil {
			return core.Webhook{}, err
		}
	}
	var platforms []core.Platform
	if ch.Platforms != nil {
		var err error
		if platforms, err = parsePlatforms(ch.Platforms); err != nil {
			return core.Webhook{}, err
		}
	}
	w, err := s.deps.Store.UpdateWebhook(ctx, ownerID, id, func(w core.Webhook) (core.Webhook, error) {
		if ch.Active != nil {
			if *ch.Active {
				w = w.Enable()
			} else {
				w.Active, w.DisabledReason = false, ""
			}
		}
		if ch.MinScore != nil {
			w.MinScore = *ch.MinScore
		}
		if platforms != nil {
			w.Platforms = platforms
		}
		return w, nil
	})
	if err == nil && w.Active {
		s.Poke()
	}
	return w, err
}

// Delete removes a webhook and its delivery log. KindNotFound,
// KindPlanLimit.
func (s *Webhooks) Delete(ctx context.Context, ownerID, id string) error {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return err
	}
	return s.deps.Store.DeleteWebhook(ctx, ownerID, id)
}

// Deliveries returns the webhook's log, newest first. KindNotFound,
// KindPlanLimit.
func (s *Webhooks) Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return nil, err
	}
	return s.deps.Store.Deliveries(ctx, ownerID, id, core.DeliveryLogSize)
}

// Test sends one signed ping now, through the same sender as every
// message, and reports what the receiver answered. The ping is recorded
// in the log with trigger ping; it gets one try and never counts toward
// switching the webhook off. It works on a switched-off webhook too, so
// an owner can check a fixed receiver before switching it on.
// KindNotFound, KindPlanLimit.
func (s *Webhooks) Test(ctx context.Context, ownerID, id string) (ports.WebhookResult, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return ports.WebhookResult{}, err
	}
	w, sealed, err := s.deps.Store.Webhook(ctx, ownerID, id)
	if err != nil {
		return ports.WebhookResult{}, err
	}
	secret, err := s.deps.Sealer.Open(sealed, []byte(w.ID))
	if err != nil {
		return ports.WebhookResult{}, core.Wrap(core.KindInternal, err, "the webhook's signing secret cannot be opened")
	}
	did, err := newDeliveryID()
	if err != nil {
		return ports.WebhookResult{}, err
	}
	data, _ := json.Marshal(struct {
		WebhookID string `json:"webhookId"`
		Message   string `json:"message"`
	}{w.ID, pingMessage})
	now := s.deps.Clock.Now()
	body, err := message(did, core.EventPing, now, data)
	if err != nil {
		return ports.WebhookResult{}, err
	}
	d := core.Delivery{
		ID: did, WebhookID: w.ID, OwnerID: ownerID, Event: core.EventPing, Trigger: core.TriggerPing,
		Status: core.DeliveryQueued, Payload: body, CreatedAt: now,
	}
	res := s.deps.Sender.Send(ctx, ports.WebhookMessage{URL: w.URL, Secret: string(secret), DeliveryID: did, Event: core.EventPing, Body: body})
	s.count(res)
	d = d.Attempted(nil, res.Status, res.Error, s.deps.Clock.Now(), 0)
	// The caller gets the answer whatever happens to the log entry: it is
	// what was asked for, and the ping has gone out.
	if err := s.deps.Store.AddDelivery(context.WithoutCancel(ctx), d); err != nil {
		s.deps.Log.WarnContext(ctx, "recording a webhook ping failed", "webhook", w.ID, "err", err)
	}
	return res, nil
}

// Retry sends a delivered or failed message again, with the same
// delivery id and body: it is queued with trigger manual and a fresh set
// of tries. KindNotFound; KindConflict while the delivery is still queued
// or the webhook is switched off; KindInvalidRequest for a test ping;
// KindPlanLimit.
func (s *Webhooks) Retry(ctx context.Context, ownerID, webhookID, deliveryID string) (core.Delivery, error) {
	if err := s.cfg.Limits.CheckWebhooks(); err != nil {
		return core.Delivery{}, err
	}
	w, _, err := s.deps.Store.Webhook(ctx, ownerID, webhookID)
	if err != nil {
		return core.Delivery{}, err
	}
	now := s.deps.Clock.Now()
	// The delivery is looked up first: an unknown one is not found,
	// whatever the webhook's state.
	d, err := s.deps.Store.UpdateDelivery(ctx, ownerID, webhookID, deliveryID, func(d core.Delivery) (core.Delivery, error) {
		switch {
		case !w.Active:
			return d, core.Errorf(core.KindConflict, "the webhook is switched off: switch it on with PATCH {\"active\": true} first")
		case d.Trigger == core.TriggerPing:
			return d, core.Errorf(core.KindInvalidRequest, "a test ping is not sent again: call POST /webhooks/{id}/test")
		case !d.Status.Final():
			return d, core.Errorf(core.KindConflict, "the delivery is queued already")
		}
		d.Trigger, d.Status, d.Tries = core.TriggerManual, core.DeliveryQueued, 0
		d.ResponseStatus, d.Error, d.NextAttemptAt = 0, "", now
		return d, nil
	})
	if err != nil {
		return core.Delivery{}, err
	}
	s.Poke()
	return d, nil
}

// Poke tells the worker that deliveries may be due now. It never blocks.
func (s *Webhooks) Poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// message renders a webhook message: the body every try of a delivery
// signs and sends.
func message(id, event string, at time.Time, data []byte) ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt string          `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}{id, event, at.UTC().Format("2006-01-02T15:04:05.000Z07:00"), data})
}

// newDeliveryID returns a random UUID (version 4) for a delivery made
// here rather than by the store.
func newDeliveryID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// Run sends due deliveries until ctx ends, then gives back what it
// claimed and did not start, lets the sends under way finish (each within
// the sender's timeout) and returns. Only one Run of a service may be
// going at once; other processes run their own.
func (s *Webhooks) Run(ctx context.Context) {
	w := &worker{
		s:       s,
		depth:   s.cfg.PerWebhook * claimAhead,
		busy:    map[string]int{},
		held:    map[string][]ports.DueDelivery{},
		more:    map[string]bool{},
		done:    make(chan string, s.cfg.Workers),
		claims:  make(chan claimed, 1),
		records: make(chan ports.Attempt, s.cfg.Workers),
	}
	recorded := make(chan struct{})
	go func() { defer close(recorded); s.recorder(w.records) }()
	defer func() { close(w.records); <-recorded }()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	w.fill(ctx)
	for {
		select {
		case <-ctx.Done():
			w.stop()
			return
		case <-s.wake:
			w.fill(ctx)
		case <-tick.C:
			w.fill(ctx)
		case c := <-w.claims:
			w.took(ctx, c)
		case id := <-w.done:
			if w.finished(id) {
				w.fill(ctx)
			}
		}
	}
}

// claimAhead is how many sends' worth of deliveries the worker claims
// for a webhook at once: a busy webhook's next message is at hand when a
// send ends, and claims, each a write, stay a fraction of the sends.
const claimAhead = 8

// worker is the state of one Run, touched only by its goroutine, which
// never waits for the database: claims run beside it, one at a time,
// and attempts are recorded by the recorder.
type worker struct {
	s       *Webhooks
	depth   int                            // claimed at most per webhook in one claim
	running int                            // sends in flight
	busy    map[string]int                 // per webhook: sends in flight
	held    map[string][]ports.DueDelivery // per webhook: claimed, waiting for a slot
	waiting int                            // held in all
	full    bool                           // the last fill stopped with nothing more to hold
	more    map[string]bool                // webhooks that may have due deliveries the last claim did not take
	done    chan string                    // the webhook id of each send that ended
	claims  chan claimed                   // the outcome of the claim under way
	records chan ports.Attempt             // attempts made, for the recorder

	claiming bool // a claim is under way
	again    bool // and another was asked for meanwhile
}

// claimed is the outcome of one claim, with what it was asked.
type claimed struct {
	due  []ports.DueDelivery
	err  error
	free int
	skip []string
}

// maxRecordBatch bounds the attempts stored in one transaction.
const maxRecordBatch = 64

// recorder stores attempts as they come, those waiting together in one
// transaction: sends end together often, and on SQLite a commit costs
// more than the writes in it. A send's slot is free as soon as its
// attempt is handed over, so a slow write never holds up sending; the
// channel's bound holds sending back when writes fall behind. It returns
// once in is closed and everything in it is stored.
func (s *Webhooks) recorder(in <-chan ports.Attempt) {
	for a := range in {
		batch := []ports.Attempt{a}
	gather:
		for len(batch) < maxRecordBatch {
			select {
			case a, ok := <-in:
				if !ok {
					break gather
				}
				batch = append(batch, a)
			default:
				break gather
			}
		}
		results, err := s.deps.Store.FinishAttempts(context.Background(), batch)
		if err != nil {
			// Left to their leases: the deliveries are tried again once
			// those run out.
			s.deps.Log.Warn("recording webhook deliveries failed; they are tried again when their lease runs out", "deliveries", len(batch), "err", err)
			continue
		}
		for i, r := range results {
			s.recorded(batch[i], r)
		}
	}
}

// recorded follows up a stored attempt: a retry due before the next poll
// wakes the worker itself, and a webhook switched off is logged.
func (s *Webhooks) recorded(a ports.Attempt, r ports.AttemptResult) {
	if !r.Recorded {
		return
	}
	if d := a.Delivery; d.Status == core.DeliveryQueued {
		if wait := d.NextAttemptAt.Sub(s.deps.Clock.Now()); wait < s.cfg.Poll {
			time.AfterFunc(max(wait, 0), s.Poke)
		}
	}
	if a.Due.Webhook.Active && !r.Webhook.Active {
		s.deps.Log.Info("webhook switched off", "webhook", r.Webhook.ID, "owner", r.Webhook.OwnerID, "reason", r.Webhook.DisabledReason)
	}
	if r.SwitchedOff && s.switchedOff != nil {
		s.switchedOff(context.Background(), r.Webhook)
	}
}

// fill starts a claim of due deliveries, or notes that another should
// follow the one under way. Webhooks with deliveries held already are
// left out: they have work at hand.
func (w *worker) fill(ctx context.Context) {
	if w.claiming {
		w.again = true
		return
	}
	free := w.s.cfg.Workers*claimAhead - w.running - w.waiting
	w.full = free <= 0
	if w.full || ctx.Err() != nil {
		return
	}
	var skip []string
	for id := range w.held {
		skip = append(skip, id)
	}
	w.claiming, w.again = true, false
	c := ports.DeliveryClaim{Limit: free, PerWebhook: w.depth, Skip: skip, Lease: w.s.lease}
	go func() {
		// Not cut short by a stop: a claim that took rows but was not
		// heard of would leave them to their lease.
		due, err := w.s.deps.Store.ClaimDeliveries(context.WithoutCancel(ctx), c)
		w.claims <- claimed{due: due, err: err, free: free, skip: skip}
	}()
}

// took holds what a claim returned, starts what the slots allow and
// claims again when there may be more.
func (w *worker) took(ctx context.Context, c claimed) {
	w.claiming = false
	if c.err != nil {
		w.s.deps.Log.WarnContext(ctx, "claiming webhook deliveries failed; the next poll retries", "err", c.err)
		return
	}
	got := map[string]int{}
	for _, d := range c.due {
		id := d.Delivery.WebhookID
		got[id]++
		w.held[id] = append(w.held[id], d)
		w.waiting++
	}
	w.startHeld()
	// Fewer than asked means every due delivery of the webhooks not left
	// out was seen, unless the per-webhook bound cut some off.
	exhausted := len(c.due) < c.free
	clear(w.more)
	for _, id := range c.skip {
		w.more[id] = true
	}
	capped := false
	for id, n := range got {
		if n >= w.depth || !exhausted {
			w.more[id] = true
			capped = capped || n >= w.depth
		}
	}
	if w.again || !exhausted || capped {
		w.fill(ctx)
	}
}

// stop hands back what was claimed and not started, the outcome of a
// claim under way included, and waits for the sends under way.
func (w *worker) stop() {
	if w.claiming {
		c := <-w.claims
		w.claiming = false
		for _, d := range c.due {
			w.held[d.Delivery.WebhookID] = append(w.held[d.Delivery.WebhookID], d)
		}
	}
	var back []ports.DueDelivery
	for _, q := range w.held {
		back = append(back, q...)
	}
	clear(w.held)
	w.waiting = 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.s.deps.Store.ReleaseDeliveries(ctx, back); err != nil {
		w.s.deps.Log.WarnContext(ctx, "handing back claimed webhook deliveries failed; they are taken again when their lease runs out", "err", err)
	}
	for w.running > 0 {
		w.finished(<-w.done)
	}
}

// startHeld starts held deliveries while slots are free, one webhook's
// oldest first.
func (w *worker) startHeld() {
	for id, q := range w.held {
		for len(q) > 0 && w.running < w.s.cfg.Workers && w.busy[id] < w.s.cfg.PerWebhook {
			w.start(q[0])
			q = q[1:]
			w.waiting--
		}
		if len(q) == 0 {
			delete(w.held, id)
		} else {
			w.held[id] = q
		}
		if w.running >= w.s.cfg.Workers {
			return
		}
	}
}

func (w *worker) start(d ports.DueDelivery) {
	id := d.Delivery.WebhookID
	w.running++
	w.busy[id]++
	go func() {
		// A send under way finishes even when Run is told to stop:
		// stopping waits for it rather than leave a message sent but not
		// recorded.
		if a, ok := w.s.attempt(context.Background(), d); ok {
			w.records <- a
		}
		w.done <- id
	}()
}

// finished books the end of a send to webhook id, starts what the freed
// slot allows, and reports whether a claim may now find work.
func (w *worker) finished(id string) bool {
	w.running--
	if w.busy[id]--; w.busy[id] <= 0 {
		delete(w.busy, id)
	}
	w.startHeld()
	_, holding := w.held[id]
	return w.full || !holding && w.more[id]
}

// attempt makes one try of a claimed delivery and returns it, to be
// recorded; ok is false when there was nothing to send.
func (s *Webhooks) attempt(ctx context.Context, due ports.DueDelivery) (a ports.Attempt, ok bool) {
	d := due.Delivery
	if len(d.Payload) == 0 {
		// The body is rendered at the first try, from the match as stored,
		// and kept: every later try, and a manual retry, sends these bytes.
		if due.Match == nil {
			// The match went with its phrase before anything was sent:
			// there is nothing left to announce.
			if err := s.deps.Store.DropDelivery(ctx, due); err != nil {
				s.deps.Log.WarnContext(ctx, "dropping a delivery of a deleted match failed", "delivery", d.ID, "err", err)
			}
			return a, false
		}
		data, err := s.deps.Renderer.RenderMatch(*due.Match)
		if err == nil {
			d.Payload, err = message(d.ID, d.Event, d.CreatedAt, data)
		}
		if err != nil {
			// Left to its lease: a later claim tries again.
			s.deps.Log.WarnContext(ctx, "preparing a webhook message failed", "delivery", d.ID, "err", err)
			return a, false
		}
	}
	var res ports.WebhookResult
	secret, err := s.deps.Sealer.Open(due.SealedSecret, []byte(due.Webhook.ID))
	if err != nil {
		s.deps.Log.ErrorContext(ctx, "a webhook's signing secret does not open; its messages fail until it is replaced", "webhook", due.Webhook.ID, "err", err)
		res.Error = "signing_secret_unreadable"
	} else {
		res = s.deps.Sender.Send(ctx, ports.WebhookMessage{
			URL: due.Webhook.URL, Secret: string(secret), DeliveryID: d.ID, Event: d.Event, Body: d.Payload,
		})
	}
	s.count(res)
	next := d.Attempted(s.cfg.Schedule, res.Status, res.Error, s.deps.Clock.Now(), mrand.Float64())
	return ports.Attempt{Due: due, Delivery: next}, true
}

func (s *Webhooks) count(res ports.WebhookResult) {
	if res.Delivered() {
		s.deps.Metrics.Count(ports.EventDeliveriesOK, 1)
	} else {
		s.deps.Metrics.Count(ports.EventDeliveriesFail, 1)
	}
}
