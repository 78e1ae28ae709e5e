package app

import (
	"context"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Defaults of DeliveryConfig.
const (
	DefaultWebhookWorkers        = 32
	DefaultWebhookPerWebhook     = 2
	DefaultWebhookFastPerWebhook = 16
	DefaultWebhookPoll           = time.Second
)

// DeliveryConfig is the delivery worker's part of the settings.
type DeliveryConfig struct {
	// Schedule is the wait before each retry; nil means
	// core.DefaultRetrySchedule.
	Schedule core.RetrySchedule
	// Timeout is the sender's answer wait. A claim holds its deliveries
	// long enough for a queued one to wait for a busy slot and then be
	// sent.
	Timeout time.Duration
	// Workers bounds the sends in flight over every webhook, PerWebhook
	// those to one webhook, so that a receiver that never answers holds
	// PerWebhook slots and never the whole pool. A webhook whose last
	// answer was a 2xx within fastAnswer may have FastPerWebhook: one
	// receiver taking 1,000 messages a second needs more than 2 at once,
	// and a receiver that slows down drops back at its next answer. Sends
	// take longer when the process also sends to chat channels and the
	// machine is busy: the default leaves room for that, and a slow
	// receiver still holds PerWebhook.
	Workers        int
	PerWebhook     int
	FastPerWebhook int
	// Poll is how often the worker looks for due retries and for
	// deliveries queued by other processes. Scores stored by this
	// process wake it at once (Poke).
	Poll time.Duration
}

// DeliveryDeps are the ports the delivery worker uses.
type DeliveryDeps struct {
	Queue  ports.DeliveryQueue
	Sender ports.WebhookSender
	// Channels sends the deliveries of channels (Slack, Discord,
	// Telegram, ntfy); nil means Sender, when it sends those too.
	Channels ports.ChannelSender
	Sealer   *core.Sealer
	Clock    ports.Clock
	Log      *slog.Logger
	Metrics  ports.Metrics // counts tries; nil counts nothing
	// SwitchedOff is told once of each webhook whose switch-off one of
	// the worker's attempts stored (the owner's notification hangs off
	// it); nil does nothing.
	SwitchedOff func(context.Context, core.Webhook)
	// SiteURL gives the public address a channel's burst links to for
	// the matches it does not list, read at each burst, as the digests'
	// (ChannelDigestDeps.SiteURL). Nil links nowhere.
	SiteURL func() string
}

// DeliveryWorker sends queued webhook deliveries. The deliveries
// themselves are rows of the delivery queue (ports.DeliveryQueue):
// MatchStore.SetScores queues them with the score, Run sends whatever is
// due, and a process that stops leaves nothing but rows that the next one
// picks up. What an answer does to the delivery (core.Delivery.Attempted)
// and to its webhook (core.Webhook.AfterDelivery), and how long the log
// is (core.DeliveryLogSize), is decided here and handed to the queue.
//
// Two answers say more than "failed". A 410 ends its delivery and
// switches the webhook off at once (core.Delivery.Gone); the worker hands
// back, still queued, what it holds for that webhook rather than send it
// into the 410. A 429 or 503 whose Retry-After asks for a later try than
// the schedule's gets it, at most a day later (core.Delivery.WithRetryAfter).
//
// A chat channel (Slack, Discord, Telegram, ntfy) takes about one message
// a second, so its deliveries fall due on whole seconds (core.ChannelSlot)
// and go out in bursts: the worker sends one message to a channel at a
// time, and when it sends a match it claims the rest of the channel's due
// matches with it (DeliveryQueue.ClaimBurst) and sends them all as one
// message (core.RenderChannelBurst). The message's outcome is every one's,
// recorded in one write: delivered together, or tried again together.
// Each match keeps its own delivery, for the log, replays and counts.
type DeliveryWorker struct {
	deps  DeliveryDeps
	cfg   DeliveryConfig
	msg   messenger
	rules ports.AttemptRules
	lease time.Duration
	wake  chan struct{}
	site  func() string

	soonMu sync.Mutex
	soon   time.Time       // the earliest retry the recorder asked to be woken for; zero when none
	off    map[string]bool // webhooks switched off or deleted since the worker last looked: each once
}

// NewDeliveryWorker returns the delivery worker; Run starts it.
func NewDeliveryWorker(deps DeliveryDeps, cfg DeliveryConfig) *DeliveryWorker {
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
	if cfg.FastPerWebhook <= 0 {
		cfg.FastPerWebhook = DefaultWebhookFastPerWebhook
	}
	cfg.FastPerWebhook = min(max(cfg.FastPerWebhook, cfg.PerWebhook), cfg.Workers)
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultWebhookPoll
	}
	deps.Clock = orSystemClock(deps.Clock)
	deps.Log = orDefaultLog(deps.Log)
	deps.Metrics = orNoMetrics(deps.Metrics)
	if deps.SiteURL == nil {
		deps.SiteURL = func() string { return "" }
	}
	return &DeliveryWorker{
		site: deps.SiteURL,
		deps: deps,
		cfg:  cfg,
		msg:  messenger{sender: deps.Sender, channels: channelSender(deps.Channels, deps.Sender), sealer: deps.Sealer, metrics: deps.Metrics},
		// A channel on a digest that failed sends switch off ends its
		// period, as its owner's switch-off does.
		rules: ports.AttemptRules{Webhook: core.Webhook.AfterDelivery, KeepLog: core.DeliveryLogSize, EndPeriod: periodEnd(deps.Clock, deps.SiteURL)},
		// A claimed delivery may wait for the sends of its webhook held
		// before it (up to half a claim, and the claim), each within the
		// timeout; the margin covers a slow database, and leaseMargin the
		// record of its own send (leased).
		lease: max(time.Minute, time.Duration(claimAhead*3/2+2)*cfg.Timeout+leaseMargin),
		wake:  make(chan struct{}, 1),
	}
}

// secretSweep is how often Run clears the secrets whose rotation's
// overlap ended. They stop signing at the end by the worker's clock
// either way; the sweep bounds how long one stays in the database after.
const secretSweep = 10 * time.Minute

// ForgetReplacedSecrets clears from the store every secret a rotation
// replaced whose overlap has ended by the worker's clock. Run calls it
// every secretSweep.
func (s *DeliveryWorker) ForgetReplacedSecrets(ctx context.Context) error {
	n, err := s.deps.Queue.ForgetPreviousSecrets(ctx, s.deps.Clock.Now())
	if n > 0 {
		s.deps.Log.InfoContext(ctx, "forgot replaced webhook secrets whose overlap ended", "webhooks", n)
	}
	return err
}

// Poke tells the worker that deliveries may be due now. It never blocks.
func (s *DeliveryWorker) Poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run sends due deliveries until ctx ends, then gives back what it
// claimed and did not start, lets the sends under way finish (each within
// the sender's timeout) and be recorded (while a failing database lets
// their leases hold, at most) and returns. Only one Run of a service may be
// going at once; other processes run their own.
func (s *DeliveryWorker) Run(ctx context.Context) {
	s.takeOff() // switch-offs a Run before stored: nothing is held for them
	w := &worker{
		s:       s,
		depth:   s.cfg.PerWebhook * claimAhead,
		busy:    map[string]int{},
		held:    map[string][]ports.DueDelivery{},
		more:    map[string]bool{},
		fast:    map[string]bool{},
		gone:    map[string]time.Time{},
		quiet:   map[string]time.Time{},
		done:    make(chan sent, s.cfg.Workers),
		claims:  make(chan claimed, 1),
		records: make(chan []ports.Attempt, maxRecordBatch),
		chats:   make(chan []ports.Attempt, maxRecordBatch),
		alarm:   time.NewTimer(time.Hour),
	}
	w.alarm.Stop()
	defer w.alarm.Stop()
	var recorders sync.WaitGroup
	recorders.Go(func() { s.recorder(w.records) })
	recorders.Go(func() { s.recorder(w.chats) })
	defer func() { close(w.records); close(w.chats); recorders.Wait() }()
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		Sweep(ctx, secretSweep, s.deps.Log, "forgetting replaced webhook secrets", s.ForgetReplacedSecrets)
	}()
	defer func() { <-swept }()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	w.fill(ctx)
	for {
		select {
		case <-ctx.Done():
			w.stop()
			return
		case <-s.wake:
			w.woken(ctx)
			// Whatever the wake-up was for may have queued a channel's
			// delivery, due at the end of this second.
			w.slot = core.ChannelSlot(s.deps.Clock.Now())
			w.rearm()
		case <-w.alarm.C:
			w.alarmAt = time.Time{}
			w.startHeld() // a channel's quiet time may have ended
			w.fill(ctx)
			w.rearm()
		case <-tick.C:
			w.fill(ctx)
		case <-w.gap:
			w.gap = nil
			w.fill(ctx)
		case c := <-w.claims:
			w.took(ctx, c)
		case e := <-w.done:
			if w.finished(e) {
				w.fill(ctx)
			}
		}
	}
}

// claimAhead is how many sends' worth of deliveries the worker claims
// for a webhook at once: a busy webhook's next message is at hand when a
// send ends, and claims, each a write, stay a fraction of the sends.
const claimAhead = 16

// claimGap is the least time between the starts of two claims. Every
// score stored here wakes the worker; a claim for each would be a write
// for each message, beside the writes that store the scores, and on
// SQLite writers queue for one lock. Gathered, one claim takes what a
// few milliseconds brought, and the wait is a small part of a
// message's way.
const claimGap = 5 * time.Millisecond

// idleGap is the least time between claims for wake-ups after a claim
// that found nothing.
const idleGap = 50 * time.Millisecond

// claimWebhooks is how many webhooks' worth of deliveries one claim
// asks for at most.
const claimWebhooks = 4

// recordGather is how long the recorder waits for more attempts to
// store with the first, for the same reason: fewer, larger
// transactions. A send's slot is free before its attempt is stored, so
// the wait holds up no message.
const recordGather = 5 * time.Millisecond

// worker is the state of one Run, touched only by its goroutine, which
// never waits for the database: claims run beside it, one at a time,
// and attempts are recorded by the recorder.
type worker struct {
	s       *DeliveryWorker
	depth   int                            // claimed at most per webhook in one claim
	running int                            // sends in flight
	busy    map[string]int                 // per webhook: sends in flight
	held    map[string][]ports.DueDelivery // per webhook: claimed, waiting for a slot
	waiting int                            // held in all
	full    bool                           // the last fill stopped with nothing more to hold
	more    map[string]bool                // webhooks that may have due deliveries the last claim did not take
	fast    map[string]bool                // per webhook with sends under way or held: its last answer was fast
	gone    map[string]time.Time           // per webhook that answered 410: until when claims leave it out
	quiet   map[string]time.Time           // per chat channel: no message before this slot, one a second
	done    chan sent                      // each send that ended
	claims  chan claimed                   // the outcome of the claim under way
	records chan []ports.Attempt           // webhooks' attempts made, for their recorder: those of one message together
	chats   chan []ports.Attempt           // the same for chat channels, recorded apart (see recorder)

	alarm   *time.Timer // wakes the worker when deliveries it knows of fall due
	alarmAt time.Time   // when alarm fires; zero when it is not set
	slot    time.Time   // the slot of the latest wake-up: a channel's delivery may fall due then
	retry   time.Time   // the earliest retry the recorder asked to be woken for

	claiming  bool             // a claim is under way
	again     bool             // and another was asked for meanwhile
	lastClaim time.Time        // when the last claim started
	backlog   bool             // the last claim left due deliveries behind
	lastWide  time.Time        // when the last claim that left webhooks out started
	gap       <-chan time.Time // fires when a claim held back by claimGap may start; nil when none is
	releasing sync.WaitGroup   // hand-backs of deliveries of webhooks that answered 410
}

// sent is the end of one send.
type sent struct {
	webhook string
	known   bool // a message went out and fast says how it went
	fast    bool // a 2xx answer within fastAnswer
	gone    bool // the answer was a 410: the webhook switches off (core.Delivery.Gone)
}

// goneHold is how long claims leave out a webhook that answered 410,
// and how long its deliveries claimed meanwhile are handed back rather
// than sent. The switch-off is stored by the recorder within
// milliseconds, after which claims leave the webhook out anyway; until
// then its other messages would each be sent, refused and failed, where
// left queued they go out once the owner switches it on again.
const goneHold = 2 * time.Second

// fastAnswer is the answer time under which a webhook may have
// FastPerWebhook sends at once.
const fastAnswer = 250 * time.Millisecond

// claimed is the outcome of one claim, with what it was asked.
type claimed struct {
	due  []ports.DueDelivery
	err  error
	free int
	skip []string
}

// maxRecordBatch is how many attempts the recorder gathers for one
// transaction at most; the attempts of one message are never split, so
// a burst's may make it more.
const maxRecordBatch = 64

// maxBurst bounds the deliveries one channel message carries: more than
// a second brings a channel at the rates the service is built for. A
// longer backlog goes out maxBurst a message, one message at a time.
const maxBurst = 1000

// recorder stores attempts as they come, those waiting together in one
// transaction: sends end together often, and on SQLite a commit costs
// more than the writes in it. A send's slot is free as soon as its
// attempts are handed over, so a slow write never holds up sending; the
// channel's bound holds sending back when writes fall behind. The
// attempts of one message (a channel's burst) are stored in one
// transaction, so they share their outcome in the database too. It
// returns once in is closed and everything in it is stored.
//
// Webhooks and chat channels have a recorder each: a burst's write, a
// second's matches of a channel, takes as long as many webhook writes;
// behind it the webhooks' outcomes would be stored late and, once the
// channel between them filled, their sends would wait. A destination's
// attempts always go to the same recorder, so the two never write the
// same rows or trim the same log.
func (s *DeliveryWorker) recorder(in <-chan []ports.Attempt) {
	gather := time.NewTimer(recordGather)
	defer gather.Stop()
	for first := range in {
		batch := append([]ports.Attempt(nil), first...)
		gather.Reset(recordGather)
	collect:
		for len(batch) < maxRecordBatch {
			select {
			case more, ok := <-in:
				if !ok {
					break collect
				}
				batch = append(batch, more...)
			case <-gather.C:
				break collect
			}
		}
		results, err := s.finish(batch)
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

// recordTimeout bounds one write of attempts. It is not tied to the
// worker's context, so that stopping still stores what was sent; a
// database that hangs holds the recorder, and with it every send, no
// longer than the attempts' leases (finish makes the write again until
// then), not for ever.
const recordTimeout = 30 * time.Second

// finish stores the attempts of batch, making a failed write again while
// their leases hold: the messages went out, and a delivery whose attempt
// is not stored is claimed again once its lease runs out and sent a
// second time. A write is safe to make again: it stores an attempt only
// where the row still carries its claim, so one that was stored after
// all, or claimed by another since, is left as it is.
func (s *DeliveryWorker) finish(batch []ports.Attempt) ([]ports.AttemptResult, error) {
	var until time.Time // the last lease of the batch to run out
	for _, a := range batch {
		if a.Due.LeaseUntil.After(until) {
			until = a.Due.LeaseUntil
		}
	}
	var res []ports.AttemptResult
	err := again(until, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		defer cancel()
		var err error
		res, err = s.deps.Queue.FinishAttempts(ctx, batch, s.rules)
		return err
	})
	return res, err
}

// recorded follows up a stored attempt: a retry due before the next poll
// wakes the worker itself, and a webhook switched off is logged.
func (s *DeliveryWorker) recorded(a ports.Attempt, r ports.AttemptResult) {
	if !r.Recorded {
		return
	}
	if d := a.Delivery; d.Status == core.DeliveryQueued && d.NextAttemptAt.Sub(s.deps.Clock.Now()) < s.cfg.Poll {
		s.wakeAt(d.NextAttemptAt)
	}
	if !r.SwitchedOff {
		return
	}
	s.Off(r.Webhook.ID)
	s.deps.Log.Info("webhook switched off", "webhook", r.Webhook.ID, "owner", r.Webhook.OwnerID, "reason", r.Webhook.DisabledReason)
	if s.deps.SwitchedOff != nil {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		defer cancel()
		s.deps.SwitchedOff(ctx, r.Webhook)
	}
}

// wakeAt asks the worker to look for due deliveries at t. The worker
// keeps one timer for the earliest time asked (rearm), however many
// deliveries ask for it.
func (s *DeliveryWorker) wakeAt(t time.Time) {
	s.soonMu.Lock()
	if s.soon.IsZero() || t.Before(s.soon) {
		s.soon = t
	}
	s.soonMu.Unlock()
	s.Poke()
}

// Off tells the worker that webhook id is switched off (after five
// failures in a row, or by its owner) or deleted: what it holds for it
// goes back to the queue, to wait until the webhook is on again, rather
// than each spend a try. A claim already under way may still bring a few.
func (s *DeliveryWorker) Off(id string) {
	s.soonMu.Lock()
	if s.off == nil {
		s.off = map[string]bool{}
	}
	s.off[id] = true
	s.soonMu.Unlock()
	s.Poke()
}

// takeOff returns the webhooks Off was told of since the last
// call.
func (s *DeliveryWorker) takeOff() map[string]bool {
	s.soonMu.Lock()
	defer s.soonMu.Unlock()
	off := s.off
	s.off = nil
	return off
}

// takeSoon returns the earliest time wakeAt was asked for since the last
// call, zero when none.
func (s *DeliveryWorker) takeSoon() time.Time {
	s.soonMu.Lock()
	defer s.soonMu.Unlock()
	t := s.soon
	s.soon = time.Time{}
	return t
}

// rearm sets the worker's one timer for the earliest time ahead at which
// it knows deliveries fall due: the slot of the latest wake-up, or a
// retry the recorder asked for. A wake-up that comes sooner looks then
// anyway.
func (w *worker) rearm() {
	now := w.s.deps.Clock.Now()
	if t := w.s.takeSoon(); !t.IsZero() && (w.retry.IsZero() || t.Before(w.retry)) {
		w.retry = t
	}
	var next time.Time
	for _, t := range []*time.Time{&w.slot, &w.retry} {
		switch {
		case !t.After(now):
			*t = time.Time{} // passed: a claim since has looked
		case next.IsZero() || t.Before(next):
			next = *t
		}
	}
	if next.IsZero() || next.Equal(w.alarmAt) {
		return
	}
	w.alarm.Reset(next.Sub(now))
	w.alarmAt = next
}

// fill starts a claim of due deliveries, or notes that another should
// follow the one under way. Webhooks holding more than half a claim are
// left out: they have work at hand. One holding less is claimed for
// before it runs dry, so that its sends go on while the claim runs.
// Chat channels waiting for their next second are left out too.
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
	if wait := claimGap - time.Since(w.lastClaim); wait > 0 && !w.backlog {
		if w.gap == nil {
			w.gap = time.After(wait)
		}
		return
	}
	w.lastClaim = time.Now()
	var skip []string
	for id, q := range w.held {
		if !w.low(len(q)) {
			skip = append(skip, id)
		}
	}
	for id, until := range w.gone {
		if time.Now().Before(until) {
			skip = append(skip, id)
		} else {
			delete(w.gone, id)
		}
	}
	// A chat channel waiting for its next second takes nothing before it:
	// what falls due meanwhile goes with that second's message, claimed
	// then. Claimed now it would be held, and a full hand held makes
	// wake-ups wait (woken).
	now := w.s.deps.Clock.Now()
	for id, until := range w.quiet {
		if now.Before(until) {
			skip = append(skip, id)
		}
	}
	if len(skip) > 0 {
		w.lastWide = w.lastClaim
	}
	w.claiming, w.again = true, false
	// A claim reads its candidates before it keeps PerWebhook of each
	// (on Postgres locking every one), so asking for the whole pool when
	// one webhook has a backlog would read and lock many rows to take a
	// few; a few webhooks' worth a claim, and claims that follow, cost
	// less.
	free = min(free, claimWebhooks*w.depth)
	c := ports.DeliveryClaim{Limit: free, PerWebhook: w.depth, Skip: skip, Lease: w.s.lease}
	go func() {
		// Not cut short by a stop: a claim that took rows but was not
		// heard of would leave them to their lease.
		due, err := w.s.deps.Queue.ClaimDeliveries(context.WithoutCancel(ctx), c)
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
	var back []ports.DueDelivery
	for _, d := range c.due {
		id := d.Delivery.WebhookID
		if w.isGone(id) {
			back = append(back, d)
			continue
		}
		got[id]++
		w.held[id] = append(w.held[id], d)
		w.waiting++
	}
	w.release(back)
	w.startHeld()
	// Fewer than asked means every due delivery of the webhooks not left
	// out was seen, unless the per-webhook bound cut some off.
	exhausted := len(c.due) < c.free
	clear(w.more)
	for _, id := range c.skip {
		w.more[id] = true
	}
	for id, n := range got {
		if n >= w.depth || !exhausted {
			w.more[id] = true
		}
	}
	// Known work waiting is claimed without the gap, which is there for
	// wake-ups that may find nothing. A webhook the per-webhook bound cut
	// off now holds a full claim and is left out of the next one: it
	// claims through finished once it runs low. Claiming again at once
	// for it would read past its backlog, and every other's, to find
	// nothing, one claim after each, and the more so the longer the
	// backlog.
	w.backlog = !exhausted
	switch {
	case w.backlog:
		w.fill(ctx)
	case w.again:
		w.woken(ctx)
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
	if err := w.s.deps.Queue.ReleaseDeliveries(ctx, back); err != nil {
		w.s.deps.Log.WarnContext(ctx, "handing back claimed webhook deliveries failed; they are taken again when their lease runs out", "err", err)
	}
	for w.running > 0 {
		w.finished(<-w.done)
	}
	w.releasing.Wait()
}

// handBack hands back, still queued, what is held for webhook id: it
// answered 410 or was switched off, and its deliveries wait until the
// owner switches it on again. Claims leave out a webhook once its
// switch-off is stored.
func (w *worker) handBack(id string) {
	back := w.held[id]
	delete(w.held, id)
	delete(w.more, id)
	w.waiting -= len(back)
	w.release(back)
}

// isGone reports whether webhook id answered 410 within goneHold.
func (w *worker) isGone(id string) bool {
	until, ok := w.gone[id]
	return ok && time.Now().Before(until)
}

// release hands deliveries back beside the worker's goroutine, which
// never waits for the database; stop waits for it.
func (w *worker) release(back []ports.DueDelivery) {
	if len(back) == 0 {
		return
	}
	w.releasing.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.s.deps.Queue.ReleaseDeliveries(ctx, back); err != nil {
			w.s.deps.Log.WarnContext(ctx, "handing back claimed webhook deliveries failed; they are taken again when their lease runs out", "err", err)
		}
	})
}

// startHeld starts held deliveries while slots are free, each one's
// oldest first, the least busy destination next: when the pool is the
// bound, every destination with work gets an equal share of it, and a
// webhook is not left behind the backlogs of channels taking the same
// matches. A chat channel's held matches start together, as one burst.
func (w *worker) startHeld() {
	for id := range w.s.takeOff() {
		w.handBack(id)
	}
	now := w.s.deps.Clock.Now()
	for id, until := range w.quiet {
		if !now.Before(until) {
			delete(w.quiet, id)
		}
	}
	for w.running < w.s.cfg.Workers {
		next := ""
		for id, q := range w.held {
			if len(q) > 0 && w.busy[id] < w.slots(q[0].Webhook) && w.quiet[id].IsZero() && (next == "" || w.busy[id] < w.busy[next]) {
				next = id
			}
		}
		if next == "" {
			return
		}
		q := w.held[next]
		group, rest := q[:1], q[1:]
		if burstable(q[0]) {
			group, rest = splitBurst(q)
		}
		if len(rest) == 0 {
			delete(w.held, next)
		} else {
			w.held[next] = rest
		}
		w.waiting -= len(group)
		if group = w.leased(group); len(group) == 0 {
			continue
		}
		if group[0].Webhook.Kind.IsChannel() {
			// Its next message waits for the next slot: one a second,
			// even when matches of this one come in late (their
			// transaction began in the second before and committed
			// after its burst was claimed).
			w.quiet[next] = core.ChannelSlot(now)
			if w.quiet[next].After(w.slot) {
				w.slot = w.quiet[next]
				w.rearm()
			}
		}
		w.start(group)
	}
}

// leaseMargin is what recording an attempt may take after its send: a
// delivery is sent only while its lease outlasts the sender's timeout
// and this, so that the attempt is stored before another claim can take
// the delivery.
const leaseMargin = 10 * time.Second

// leased returns the deliveries of group whose lease lasts through a
// send and its record, and hands the others back. When many destinations
// share the pool, what is held for one may wait past its lease; a claim,
// this worker's or another's, may then take it again, and sent it would
// go out twice. Handed back, it is claimed afresh and sent once.
func (w *worker) leased(group []ports.DueDelivery) []ports.DueDelivery {
	enough := time.Now().Add(w.s.cfg.Timeout + leaseMargin)
	short := func(d ports.DueDelivery) bool { return d.LeaseUntil.Before(enough) }
	if !slices.ContainsFunc(group, short) {
		return group
	}
	var kept, late []ports.DueDelivery
	for _, d := range group {
		if short(d) {
			late = append(late, d)
		} else {
			kept = append(kept, d)
		}
	}
	w.release(late)
	return kept
}

// burstable reports whether d goes out in its channel's burst: a chat
// channel's match message not written yet. A digest, and a message
// stored before bursts were sent, go out alone as they are.
func burstable(d ports.DueDelivery) bool {
	return d.Webhook.Kind.IsChannel() && d.Delivery.Event == core.EventMatchCreated && len(d.Delivery.Payload) == 0
}

// splitBurst takes the burstable deliveries of q, at most maxBurst, and
// returns them and the rest, each in the order of q.
func splitBurst(q []ports.DueDelivery) (group, rest []ports.DueDelivery) {
	for _, d := range q {
		if len(group) < maxBurst && burstable(d) {
			group = append(group, d)
		} else {
			rest = append(rest, d)
		}
	}
	return group, rest
}

// start sends one message of the deliveries in group: one delivery, or
// a chat channel's burst.
func (w *worker) start(group []ports.DueDelivery) {
	id := group[0].Delivery.WebhookID
	w.running++
	w.busy[id]++
	go func() {
		// A send under way finishes even when Run is told to stop:
		// stopping waits for it rather than leave a message sent but not
		// recorded.
		began := time.Now()
		var as []ports.Attempt
		if burstable(group[0]) {
			as = w.s.burst(context.Background(), group)
		} else if a, ok := w.s.attempt(context.Background(), group[0]); ok {
			as = []ports.Attempt{a}
		}
		e := sent{webhook: id, known: len(as) > 0}
		if e.known {
			if group[0].Webhook.Kind.IsChannel() {
				w.chats <- as
			} else {
				w.records <- as
			}
			d := as[0].Delivery
			e.fast, e.gone = d.Status == core.DeliveryDelivered && time.Since(began) < fastAnswer, d.Gone()
		}
		w.done <- e
	}()
}

// slots is how many sends to h may be under way: one to a chat channel,
// which takes about one message a second; to a webhook PerWebhook, or
// FastPerWebhook while its answers come fast.
func (w *worker) slots(h core.Webhook) int {
	switch {
	case h.Kind.IsChannel():
		return 1
	case w.fast[h.ID]:
		return w.s.cfg.FastPerWebhook
	}
	return w.s.cfg.PerWebhook
}

// finished books the end of a send, starts what the freed slot allows,
// and reports whether a claim may now find work.
func (w *worker) finished(e sent) bool {
	id := e.webhook
	w.running--
	if e.known {
		w.fast[id] = e.fast
	}
	if e.gone {
		// The receiver asked for no more: what is held for it goes back
		// queued, for when the owner switches the webhook on again.
		w.gone[id] = time.Now().Add(goneHold)
		w.handBack(id)
	}
	if w.busy[id]--; w.busy[id] <= 0 {
		delete(w.busy, id)
		if _, holding := w.held[id]; !holding {
			delete(w.fast, id) // idle: it starts again at PerWebhook
		}
	}
	w.startHeld()
	return w.full || w.low(len(w.held[id])) && w.more[id]
}

// woken claims for a wake-up. While a claim would leave webhooks out,
// wake-ups start one at most every idleGap: a webhook with a backlog is
// left out of claims because it holds enough, and a claim must read
// past its backlog to find the rows of others, or nothing. On Postgres a
// wake-up per score made that the busiest statement, and on SQLite it
// grew with the backlog until it held sending back. A webhook running
// low claims through finished, without this wait.
func (w *worker) woken(ctx context.Context) {
	if wait := idleGap - time.Since(w.lastWide); wait > 0 && w.leavesOut() {
		if w.gap == nil {
			w.gap = time.After(wait)
		}
		return
	}
	w.fill(ctx)
}

// leavesOut reports whether a claim now would leave a webhook out: one
// holding more than half a claim, or one that answered 410 within
// goneHold.
func (w *worker) leavesOut() bool {
	for _, q := range w.held {
		if !w.low(len(q)) {
			return true
		}
	}
	for _, until := range w.gone {
		if time.Now().Before(until) {
			return true
		}
	}
	return false
}

// low reports whether a webhook holding n deliveries is due a claim:
// what it holds lasts about as long as a claim takes.
func (w *worker) low(n int) bool { return n <= w.depth/2 }

// attempt makes one try of a claimed delivery and returns it, to be
// recorded; ok is false when there was nothing to send.
func (s *DeliveryWorker) attempt(ctx context.Context, due ports.DueDelivery) (a ports.Attempt, ok bool) {
	d := due.Delivery
	if len(d.Payload) == 0 {
		// The body is rendered at the first try, from the match as stored,
		// and kept: every later try, and a manual retry, sends these bytes.
		if due.Match == nil {
			// The match went with its phrase before anything was sent:
			// there is nothing left to announce.
			if err := s.deps.Queue.DropDelivery(ctx, due); err != nil {
				s.deps.Log.WarnContext(ctx, "dropping a delivery of a deleted match failed", "delivery", d.ID, "err", err)
			}
			return a, false
		}
		var err error
		if due.Webhook.Kind.IsChannel() {
			d.Payload, err = channelRender(due.Webhook, *due.Match)
		} else {
			d.Payload, err = s.msg.matchCreated(d, *due.Match)
		}
		if err != nil {
			// Left to its lease: a later claim tries again.
			s.deps.Log.WarnContext(ctx, "preparing a webhook message failed", "delivery", d.ID, "err", err)
			return a, false
		}
	}
	var res ports.WebhookResult
	var err error
	if due.Webhook.Kind.IsChannel() {
		res, err = s.msg.sendChannel(ctx, due.Webhook, due.SealedSecret, d, 1)
		if err != nil {
			s.deps.Log.ErrorContext(ctx, "a channel's destination does not open; its messages fail until it is set again", "channel", due.Webhook.ID, "err", err)
			s.deps.Metrics.Count(ports.EventDeliveriesFail, 1)
		}
	} else {
		res, err = s.msg.send(ctx, due.Webhook, due.SealedSecret, due.PreviousSealedSecret, d, s.deps.Clock.Now())
		if err != nil {
			s.deps.Log.ErrorContext(ctx, "a webhook's signing secret does not open; its messages fail until it is replaced", "webhook", due.Webhook.ID, "err", err)
			s.deps.Metrics.Count(ports.EventDeliveriesFail, 1)
		}
	}
	return ports.Attempt{Due: due, Delivery: s.outcome(d, due.Webhook, res, s.deps.Clock.Now(), mrand.Float64())}, true
}

// outcome is d, a delivery of w, after a try made at at that got res:
// delivered, failed, or queued for the schedule's next try (jitter as
// core.NextDeliveryStep takes it), or a later one a Retry-After asked
// for, on the slot of a chat channel (core.Webhook.DueAt).
func (s *DeliveryWorker) outcome(d core.Delivery, w core.Webhook, res ports.WebhookResult, at time.Time, jitter float64) core.Delivery {
	d = d.Attempted(s.cfg.Schedule, res.Status, res.Error, at, jitter).WithRetryAfter(res.RetryAfter, at)
	if d.Status == core.DeliveryQueued {
		d.NextAttemptAt = w.DueAt(d.NextAttemptAt)
	}
	return d
}

// burst sends a chat channel's held matches, with the rest of its due
// ones claimed now, as one message, and returns an attempt for each: the
// same outcome for all, the same next try for those queued again. A
// delivery whose match was deleted is dropped. Nothing is returned when
// nothing was sent; what is claimed is then left to its lease.
func (s *DeliveryWorker) burst(ctx context.Context, group []ports.DueDelivery) []ports.Attempt {
	ch := group[len(group)-1]
	if n := maxBurst - len(group); n > 0 {
		more, err := s.deps.Queue.ClaimBurst(ctx, ch.Webhook.ID, n, s.lease)
		if err != nil {
			s.deps.Log.WarnContext(ctx, "claiming the rest of a channel's matches failed; those held go now, the rest with its next message",
				"channel", ch.Webhook.ID, "err", err)
		}
		if len(more) > 0 {
			ch = more[len(more)-1] // the channel as it stands now
			group = append(group, more...)
		}
	}
	kept := make([]ports.DueDelivery, 0, len(group))
	ms := make([]core.ChannelMatch, 0, len(group))
	for _, due := range group {
		if due.Match == nil {
			// The match went with its phrase before anything was sent:
			// there is nothing left to announce.
			if err := s.deps.Queue.DropDelivery(ctx, due); err != nil {
				s.deps.Log.WarnContext(ctx, "dropping a delivery of a deleted match failed", "delivery", due.Delivery.ID, "err", err)
			}
			continue
		}
		kept = append(kept, due)
		ms = append(ms, core.ChannelMatchOf(*due.Match))
	}
	if len(kept) == 0 {
		return nil
	}
	body, err := core.RenderChannelBurst(ch.Webhook.Kind, ms, s.deps.Clock.Now(), dashboardLink(s.site))
	if err != nil {
		// Left to their leases: a later claim tries again.
		s.deps.Log.WarnContext(ctx, "preparing a channel message failed", "channel", ch.Webhook.ID, "matches", len(kept), "err", err)
		return nil
	}
	// The body goes out under the first delivery's id and is not kept:
	// each try writes the message again from the matches it then carries.
	d := kept[0].Delivery
	d.Payload = body
	res, err := s.msg.sendChannel(ctx, ch.Webhook, ch.SealedSecret, d, len(kept))
	if err != nil {
		s.deps.Log.ErrorContext(ctx, "a channel's destination does not open; its messages fail until it is set again", "channel", ch.Webhook.ID, "err", err)
		s.deps.Metrics.Count(ports.EventDeliveriesFail, len(kept))
	}
	at, jitter := s.deps.Clock.Now(), mrand.Float64()
	out := make([]ports.Attempt, len(kept))
	for i, due := range kept {
		out[i] = ports.Attempt{Due: due, Delivery: s.outcome(due.Delivery, ch.Webhook, res, at, jitter)}
	}
	return out
}
