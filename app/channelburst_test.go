package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// burstRig is the delivery worker with the subscription and channel
// services beside it, made inside a synctest bubble: the bubble's clock
// is the store's, the worker's and the services' clock, and the test
// moves it. Webhook messages go to in-process receivers; channel messages
// go through the HTTP sender to the fake services, in their real shapes.
type burstRig struct {
	*Channels
	hooks  *Webhooks
	store  *gormstore.WebhookStore
	queue  *attemptTally
	worker *DeliveryWorker
	counts *counter
	w      world
	fake   *fakeServices
	n      int // posts made so far, for their titles
}

// counter is the worker's metrics, counted by event.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) Count(event string, n int) {
	c.mu.Lock()
	c.n[event] += n
	c.mu.Unlock()
}

func (c *counter) of(event string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[event]
}

// attemptTally is the worker's queue, keeping the recorded attempts of
// each FinishAttempts call. While hold is set, a write of a channel's
// attempts waits until it is closed: a slow write.
type attemptTally struct {
	ports.DeliveryQueue
	mu    sync.Mutex
	calls [][]ports.Attempt
	hold  chan struct{}
	hang  int // the next writes that never answer: each waits for its context to end
}

func (q *attemptTally) FinishAttempts(ctx context.Context, as []ports.Attempt, rules ports.AttemptRules) ([]ports.AttemptResult, error) {
	q.mu.Lock()
	hold, hang := q.hold, q.hang > 0
	if hang {
		q.hang--
	}
	q.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if hold != nil && len(as) > 0 && as[0].Due.Webhook.Kind.IsChannel() {
		<-hold
	}
	res, err := q.DeliveryQueue.FinishAttempts(ctx, as, rules)
	if err == nil {
		var kept []ports.Attempt
		for i, r := range res {
			if r.Recorded {
				kept = append(kept, as[i])
			}
		}
		q.mu.Lock()
		q.calls = append(q.calls, kept)
		q.mu.Unlock()
	}
	return res, err
}

func (q *attemptTally) recorded() [][]ports.Attempt {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.calls)
}

// viaBoth sends webhook messages through one sender and channel
// messages through another.
type viaBoth struct {
	ports.WebhookSender
	ports.ChannelSender
}

// newBurstRig makes the rig; call it inside the bubble. w and fake are
// made outside it: the store's statement cache and the fake's server
// keep goroutines for their whole life. The worker polls once an hour,
// so what it sends between wake-ups it sends because it woke itself.
func newBurstRig(t *testing.T, w world, fake *fakeServices, hook ports.WebhookSender, schedule core.RetrySchedule) *burstRig {
	t.Helper()
	sealer, err := core.NewSealer(testSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	// Each answer closes its connection: an idle kept-alive connection
	// has a reader waiting on the network, and the bubble's clock moves
	// only while every goroutine in it waits on the bubble.
	fake.srv.Config.SetKeepAlivesEnabled(false)
	sender := webhooksender.New(webhooksender.Config{Timeout: 2 * time.Second, AllowPrivate: true, TelegramAPI: fake.srv.URL})
	store := gormstore.NewWebhookStore(w.db)
	q := &attemptTally{DeliveryQueue: store}
	counts := &counter{n: map[string]int{}}
	worker := NewDeliveryWorker(DeliveryDeps{Queue: q, Sender: hook, Channels: sender, Sealer: sealer, Log: quiet, Metrics: counts,
		SiteURL: func() string { return "https://earshot.test" }},
		DeliveryConfig{Schedule: schedule, Timeout: 2 * time.Second, Poll: time.Hour})
	hooks := NewWebhooks(WebhookDeps{Store: store, Sender: viaBoth{hook, sender}, Sealer: sealer, Log: quiet, Wake: worker.Poke},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 10}, AllowPrivate: true})
	r := &burstRig{Channels: NewChannels(ChannelDeps{Webhooks: hooks, Store: gormstore.NewChannelStore(w.db), Sender: sender}),
		hooks: hooks, store: store, queue: q, worker: worker, counts: counts, w: w, fake: fake}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); worker.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// add makes an at-once channel of kind k, taking every match.
func (r *burstRig) add(t *testing.T, ownerID string, k core.ChannelKind) core.Webhook {
	t.Helper()
	in := r.fake.newTarget(k)
	zero := 0
	in.MinScore = &zero
	ch, err := r.Create(context.Background(), ownerID, in)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// score stores one post a value as the owner's matches and scores them in
// one call, then wakes the worker as the scoring service does. Post n of
// the rig is titled "post n scored V".
func (r *burstRig) score(t *testing.T, ownerID string, values ...int) []core.Match {
	t.Helper()
	return r.scoreWith(t, ownerID, core.QueueMatchCreated, values...)
}

// scoreWith is score with the deliveries queued by plan.
func (r *burstRig) scoreWith(t *testing.T, ownerID string, plan ports.DeliveryPlan, values ...int) []core.Match {
	t.Helper()
	ctx := context.Background()
	p, err := core.NewPhrase(ownerID, "burst "+randomHexT(t), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1000}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var batch []ports.PostMatches
	for _, v := range values {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: randomHexT(t), Author: "ada",
			Title: fmt.Sprintf("post %d scored %d", r.n, v), Text: "who sells one", URL: fmt.Sprintf("https://x.com/ada/status/%d", r.n)},
			PhraseIDs: []string{p.ID}})
		r.n++
	}
	res, err := r.w.matches.SaveMatches(ctx, ownerID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	var up []ports.ScoreUpdate
	for i, m := range res.Matches {
		up = append(up, ports.ScoreUpdate{Match: m, Score: core.Score{Value: values[i], Intent: core.IntentBuying, Reason: "wants one"}})
	}
	got, err := r.w.matches.SetScores(ctx, up, plan)
	if err != nil || len(got) != len(values) {
		t.Fatalf("SetScores: %d of %d, %v", len(got), len(values), err)
	}
	r.worker.Poke()
	return got
}

// queued is the channel's deliveries as stored, queued ones included.
func (r *burstRig) queued(t *testing.T, ownerID, id string) []core.Delivery {
	t.Helper()
	ds, err := r.store.Deliveries(context.Background(), ownerID, id, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// statuses is the status of each of the webhook's deliveries in its
// log, by match.
func (r *burstRig) statuses(t *testing.T, ownerID, hookID string) map[string]core.DeliveryStatus {
	t.Helper()
	out := map[string]core.DeliveryStatus{}
	for _, d := range r.queued(t, ownerID, hookID) {
		out[d.MatchID] = d.Status
	}
	return out
}

// newHookAndSlack makes the rig, inside the bubble, with an owner of
// email who has a webhook (its receiver answers in a millisecond) and an
// at-once Slack channel, both taking every match.
func newHookAndSlack(t *testing.T, w world, fake *fakeServices, email string) (*burstRig, core.Webhook, *inFlight, core.Owner) {
	t.Helper()
	const url = "http://127.0.0.1/hook"
	rcv := newInFlight(time.Millisecond)
	r := newBurstRig(t, w, fake, receivers{url: rcv}, core.RetrySchedule{})
	o := w.owner(t, email)
	zero := 0
	hook, _, err := r.hooks.Create(context.Background(), o.ID, url, &zero, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.add(t, o.ID, core.ChannelSlack)
	return r, hook, rcv, o
}

// moveTo moves the bubble's clock to at (inside a bubble, waiting is how
// the clock moves: timers due on the way fire in order), then waits
// until every goroutine of the bubble has nothing to do but wait.
func moveTo(at time.Time) {
	<-time.After(time.Until(at))
	synctest.Wait()
}

// 300 matches for an at-once Slack channel within one second go out at
// the end of that second as one message: the strongest ten listed,
// strongest first, the other 290 counted with the dashboard's link, the
// whole titled as what it is. Nothing goes before, nothing after, and
// every one of the 300 deliveries is recorded delivered once, in one
// write.
func TestChannelBurstIsOneMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r := newBurstRig(t, w, fake, receivers{}, core.RetrySchedule{})
		o := w.owner(t, "burst@example.com")
		ch := r.add(t, o.ID, core.ChannelSlack)
		start := time.Now() // the bubble starts on a whole second
		if !start.Equal(start.Truncate(time.Second)) {
			t.Fatalf("the bubble starts at %v", start)
		}
		// Ten strong matches (90 to 99) among 290 weaker ones, stored ten
		// at a time over the second.
		values := make([]int, 300)
		for i := range values {
			values[i] = 50 + i%30
			if i%30 == 7 {
				values[i] = 90 + i/30
			}
		}
		var ms []core.Match
		for i := 0; i < 30; i++ {
			moveTo(start.Add(10*time.Millisecond + time.Duration(i)*30*time.Millisecond))
			ms = append(ms, r.score(t, o.ID, values[i*10:(i+1)*10]...)...)
		}
		slot := start.Add(time.Second)
		moveTo(slot.Add(-time.Millisecond))
		if got := fake.requests(core.ChannelSlack); len(got) != 0 {
			t.Fatalf("%d messages before the end of the second: %s", len(got), got[0].Body)
		}
		moveTo(slot)
		got := fake.requests(core.ChannelSlack)
		if len(got) != 1 {
			t.Fatalf("%d messages at the end of the second, want 1", len(got))
		}
		body := string(got[0].Body)
		last := -1
		for v := 99; v >= 90; v-- {
			i := strings.Index(body, fmt.Sprintf(" scored %d", v))
			if i < 0 || i < last {
				t.Fatalf("the message lists %d out of order or not at all: %s", v, body)
			}
			last = i
		}
		if n := strings.Count(body, " scored "); n != 10 {
			t.Fatalf("the message lists %d matches, want 10: %s", n, body)
		}
		for _, want := range []string{"300 new matches", "and 290 more", "<https://earshot.test/app/|see them all>"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the message lacks %q: %s", want, body)
			}
		}

		moveTo(slot.Add(5 * time.Second))
		if n := len(fake.requests(core.ChannelSlack)); n != 1 {
			t.Fatalf("%d messages, want the one", n)
		}
		calls := r.queue.recorded()
		if len(calls) != 1 || len(calls[0]) != 300 {
			t.Fatalf("recorded in %d writes, the first of %d; want the 300 in one", len(calls), len(calls[0]))
		}
		seen := map[string]bool{}
		for _, a := range calls[0] {
			d := a.Delivery
			if d.Status != core.DeliveryDelivered || d.Tries != 1 || d.ResponseStatus != 200 || !d.LastAttemptAt.Equal(slot) || seen[d.ID] ||
				!slices.ContainsFunc(ms, func(m core.Match) bool { return m.ID == d.MatchID }) {
				t.Fatalf("recorded %+v", d)
			}
			seen[d.ID] = true
		}
		for _, d := range r.queued(t, o.ID, ch.ID) {
			if d.Status != core.DeliveryDelivered {
				t.Fatalf("left in the log: %+v", d)
			}
		}
		// The metrics count deliveries, as they did one message each.
		if n := r.counts.of(ports.EventDeliveriesOK); n != 300 {
			t.Fatalf("%d deliveries counted delivered, want 300", n)
		}
	})
}

// A single match goes out within the second as the message it has
// always been, byte for byte.
func TestChannelSingleMatchWithinASecond(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r := newBurstRig(t, w, fake, receivers{}, core.RetrySchedule{})
		o := w.owner(t, "single@example.com")
		ch := r.add(t, o.ID, core.ChannelSlack)
		start := time.Now()
		moveTo(start.Add(300 * time.Millisecond))
		m := r.score(t, o.ID, 88)[0]
		moveTo(start.Add(999 * time.Millisecond))
		if n := len(fake.requests(core.ChannelSlack)); n != 0 {
			t.Fatalf("%d messages before the end of the second", n)
		}
		moveTo(start.Add(time.Second))
		got := fake.requests(core.ChannelSlack)
		want, err := core.RenderChannelMatch(core.ChannelSlack, core.ChannelMatchOf(m))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || string(got[0].Body) != string(want) {
			t.Fatalf("sent %d messages; want one:\n%s\ngot:\n%s", len(got), want, got)
		}
		moveTo(start.Add(2 * time.Second))
		if ds := r.queued(t, o.ID, ch.ID); len(ds) != 1 || ds[0].Status != core.DeliveryDelivered || ds[0].MatchID != m.ID || ds[0].Tries != 1 {
			t.Fatalf("log %+v", ds)
		}
	})
}

// A channel takes one message a second: a match that falls due in a
// second whose message has gone (its transaction began in the second
// before and committed after the burst was claimed) waits for the next
// second's message.
func TestChannelOneMessageASecond(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r := newBurstRig(t, w, fake, receivers{}, core.RetrySchedule{})
		o := w.owner(t, "late@example.com")
		r.add(t, o.ID, core.ChannelDiscord)
		start := time.Now()
		moveTo(start.Add(400 * time.Millisecond))
		r.score(t, o.ID, 70, 71, 72)
		moveTo(start.Add(time.Second))
		if n := len(fake.requests(core.ChannelDiscord)); n != 1 {
			t.Fatalf("%d messages at the end of the first second, want 1", n)
		}
		moveTo(start.Add(1200 * time.Millisecond))
		late := func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery {
			ds := core.QueueMatchCreated(m, hooks, at)
			for i := range ds {
				ds[i].NextAttemptAt = start.Add(time.Second) // as if queued at 0.99 s
			}
			return ds
		}
		r.scoreWith(t, o.ID, late, 73)
		moveTo(start.Add(1999 * time.Millisecond))
		if n := len(fake.requests(core.ChannelDiscord)); n != 1 {
			t.Fatalf("%d messages within the second after the first, want still 1", n)
		}
		r.score(t, o.ID, 74)
		// The late match is claimed at the second's end, a claim's gap
		// after the one the last score woke.
		moveTo(start.Add(2*time.Second + claimGap))
		got := fake.requests(core.ChannelDiscord)
		if len(got) != 2 || !strings.Contains(string(got[1].Body), "2 new matches") {
			t.Fatalf("%d messages; want the second with the late match and the next: %s", len(got), got[len(got)-1].Body)
		}
	})
}

// A burst that fails is tried again as one message at one time: every
// delivery of it is rescheduled to the same whole second, after the
// schedule's wait or a later Retry-After, and each try is one message
// listing them all, recorded for all in one write.
func TestChannelBurstRetriesAsOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r := newBurstRig(t, w, fake, receivers{}, core.RetrySchedule{time.Minute, time.Minute})
		o := w.owner(t, "retry@example.com")
		ch := r.add(t, o.ID, core.ChannelSlack)
		start := time.Now()
		// Slack's answers to an incoming webhook
		// (https://api.slack.com/messaging/webhooks#handling_errors) and
		// its rate limit with Retry-After (https://api.slack.com/docs/rate-limits).
		fake.answer(core.ChannelSlack, 500, "rollup_error")
		moveTo(start.Add(200 * time.Millisecond))
		r.score(t, o.ID, slices.Repeat([]int{75}, 40)...)

		// sameNext checks that every delivery is queued after tries,
		// due at one whole second no sooner than after; it returns that
		// time.
		sameNext := func(tries int, after time.Time) time.Time {
			t.Helper()
			ds := r.queued(t, o.ID, ch.ID)
			if len(ds) != 40 {
				t.Fatalf("%d deliveries, want 40", len(ds))
			}
			next := ds[0].NextAttemptAt
			for _, d := range ds {
				if d.Status != core.DeliveryQueued || d.Tries != tries || !d.NextAttemptAt.Equal(next) {
					t.Fatalf("after %d tries: %+v, want every one queued for %v", tries, d, next)
				}
			}
			if !next.Equal(next.Truncate(time.Second)) || next.Before(after) {
				t.Fatalf("next try at %v, want a whole second from %v", next, after)
			}
			return next
		}
		messages := func(want int) {
			t.Helper()
			got := fake.requests(core.ChannelSlack)
			if len(got) != want {
				t.Fatalf("%d messages, want %d", len(got), want)
			}
			if b := string(got[want-1].Body); !strings.Contains(b, "40 new matches") || !strings.Contains(b, "and 30 more") {
				t.Fatalf("message %d: %s", want, b)
			}
		}

		moveTo(start.Add(time.Second))
		messages(1)
		moveTo(start.Add(2 * time.Second))
		next := sameNext(1, start.Add(time.Second+time.Minute))

		fake.answerWith(core.ChannelSlack, 429, "rate_limited", map[string]string{"Retry-After": "120"})
		moveTo(next.Add(-time.Millisecond))
		messages(1)
		moveTo(next)
		messages(2)
		moveTo(next.Add(time.Second))
		later := sameNext(2, next.Add(120*time.Second))

		fake.answer(core.ChannelSlack, 200, "ok")
		moveTo(later.Add(-time.Millisecond))
		messages(2)
		moveTo(later)
		messages(3)
		moveTo(later.Add(time.Second))
		for _, d := range r.queued(t, o.ID, ch.ID) {
			if d.Status != core.DeliveryDelivered || d.Tries != 3 || !d.LastAttemptAt.Equal(later) {
				t.Fatalf("after the third try: %+v", d)
			}
		}
		for i, c := range r.queue.recorded() {
			if len(c) != 40 {
				t.Fatalf("write %d recorded %d attempts, want the 40", i, len(c))
			}
		}
		if ok, failed := r.counts.of(ports.EventDeliveriesOK), r.counts.of(ports.EventDeliveriesFail); ok != 40 || failed != 80 {
			t.Fatalf("counted %d delivered and %d failed tries, want 40 and 80", ok, failed)
		}
	})
}

// Failed channel messages replayed go out as they came: the replays of
// one call fall due together and leave as one message.
func TestChannelReplayIsOneMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		r := newBurstRig(t, w, fake, receivers{}, core.RetrySchedule{})
		o := w.owner(t, "replay@example.com")
		ch := r.add(t, o.ID, core.ChannelNtfy)
		start := time.Now()
		// ntfy's error body (https://docs.ntfy.sh/publish/#publish-as-json,
		// server/errors.go: errHTTPInternalError).
		fake.answer(core.ChannelNtfy, 500, `{"code":50001,"http":500,"error":"internal server error"}`)
		moveTo(start.Add(100 * time.Millisecond))
		r.score(t, o.ID, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82)
		moveTo(start.Add(2 * time.Second))
		if n := len(fake.requests(core.ChannelNtfy)); n != 1 {
			t.Fatalf("%d messages, want 1", n)
		}
		// Thirteen failed in a row: the channel switched itself off, as
		// it would have after thirteen failed messages.
		if got, _, _ := r.store.Webhook(ctx, o.ID, ch.ID); got.Active || !strings.Contains(got.DisabledReason, "5 failed deliveries in a row") || got.ConsecutiveFailures != 13 {
			t.Fatalf("after the failed burst: %+v", got)
		}
		fake.answer(core.ChannelNtfy, 200, `{"id":"sPs71M8A2T","time":1768035600,"event":"message","topic":"`+fakeNtfyTopic+`","message":"earshot"}`)
		on := true
		if _, err := r.Update(ctx, o.ID, ch.ID, ports.ChannelChange{Active: &on}); err != nil {
			t.Fatal(err)
		}
		moveTo(start.Add(2500 * time.Millisecond))
		res, err := r.Channels.Replay(ctx, o.ID, ch.ID, start, time.Now(), nil)
		if err != nil || len(res.Queued) != 13 {
			t.Fatalf("Replay = %+v, %v", res, err)
		}
		for _, d := range res.Queued {
			if !d.NextAttemptAt.Equal(start.Add(3 * time.Second)) {
				t.Fatalf("a replay due at %v, want the channel's next second", d.NextAttemptAt)
			}
		}
		moveTo(start.Add(3 * time.Second))
		got := fake.requests(core.ChannelNtfy)
		if len(got) != 2 || !strings.Contains(string(got[1].Body), "13 new matches") || !strings.Contains(string(got[1].Body), "and 3 more") {
			t.Fatalf("after the replay: %d messages, the last %s", len(got), got[len(got)-1].Body)
		}
	})
}

// A channel's pacing never holds a webhook back: matches both take reach
// the webhook at once, while the channel sends them at the end of the
// second; a webhook's matches scored as a burst of the channel's leaves
// arrive as fast.
func TestChannelPacingLeavesWebhooksAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r, _, rcv, o := newHookAndSlack(t, w, fake, "both@example.com")
		start := time.Now()
		moveTo(start.Add(500 * time.Millisecond))
		r.score(t, o.ID, slices.Repeat([]int{80}, 200)...)
		rcv.until(t, 100*time.Millisecond, func(got, _ int) bool { return got == 200 })
		if n := len(fake.requests(core.ChannelSlack)); n != 0 {
			t.Fatalf("%d channel messages before the end of the second", n)
		}

		// The second ends: the channel's 200 go as one message while 20
		// more matches are scored.
		<-time.After(time.Until(start.Add(time.Second)))
		r.score(t, o.ID, slices.Repeat([]int{80}, 20)...)
		rcv.until(t, 50*time.Millisecond, func(got, _ int) bool { return got == 220 })
		synctest.Wait()
		if got := fake.requests(core.ChannelSlack); len(got) != 1 || !strings.Contains(string(got[0].Body), "200 new matches") {
			t.Fatalf("channel messages at the end of the second: %d", len(got))
		}
		moveTo(start.Add(2 * time.Second))
		if got := fake.requests(core.ChannelSlack); len(got) != 2 || !strings.Contains(string(got[1].Body), "20 new matches") {
			t.Fatalf("channel messages a second later: %d", len(got))
		}
	})
}

// A channel's burst that is slow to record holds up no webhook: while
// the write of the channel's outcomes is under way, the webhook's later
// messages are sent and recorded.
func TestChannelRecordLeavesWebhooksAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r, hook, rcv, o := newHookAndSlack(t, w, fake, "slowrecord@example.com")
		hold := make(chan struct{})
		defer close(hold)
		r.queue.mu.Lock()
		r.queue.hold = hold
		r.queue.mu.Unlock()
		start := time.Now()
		moveTo(start.Add(500 * time.Millisecond))
		r.score(t, o.ID, slices.Repeat([]int{80}, 5)...)
		moveTo(start.Add(time.Second + 100*time.Millisecond))
		if got := fake.requests(core.ChannelSlack); len(got) != 1 {
			t.Fatalf("%d channel messages at the end of the second, want 1", len(got))
		}

		// The channel's outcome is still being written.
		r.score(t, o.ID, slices.Repeat([]int{80}, 10)...)
		rcv.until(t, 100*time.Millisecond, func(got, _ int) bool { return got == 15 })
		moveTo(start.Add(time.Second + 300*time.Millisecond))
		delivered := 0
		for _, st := range r.statuses(t, o.ID, hook.ID) {
			if st == core.DeliveryDelivered {
				delivered++
			}
		}
		if delivered != 15 {
			t.Fatalf("%d of the webhook's 15 messages recorded delivered while a channel's outcome was being written", delivered)
		}
	})
}

// Matches of a channel that fall due while it waits for its next second
// (their transaction began before its message went) are left for that
// second's message, not claimed and held meanwhile: held, they made
// every claim look past a full hand, and the webhook's messages waited
// for claims spaced out as for an idle worker.
func TestChannelLateMatchesLeaveWebhooksAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r, _, rcv, o := newHookAndSlack(t, w, fake, "latehold@example.com")
		start := time.Now()
		moveTo(start.Add(400 * time.Millisecond))
		r.score(t, o.ID, 70, 71, 72)
		moveTo(start.Add(time.Second))
		if n := len(fake.requests(core.ChannelSlack)); n != 1 {
			t.Fatalf("%d messages at the end of the first second, want 1", n)
		}

		// 40 matches whose deliveries were queued at 0.99 s come in at 1.2 s.
		moveTo(start.Add(1200 * time.Millisecond))
		late := func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery {
			ds := core.QueueMatchCreated(m, hooks, at)
			for i := range ds {
				ds[i].NextAttemptAt = start.Add(time.Second)
			}
			return ds
		}
		r.scoreWith(t, o.ID, late, slices.Repeat([]int{80}, 40)...)
		rcv.until(t, 50*time.Millisecond, func(got, _ int) bool { return got == 43 })

		// The webhook's next matches, scored 10 ms apart, each reach it at once.
		for i := range 5 {
			moveTo(start.Add(1300*time.Millisecond + time.Duration(i)*10*time.Millisecond))
			r.score(t, o.ID, 80)
			rcv.until(t, 5*time.Millisecond, func(got, _ int) bool { return got == 44+i })
		}
		moveTo(start.Add(2 * time.Second))
		got := fake.requests(core.ChannelSlack)
		if len(got) != 2 || !strings.Contains(string(got[1].Body), "45 new matches") {
			t.Fatalf("%d messages; want the second with the 40 late matches and the 5 after", len(got))
		}
	})
}

// A write of outcomes that never answers is given up after
// recordTimeout and made again while its deliveries' leases hold (left
// to the leases, the message sent would be sent again), and the
// outcomes of the messages sent after it are stored.
func TestRecordThatHangsIsGivenUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fake := newFakeServices(t)
	synctest.Test(t, func(t *testing.T) {
		r, hook, rcv, o := newHookAndSlack(t, w, fake, "hang@example.com")
		r.queue.mu.Lock()
		r.queue.hang = 1
		r.queue.mu.Unlock()
		start := time.Now()
		first := r.score(t, o.ID, 80)[0]
		rcv.until(t, 10*time.Millisecond, func(got, _ int) bool { return got == 1 })

		moveTo(start.Add(recordTimeout + time.Second))
		second := r.score(t, o.ID, 80)[0]
		rcv.until(t, 10*time.Millisecond, func(got, _ int) bool { return got == 2 })
		moveTo(start.Add(recordTimeout + 2*time.Second))
		status := r.statuses(t, o.ID, hook.ID)
		if status[first.ID] != core.DeliveryDelivered || status[second.ID] != core.DeliveryDelivered {
			t.Fatalf("the message whose record hung is %q (want delivered, written again), the one after it %q (want delivered)",
				status[first.ID], status[second.ID])
		}
	})
}
