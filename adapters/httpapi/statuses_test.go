package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// probe stands for every service behind the API. Each method fails
// with fail when it is set; a method that takes an id answers
// KindNotFound for any id but "known", as the ports promise.
type probe struct{ fail error }

func (p *probe) id(id string) error {
	if p.fail != nil {
		return p.fail
	}
	if id != "known" {
		return core.Errorf(core.KindNotFound, "not found")
	}
	return nil
}

func (p *probe) AddWithFilters(context.Context, string, string, string, string, core.PhraseFilters, string) (core.Phrase, bool, error) {
	return core.Phrase{ID: "known"}, false, p.fail
}
func (p *probe) Get(_ context.Context, _, id string) (core.Phrase, error) {
	return core.Phrase{ID: id}, p.id(id)
}
func (p *probe) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return nil, p.fail
}
func (p *probe) Update(_ context.Context, _, id string, _ *string, _ core.PhraseFiltersChange) (core.Phrase, error) {
	return core.Phrase{ID: id}, p.id(id)
}
func (p *probe) Delete(_ context.Context, _, id string) error { return p.id(id) }
func (p *probe) Plan(context.Context, string) (core.Plan, error) {
	return core.Plan{}, p.fail
}

type probeMatches struct{ *probe }

func (p probeMatches) List(context.Context, string, ports.MatchQuery) (ports.MatchPage, error) {
	return ports.MatchPage{}, p.fail
}
func (p probeMatches) Get(_ context.Context, _, id string) (core.Match, error) {
	return core.Match{ID: id}, p.id(id)
}
func (p probeMatches) Export(context.Context, string, ports.MatchQuery) (iter.Seq2[[]core.Match, error], error) {
	return func(func([]core.Match, error) bool) {}, p.fail
}

type probeWebhooks struct{ *probe }

func (p probeWebhooks) Create(context.Context, string, string, *int, []string) (core.Webhook, string, error) {
	return core.Webhook{ID: "known"}, "whsec_x", p.fail
}
func (p probeWebhooks) List(context.Context, string) ([]core.Webhook, error) { return nil, p.fail }
func (p probeWebhooks) Update(_ context.Context, _, id string, _ ports.WebhookChange) (core.Webhook, error) {
	return core.Webhook{ID: id}, p.id(id)
}
func (p probeWebhooks) Delete(_ context.Context, _, id string) error { return p.id(id) }
func (p probeWebhooks) Test(ctx context.Context, _, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := p.id(id); err != nil {
		return ports.WebhookResult{}, err
	}
	return ports.WebhookResult{}, take(ctx)
}
func (p probeWebhooks) Deliveries(_ context.Context, _, id string) ([]core.Delivery, error) {
	return nil, p.id(id)
}
func (p probeWebhooks) Retry(ctx context.Context, _, webhookID, deliveryID string, take func(context.Context) error) (core.Delivery, error) {
	if err := p.id(webhookID); err != nil {
		return core.Delivery{}, err
	}
	if err := p.id(deliveryID); err != nil {
		return core.Delivery{ID: deliveryID}, err
	}
	return core.Delivery{ID: deliveryID}, take(ctx)
}

// switchLimiter allows every request until deny is set.
type switchLimiter struct{ deny bool }

func (l *switchLimiter) Take(context.Context, string, int) (ports.Quota, error) {
	if l.deny {
		return ports.Quota{Limit: 60, Reset: 20 * time.Second}, nil
	}
	return ports.Quota{Allowed: true, Limit: 60, Remaining: 59, Reset: 20 * time.Second}, nil
}

// routeStatuses is routeAnswers by status: per operation, each status
// with the headers it first carried.
func routeStatuses(t *testing.T) map[string]map[int]http.Header {
	out := map[string]map[int]http.Header{}
	for op, answers := range routeAnswers(t) {
		got := map[int]http.Header{}
		for _, a := range answers {
			if _, seen := got[a.status]; !seen {
				got[a.status] = a.header
			}
		}
		out[op] = got
	}
	return out
}

// routeAnswers sends each route of the table through the whole API
// (edge checks, decoder, endpoint) under every condition the edge and
// the ports can produce, and returns what came back, per operation.
func routeAnswers(t *testing.T) map[string][]answer {
	p := &probe{}
	lim := &switchLimiter{}
	all := core.Key{ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead, core.ScopeWritePhrases, core.ScopeWebhooks}}
	keys := keyOf{
		"svc_api_all":  all,
		"svc_api_none": {ID: "k2", OwnerID: "o1", Kind: core.APIKey},
	}
	api := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Keys: keys, Phrases: p, Matches: probeMatches{p}, Webhooks: probeWebhooks{p}, Limiter: lim})
	// Bodies a route takes; every other route is sent none.
	bodies := map[string]string{
		"POST /api/v1/keywords":       `{"phrase":"acme","platform":"x"}`,
		"PATCH /api/v1/keywords/{id}": `{"status":"paused"}`,
		"POST /api/v1/webhooks":       `{"url":"https://hooks.example.com/in"}`,
		"PATCH /api/v1/webhooks/{id}": `{"active":true}`,
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	out := map[string][]answer{}
	for _, r := range api.routes() {
		op := r.method + " " + r.path
		var got []answer
		send := func(key, id, body, query string, over bool) {
			target := param.ReplaceAllString(r.path, id)
			if query != "" {
				target += "?" + query
			}
			req := httptest.NewRequest(r.method, target, strings.NewReader(body))
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			if over {
				req.ContentLength = maxBody + 1
			}
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			got = append(got, answer{rec.Code, rec.Header(), rec.Body.Bytes()})
		}
		body := bodies[op]
		send("svc_api_all", "known", body, "", false)      // the answer
		send("", "known", body, "", false)                 // no key
		send("svc_api_nope", "known", body, "", false)     // an unknown key
		send("svc_api_none", "known", body, "", false)     // a key with the read scope only
		send("svc_api_all", "known", body, "", true)       // a body over the limit
		send("svc_api_all", "unknown", body, "", false)    // an id that does not exist
		send("svc_api_all", "%00", body, "", false)        // an id that cannot exist
		send("svc_api_all", "known", "{", "", false)       // malformed JSON
		send("svc_api_all", "known", `{"x":1}`, "", false) // an unknown field
		send("svc_api_all", "known", body, "limit=0&min_score=x&before=x&platform=y", false)
		p.fail = core.Errorf(core.KindInternal, "down")
		send("svc_api_all", "known", body, "", false) // a failing service
		p.fail = nil
		lim.deny = true
		send("svc_api_all", "known", body, "", false) // over the rate limit
		lim.deny = false
		out[op] = got
	}
	return out
}

// Every status a route can answer, found by sending it through the edge
// checks, its decoder and its endpoint, is in the document for that
// operation, with the X-RateLimit-* and Retry-After headers it carried.
func TestOpenAPIDeclaresEveryStatus(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for m != nil && m["$ref"] != nil {
			var cur any = doc
			for _, part := range strings.Split(strings.TrimPrefix(m["$ref"].(string), "#/"), "/") {
				cur = cur.(map[string]any)[part]
			}
			m, _ = cur.(map[string]any)
		}
		return m
	}
	paths := doc["paths"].(map[string]any)
	seen := map[int]bool{}
	for op, statuses := range routeStatuses(t) {
		method, path, _ := strings.Cut(op, " ")
		o := resolve(resolve(paths[path])[strings.ToLower(method)])
		responses := resolve(o["responses"])
		for status, h := range statuses {
			seen[status] = true
			resp := resolve(responses[fmt.Sprint(status)])
			if resp == nil {
				t.Errorf("%s answers %d, which the document does not declare", op, status)
				continue
			}
			declared := resolve(resp["headers"])
			var missing []string
			for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "Retry-After"} {
				if h.Get(name) != "" && declared[name] == nil {
					missing = append(missing, name)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("%s %d carries %v, which the document does not declare there", op, status, missing)
			}
		}
	}
	// The probes reach every status the edge can give.
	for _, s := range []int{200, 201, 202, 400, 401, 403, 404, 413, 429, 500} {
		if !seen[s] {
			t.Errorf("no route answered %d: the probes miss a case", s)
		}
	}
}
