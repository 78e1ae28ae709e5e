package httpapi

import (
	"context"
	"net/http"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// WindowService previews phrases and changes of their filters on the
// owner's window of recent posts, and applies a phrase's filters to its
// matches: extensions of v1 (x-extension in the OpenAPI document).
// app.Window is one.
type WindowService interface {
	Preview(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters) (ports.Preview, error)
	PreviewChange(ctx context.Context, ownerID, phraseID string, ch core.PhraseFiltersChange) (ports.Preview, error)
	ApplyFilters(ctx context.Context, ownerID, phraseID string) (ports.Applied, error)
	UndoApply(ctx context.Context, ownerID, phraseID, setID string) (int, error)
}

type previewPhraseJSON struct {
	Phrase             string   `json:"phrase"`
	Platform           string   `json:"platform"`
	Community          *string  `json:"community"`
	Exclude            []string `json:"exclude,omitempty"`
	Require            []string `json:"require,omitempty"`
	ExcludeAuthors     []string `json:"excludeAuthors,omitempty"`
	ExcludeCommunities []string `json:"excludeCommunities,omitempty"`
	MinLikes           int      `json:"minLikes,omitempty"`
	MinComments        int      `json:"minComments,omitempty"`
	TitleOnly          bool     `json:"titleOnly,omitempty"`
}

type windowPostJSON struct {
	ExternalID string      `json:"externalId"`
	Platform   string      `json:"platform"`
	Community  *string     `json:"community"`
	SeenAt     float64     `json:"seenAt"`
	Post       record.Post `json:"post"`
}

type windowFindsJSON struct {
	On       bool             `json:"on"`
	Days     int              `json:"days"`
	MaxPosts int              `json:"maxPosts"`
	Count    int              `json:"count"`
	Read     int              `json:"read"`
	Complete bool             `json:"complete"`
	Posts    []windowPostJSON `json:"posts"`
}

type droppedJSON struct {
	Count      int            `json:"count"`
	Read       int            `json:"read"`
	Complete   bool           `json:"complete"`
	Archivable int            `json:"archivable"`
	Matches    []record.Match `json:"matches"`
}

type previewJSON struct {
	Phrase  previewPhraseJSON `json:"phrase"`
	Window  windowFindsJSON   `json:"window"`
	Dropped *droppedJSON      `json:"dropped,omitempty"`
}

func previewRecord(p ports.Preview) previewJSON {
	f := p.Phrase.Filters
	out := previewJSON{
		Phrase: previewPhraseJSON{Phrase: p.Phrase.Phrase, Platform: string(p.Phrase.Platform), Community: nullable(p.Phrase.Community),
			Exclude: f.Exclude, Require: f.Require, ExcludeAuthors: f.ExcludeAuthors, ExcludeCommunities: f.ExcludeCommunities,
			MinLikes: f.MinLikes, MinComments: f.MinComments, TitleOnly: f.TitleOnly},
		Window: windowFindsJSON{On: p.Days > 0, Days: p.Days, MaxPosts: p.Posts, Count: p.Window.Count, Read: p.Window.Read,
			Complete: !p.Window.Partial, Posts: make([]windowPostJSON, len(p.Window.First))},
	}
	for i, rp := range p.Window.First {
		post := record.NewMatch(core.Match{Post: rp.Post}).Post
		out.Window.Posts[i] = windowPostJSON{ExternalID: rp.Post.ExternalID, Platform: string(rp.Platform), Community: nullable(rp.Community),
			SeenAt: core.Millis(rp.SeenAt), Post: post}
	}
	if p.Existing {
		d := &droppedJSON{Count: p.Dropped.Count, Read: p.Dropped.Read, Complete: !p.Dropped.Partial, Archivable: p.Archivable,
			Matches: make([]record.Match, len(p.Dropped.First))}
		for i, m := range p.Dropped.First {
			d.Matches[i] = record.NewMatch(m)
		}
		out.Dropped = d
	}
	return out
}

func (a *API) window() (WindowService, error) {
	if a.deps.Window == nil {
		return nil, core.Errorf(core.KindNotFound, "previews are not offered by this server")
	}
	return a.deps.Window, nil
}

type previewPhraseRequest struct {
	Phrase    *string `json:"phrase"`
	Platform  *string `json:"platform"`
	Community *string `json:"community"`
	filtersBody
}

func decodePreviewPhrase(_ context.Context, r *http.Request) (any, error) {
	var req previewPhraseRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	switch {
	case req.Phrase == nil:
		return nil, core.Errorf(core.KindInvalid, "phrase is required")
	case req.Platform == nil:
		return nil, core.Errorf(core.KindInvalid, "platform is required")
	}
	return req, nil
}

func (a *API) previewPhrase(ctx context.Context, req any) (any, error) {
	svc, err := a.window()
	if err != nil {
		return nil, err
	}
	r := req.(previewPhraseRequest)
	community := ""
	if r.Community != nil {
		community = *r.Community
	}
	p, err := svc.Preview(ctx, keyFrom(ctx).OwnerID, *r.Phrase, *r.Platform, community, core.PhraseFilters{}.With(r.change()))
	if err != nil {
		return nil, err
	}
	return ok(previewRecord(p)), nil
}

type previewChangeRequest struct {
	filtersBody
	id string
}

func decodePreviewChange(_ context.Context, r *http.Request) (any, error) {
	var req previewChangeRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	req.id = r.PathValue("id")
	return req, nil
}

func (a *API) previewChange(ctx context.Context, req any) (any, error) {
	svc, err := a.window()
	if err != nil {
		return nil, err
	}
	r := req.(previewChangeRequest)
	p, err := svc.PreviewChange(ctx, keyFrom(ctx).OwnerID, r.id, r.change())
	if err != nil {
		return nil, err
	}
	return ok(previewRecord(p)), nil
}

func (a *API) applyFilters(ctx context.Context, req any) (any, error) {
	svc, err := a.window()
	if err != nil {
		return nil, err
	}
	res, err := svc.ApplyFilters(ctx, keyFrom(ctx).OwnerID, req.(idRequest).id)
	if err != nil {
		return nil, err
	}
	return ok(struct {
		SetID    *string `json:"setId"`
		Archived int     `json:"archived"`
		Read     int     `json:"read"`
		Complete bool    `json:"complete"`
	}{nullable(res.Set.ID), res.Set.Matches, res.Read, !res.Partial}), nil
}

type undoApplyRequest struct{ phraseID, setID string }

func decodeUndoApply(_ context.Context, r *http.Request) (any, error) {
	return undoApplyRequest{phraseID: r.PathValue("id"), setID: r.PathValue("setId")}, nil
}

func (a *API) undoApply(ctx context.Context, req any) (any, error) {
	svc, err := a.window()
	if err != nil {
		return nil, err
	}
	r := req.(undoApplyRequest)
	n, err := svc.UndoApply(ctx, keyFrom(ctx).OwnerID, r.phraseID, r.setID)
	if err != nil {
		return nil, err
	}
	return ok(struct {
		SetID    string `json:"setId"`
		Restored int    `json:"restored"`
	}{r.setID, n}), nil
}
