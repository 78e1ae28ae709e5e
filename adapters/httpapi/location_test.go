package httpapi

import (
	"context"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// replayPhrases is probe whose create is a replay of the phrase "known".
type replayPhrases struct{ *probe }

func (replayPhrases) AddWithFilters(context.Context, string, string, string, string, core.PhraseFilters, string) (core.Phrase, bool, error) {
	return core.Phrase{ID: "known"}, true, nil
}

// A 201 names what it created in Location (RFC 9110), the address its
// GET, PATCH and DELETE take: a client that keeps addresses need not
// build them from the body. A replayed create made nothing and answers
// 200 without it.
func TestCreatedNamesItsLocation(t *testing.T) {
	all := core.Key{ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead, core.ScopeWritePhrases, core.ScopeWebhooks}}
	keys := keyOf{"svc_api_all": all}
	p := &probe{}
	ch := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack}}
	api := New(Config{Logger: quietLog}, Deps{Keys: keys, Phrases: p, Matches: probeMatches{p}, Webhooks: probeWebhooks{p}, Channels: ch, Limiter: unlimited{}})
	replay := New(Config{Logger: quietLog}, Deps{Keys: keys, Phrases: replayPhrases{p}, Matches: probeMatches{p}, Limiter: unlimited{}})
	for _, c := range []struct {
		api              *API
		path, body, want string
		status           int
	}{
		{api, "/api/v1/keywords", `{"phrase":"acme","platform":"x"}`, "/api/v1/keywords/known", 201},
		{api, "/api/v1/webhooks", `{"url":"https://hooks.example.com/in"}`, "/api/v1/webhooks/known", 201},
		{api, "/api/v1/channels", `{"kind":"slack","url":"https://hooks.slack.com/services/T0/B0/x"}`, "/api/v1/channels/c1", 201},
		{replay, "/api/v1/keywords", `{"phrase":"acme","platform":"x"}`, "", 200},
	} {
		rec := respond(c.api, "POST", c.path, "Bearer svc_api_all", strings.NewReader(c.body))
		if rec.Code != c.status || rec.Header().Get("Location") != c.want {
			t.Errorf("POST %s: %d, Location %q; want %d, Location %q (%s)", c.path, rec.Code, rec.Header().Get("Location"), c.status, c.want, rec.Body)
		}
	}
}
