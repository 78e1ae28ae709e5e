package httpapi

import (
	"context"
	"net/http"

	"github.com/earshothq/earshot/core"
)

// TriageService keeps an owner's read, starred and archived flags on
// matches: the dashboard's triage, offered through the API as an
// extension (x-extension in the OpenAPI document). app.Inbox is one.
type TriageService interface {
	Item(ctx context.Context, ownerID, id string) (core.Triage, error)
	Set(ctx context.Context, ownerID, id string, c core.TriageChange) (core.Triage, error)
	SetMany(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error)
}

type triageJSON struct {
	MatchID  string `json:"matchId"`
	Read     bool   `json:"read"`
	Starred  bool   `json:"starred"`
	Archived bool   `json:"archived"`
}

func triageRecord(id string, t core.Triage) triageJSON {
	return triageJSON{MatchID: id, Read: t.Read, Starred: t.Starred, Archived: t.Archived}
}

// triageBody is the change both triage writes take; a field left out is
// left as it is.
type triageBody struct {
	Read     *bool `json:"read"`
	Starred  *bool `json:"starred"`
	Archived *bool `json:"archived"`
}

func (b triageBody) change() core.TriageChange {
	return core.TriageChange{Read: b.Read, Starred: b.Starred, Archived: b.Archived}
}

type patchTriageRequest struct {
	id     string
	change core.TriageChange
}

func decodePatchTriage(_ context.Context, r *http.Request) (any, error) {
	var b triageBody
	if err := decodeJSON(r, &b, maxBody); err != nil {
		return nil, err
	}
	return patchTriageRequest{id: r.PathValue("id"), change: b.change()}, nil
}

type bulkTriageRequest struct {
	ids    []string
	change core.TriageChange
}

func decodeBulkTriage(_ context.Context, r *http.Request) (any, error) {
	var b struct {
		IDs *[]string `json:"ids"`
		triageBody
	}
	if err := decodeJSON(r, &b, maxBody); err != nil {
		return nil, err
	}
	if b.IDs == nil {
		return nil, core.Errorf(core.KindInvalid, "ids is required: the ids of up to %d matches", core.MaxTriageBatch)
	}
	return bulkTriageRequest{ids: *b.IDs, change: b.change()}, nil
}

func (a *API) triage() (TriageService, error) {
	if a.deps.Triage == nil {
		return nil, core.Errorf(core.KindNotFound, "triage is not offered by this server")
	}
	return a.deps.Triage, nil
}

func (a *API) getTriage(ctx context.Context, req any) (any, error) {
	svc, err := a.triage()
	if err != nil {
		return nil, err
	}
	id := req.(idRequest).id
	t, err := svc.Item(ctx, keyFrom(ctx).OwnerID, id)
	if err != nil {
		return nil, err
	}
	return ok(triageRecord(id, t)), nil
}

func (a *API) patchTriage(ctx context.Context, req any) (any, error) {
	svc, err := a.triage()
	if err != nil {
		return nil, err
	}
	r := req.(patchTriageRequest)
	t, err := svc.Set(ctx, keyFrom(ctx).OwnerID, r.id, r.change)
	if err != nil {
		return nil, err
	}
	return ok(triageRecord(r.id, t)), nil
}

func (a *API) bulkTriage(ctx context.Context, req any) (any, error) {
	svc, err := a.triage()
	if err != nil {
		return nil, err
	}
	r := req.(bulkTriageRequest)
	n, err := svc.SetMany(ctx, keyFrom(ctx).OwnerID, r.ids, r.change)
	if err != nil {
		return nil, err
	}
	return ok(struct {
		Updated int `json:"updated"`
	}{n}), nil
}
