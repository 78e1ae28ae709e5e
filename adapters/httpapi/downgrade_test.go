package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// downgradeServices are the real webhook and channel services over db,
// with limits.
func downgradeServices(t *testing.T, db *gormstore.DB, limits core.Limits) (*app.Webhooks, *app.Channels) {
	t.Helper()
	sealer, err := core.NewSealer("a test secret key of at least 32 characters")
	if err != nil {
		t.Fatal(err)
	}
	h := app.NewWebhooks(app.WebhookDeps{Store: gormstore.NewWebhookStore(db), Sealer: sealer, Log: quietLog},
		app.WebhookConfig{Limits: limits})
	return h, app.NewChannels(app.ChannelDeps{Webhooks: h, Store: gormstore.NewChannelStore(db)})
}

// After the operator lowers the webhook limit to 0, an owner who has a
// webhook and a channel may list and read them, switch them off, change
// them, read their logs and delete them; every POST (create, test,
// retry, rotate-secret, replay) is refused with plan_limit. An owner
// with none gets plan_limit on every route, as on a Free plan from the
// start; so does the first owner once both are deleted.
func TestWebhookRoutesAfterDowngrade(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Memory(t)
	ownerStore := gormstore.NewOwnerStore(db)
	owners := app.NewOwners(ownerStore, app.NewKeys(gormstore.NewKeyStore(db), ownerStore, ports.SystemClock{}))
	a, err := owners.Create(ctx, "a@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := owners.Create(ctx, "b@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	proHooks, proChans := downgradeServices(t, db, core.Limits{WebhooksPerPerson: 2})
	hook, _, err := proHooks.Create(ctx, a.ID, "https://hooks.example.com/in", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A Slack incoming webhook's address (https://api.slack.com/messaging/webhooks).
	ch, err := proChans.Create(ctx, a.ID, ports.NewChannel{Kind: "slack", URL: "https://hooks.slack.com/services/T0/B0/secretpart"})
	if err != nil {
		t.Fatal(err)
	}

	hooks, chans := downgradeServices(t, db, core.FreeLimits)
	keys := keyOf{
		"svc_api_a": {ID: "k1", OwnerID: a.ID, Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}},
		"svc_api_b": {ID: "k2", OwnerID: b.ID, Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}},
	}
	srv := httptest.NewServer(New(Config{Logger: quietLog},
		Deps{Keys: keys, Limiter: unlimited{}, Webhooks: hooks, Channels: chans}))
	t.Cleanup(srv.Close)

	bodies := map[string]string{
		"POST /api/v1/webhooks":                    `{"url":"https://hooks.example.com/2"}`,
		"PATCH /api/v1/webhooks/{id}":              `{"active":false}`,
		"POST /api/v1/webhooks/{id}/replay":        `{"from":1700000000000}`,
		"POST /api/v1/channels":                    `{"kind":"ntfy","url":"https://ntfy.sh/earshot"}`,
		"PATCH /api/v1/channels/{id}":              `{"active":false}`,
		"POST /api/v1/channels/{id}/replay":        `{"from":1700000000000}`,
		"POST /api/v1/webhooks/{id}/rotate-secret": `{}`,
	}
	type call struct{ method, path, body string }
	var calls []call
	for _, r := range (&API{}).routes() {
		id := hook.ID
		switch {
		case strings.HasPrefix(r.path, "/api/v1/channels"):
			id = ch.ID
		case !strings.HasPrefix(r.path, "/api/v1/webhooks"):
			continue
		}
		path := strings.NewReplacer("{id}", id, "{deliveryId}", "d1").Replace(r.path)
		calls = append(calls, call{r.method, path, bodies[r.method+" "+r.path]})
	}
	refused := func(key string, c call) {
		t.Helper()
		status, out := send(t, srv, c.method, c.path, key, c.body)
		if status != 403 || errorCode(out) != "plan_limit" {
			t.Errorf("%s %s as %s: %d %v, want 403 plan_limit", c.method, c.path, key, status, out)
		}
	}
	for _, c := range calls {
		refused("svc_api_b", c)
		if c.method == "POST" {
			refused("svc_api_a", c)
		}
	}

	for _, c := range []struct {
		method, path, body string
		want               int
		check              func(map[string]any) bool
	}{
		{"GET", "/api/v1/webhooks", "", 200, func(o map[string]any) bool { return len(o["data"].([]any)) == 1 }},
		{"GET", "/api/v1/channels", "", 200, func(o map[string]any) bool { return len(o["data"].([]any)) == 1 }},
		{"GET", "/api/v1/channels/" + ch.ID, "", 200, nil},
		{"GET", "/api/v1/webhooks/" + hook.ID + "/deliveries", "", 200, nil},
		{"GET", "/api/v1/channels/" + ch.ID + "/deliveries", "", 200, nil},
		{"PATCH", "/api/v1/webhooks/" + hook.ID, `{"active":false}`, 200, func(o map[string]any) bool { return o["data"].(map[string]any)["active"] == false }},
		{"PATCH", "/api/v1/channels/" + ch.ID, `{"active":false,"min_score":55}`, 200, func(o map[string]any) bool {
			d := o["data"].(map[string]any)
			return d["active"] == false && d["min_score"] == 55.0
		}},
		{"PATCH", "/api/v1/webhooks/" + hook.ID, `{"min_score":101}`, 400, nil},
		{"GET", "/api/v1/channels/no-such-id", "", 404, nil},
		{"DELETE", "/api/v1/webhooks/" + hook.ID, "", 200, nil},
		{"DELETE", "/api/v1/channels/" + ch.ID, "", 200, nil},
	} {
		status, out := send(t, srv, c.method, c.path, "svc_api_a", c.body)
		if status != c.want || c.check != nil && !c.check(out) {
			t.Errorf("%s %s %s with a webhook and a channel left: %d %v, want %d", c.method, c.path, c.body, status, out, c.want)
		}
	}
	// With none left, the owner is as any of the Free plan.
	for _, c := range calls {
		refused("svc_api_a", c)
	}
}
