package httpapi

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

//go:embed openapi.json
var openAPIDoc json.RawMessage

func (a *API) openAPI(context.Context, any) (any, error) {
	return response{body: openAPIDoc}, nil
}

func (a *API) me(ctx context.Context, _ any) (any, error) {
	p, err := a.deps.Phrases.Plan(ctx, keyFrom(ctx).OwnerID)
	if err != nil {
		return nil, err
	}
	return ok(planRecord(p)), nil
}

func (a *API) listPhrases(ctx context.Context, _ any) (any, error) {
	ps, err := a.deps.Phrases.List(ctx, keyFrom(ctx).OwnerID, ports.PhraseFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]phraseJSON, len(ps))
	for i, p := range ps {
		out[i] = phraseRecord(p)
	}
	return ok(out), nil
}

func (a *API) addPhrase(ctx context.Context, req any) (any, error) {
	r := req.(addPhraseRequest)
	community := ""
	if r.Community != nil {
		community = *r.Community
	}
	filters := core.PhraseFilters{}.With(r.change())
	p, replayed, err := a.deps.Phrases.AddWithFilters(ctx, keyFrom(ctx).OwnerID, *r.Phrase, *r.Platform, community, filters, r.idemKey)
	if err != nil {
		return nil, err
	}
	if replayed {
		resp := ok(phraseRecord(p))
		resp.headers = map[string]string{"Idempotent-Replayed": "true"}
		return resp, nil
	}
	return created(phraseRecord(p), "/api/v1/keywords/", p.ID), nil
}

func (a *API) getPhrase(ctx context.Context, req any) (any, error) {
	p, err := a.deps.Phrases.Get(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id)
	if err != nil {
		return nil, err
	}
	return ok(phraseRecord(p)), nil
}

func (a *API) patchPhrase(ctx context.Context, req any) (any, error) {
	r := req.(patchPhraseRequest)
	p, err := a.deps.Phrases.Update(ctx, keyFrom(ctx).OwnerID, r.id, r.Status, r.change())
	if err != nil {
		return nil, err
	}
	return ok(phraseRecord(p)), nil
}

func (a *API) deletePhrase(ctx context.Context, req any) (any, error) {
	id := req.(idRequest).id
	if err := a.deps.Phrases.Delete(ctx, keyFrom(ctx).OwnerID, id); err != nil {
		return nil, err
	}
	return ok(struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true}), nil
}

func (a *API) listMatches(ctx context.Context, req any) (any, error) {
	page, err := a.deps.Matches.List(ctx, keyFrom(ctx).OwnerID, req.(ports.MatchQuery))
	if err != nil {
		return nil, err
	}
	return response{body: newMatchPage(page.Matches, page.Next)}, nil
}

func (a *API) getMatch(ctx context.Context, req any) (any, error) {
	m, err := a.deps.Matches.Get(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id)
	if err != nil {
		return nil, err
	}
	return ok(record.NewMatch(m)), nil
}

type planJSON struct {
	Plan    string `json:"plan"`
	Name    string `json:"name"`
	OwnerID string `json:"ownerId"`
	Limits  struct {
		PhrasesPerPlatform  int `json:"phrasesPerPlatform"`
		AccountsPerPlatform int `json:"accountsPerPlatform"`
		WebhooksPerPerson   int `json:"webhooksPerPerson"`
	} `json:"limits"`
	Usage struct {
		Phrases  map[core.Platform]int `json:"phrases"`
		Accounts map[core.Platform]int `json:"accounts"`
		Webhooks int                   `json:"webhooks"`
	} `json:"usage"`
}

func planRecord(p core.Plan) planJSON {
	var out planJSON
	out.Plan, out.Name, out.OwnerID = p.ID, p.Name, p.OwnerID
	out.Limits.PhrasesPerPlatform = p.Limits.PhrasesPerPlatform
	out.Limits.AccountsPerPlatform = p.Limits.AccountsPerPlatform
	out.Limits.WebhooksPerPerson = p.Limits.WebhooksPerPerson
	out.Usage.Phrases = counts(p.Usage.Phrases)
	out.Usage.Accounts = counts(p.Usage.Accounts)
	out.Usage.Webhooks = p.Usage.Webhooks
	return out
}

// counts has a key for every platform, zero included.
func counts(m map[core.Platform]int) map[core.Platform]int {
	out := make(map[core.Platform]int, len(core.Platforms))
	for _, p := range core.Platforms {
		out[p] = m[p]
	}
	return out
}

type phraseJSON struct {
	ID            string  `json:"id"`
	Phrase        string  `json:"phrase"`
	Platform      string  `json:"platform"`
	Community     *string `json:"community"`
	Status        string  `json:"status"`
	Matches       int     `json:"matches"`
	LastCheckedAt float64 `json:"lastCheckedAt"`
	LastSource    string  `json:"lastSource"`
	// The filters, beyond the spec's fields: each present only when it
	// filters something, so a phrase without filters answers the spec's
	// fields alone, as before filters.
	Exclude            []string `json:"exclude,omitempty"`
	Require            []string `json:"require,omitempty"`
	ExcludeAuthors     []string `json:"excludeAuthors,omitempty"`
	ExcludeCommunities []string `json:"excludeCommunities,omitempty"`
	MinLikes           int      `json:"minLikes,omitempty"`
	MinComments        int      `json:"minComments,omitempty"`
	TitleOnly          bool     `json:"titleOnly,omitempty"`
}

func phraseRecord(p core.Phrase) phraseJSON {
	f := p.Filters
	return phraseJSON{
		ID: p.ID, Phrase: p.Phrase, Platform: string(p.Platform), Community: nullable(p.Community),
		Status: string(p.Status), Matches: p.Matches, LastCheckedAt: core.Millis(p.LastCheckedAt),
		LastSource: string(p.LastSource),
		Exclude:    f.Exclude, Require: f.Require, ExcludeAuthors: f.ExcludeAuthors, ExcludeCommunities: f.ExcludeCommunities,
		MinLikes: f.MinLikes, MinComments: f.MinComments, TitleOnly: f.TitleOnly,
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
