package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// heldSender answers every message once want of them are in flight at
// once (or when release closes), so a test sees whether that many sends
// can run together; it counts what it was given.
type heldSender struct {
	want    int64
	in      atomic.Int64
	sent    atomic.Int64
	all     chan struct{}
	once    sync.Once
	release <-chan struct{}
}

func (h *heldSender) hold() {
	h.sent.Add(1)
	if h.in.Add(1) >= h.want {
		h.once.Do(func() { close(h.all) })
	}
	select {
	case <-h.all:
	case <-h.release:
	}
}

func (h *heldSender) Send(context.Context, ports.WebhookMessage) ports.WebhookResult {
	h.hold()
	return ports.WebhookResult{Status: 204}
}

func (h *heldSender) SendChannel(context.Context, ports.ChannelMessage) ports.WebhookResult {
	h.hold()
	return ports.WebhookResult{Status: 200}
}

// pgOutbound is the API over the real webhook services and the
// database's rate limiter on a Postgres schema of its own, with one
// owner's webhook and the key o_1 with the webhooks scope.
func pgOutbound(t *testing.T, sender *heldSender, limit int) (srv *httptest.Server, hook core.Webhook, store *gormstore.WebhookStore, owner string) {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t, pgtest.URL(t))
	ownerStore := gormstore.NewOwnerStore(db)
	o, err := app.NewOwners(ownerStore, app.NewKeys(gormstore.NewKeyStore(db), ownerStore, ports.SystemClock{})).Create(ctx, "pg@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := core.NewSealer("a test secret key of at least 32 characters")
	if err != nil {
		t.Fatal(err)
	}
	store = gormstore.NewWebhookStore(db)
	hooks := app.NewWebhooks(app.WebhookDeps{Store: store, Sealer: sealer, Log: quietLog, Sender: sender},
		app.WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 5}})
	hook, _, err = hooks.Create(ctx, o.ID, "https://hooks.example.com/pg", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := keyOf{"o_1": {ID: "o_1", OwnerID: o.ID, Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}}}
	srv = httptest.NewServer(New(Config{RateLimit: limit, Logger: quietLog},
		Deps{Keys: keys, Limiter: gormstore.NewRateLimiter(db), Webhooks: hooks}))
	t.Cleanup(srv.Close)
	return srv, hook, store, o.ID
}

// postAsO1 posts nothing to path with the key o_1 and closes the body;
// nil, with the error reported, when no answer came. It may be called
// from any goroutine.
func postAsO1(t *testing.T, srv *httptest.Server, path string) *http.Response {
	req, _ := http.NewRequest("POST", srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer o_1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	resp.Body.Close()
	return resp
}

// On Postgres, where the limiter is a table of the same database, 30
// test sends at once (more than the pool's 20 connections) all reach the
// receiver together: none holds a connection while it takes or sends,
// so none waits on the others' pool.
func TestOutboundTakesOnPostgresStarveNoPool(t *testing.T) {
	const n = 30
	release := make(chan struct{})
	sender := &heldSender{want: n, all: make(chan struct{}), release: release}
	srv, hook, _, _ := pgOutbound(t, sender, 100)
	timer := time.AfterFunc(30*time.Second, func() { close(release) })
	defer timer.Stop()
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			if resp := postAsO1(t, srv, "/api/v1/webhooks/"+hook.ID+"/test"); resp != nil {
				codes[i] = resp.StatusCode
			}
		})
	}
	wg.Wait()
	select {
	case <-sender.all:
	default:
		t.Fatalf("the %d sends never ran at once: %d did", n, sender.in.Load())
	}
	for i, c := range codes {
		if c != http.StatusOK {
			t.Fatalf("send %d: %d", i, c)
		}
	}
}

// On Postgres, 30 outbound actions at once against a limit of 12 send
// exactly 12, and each refusal is 429 with its headers.
func TestOutboundLimitOnPostgresUnderConcurrency(t *testing.T) {
	const n, limit = 30, 12
	release := make(chan struct{})
	close(release)
	sender := &heldSender{want: n + 1, all: make(chan struct{}), release: release}
	srv, hook, store, owner := pgOutbound(t, sender, limit)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	for i := range 10 {
		d := core.Delivery{ID: fmt.Sprintf("f%d", i), WebhookID: hook.ID, OwnerID: owner, Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, Payload: []byte(`{}`),
			CreatedAt: at.Add(time.Duration(i) * time.Second), NextAttemptAt: at}
		if err := store.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var ok, limited atomic.Int64
	for i := range n {
		wg.Go(func() {
			path := "/api/v1/webhooks/" + hook.ID + "/test"
			if i < 10 {
				path = fmt.Sprintf("/api/v1/webhooks/%s/deliveries/f%d/retry", hook.ID, i)
			}
			resp := postAsO1(t, srv, path)
			if resp == nil {
				return
			}
			switch resp.StatusCode {
			case http.StatusOK, http.StatusAccepted:
				ok.Add(1)
			case http.StatusTooManyRequests:
				limited.Add(1)
				if resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-RateLimit-Remaining") != "0" ||
					resp.Header.Get("X-RateLimit-Limit") != fmt.Sprint(limit) {
					t.Errorf("429 without its headers: %v", resp.Header)
				}
			default:
				t.Errorf("%s: %d", path, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if ok.Load() != limit || limited.Load() != n-limit {
		t.Fatalf("%d went through and %d were refused, want %d and %d", ok.Load(), limited.Load(), limit, n-limit)
	}
}
