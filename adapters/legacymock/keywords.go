package legacymock

import (
	"context"
	"net/http"
	"strings"

	"github.com/earshothq/earshot/core"
)

// keyword is a tracked phrase of the workspace.
type keyword struct {
	ID        string  `json:"id"`
	Phrase    string  `json:"phrase"`
	Platform  string  `json:"platform"`
	GroupID   *string `json:"groupId"`
	Status    string  `json:"status"`
	CreatedAt string  `json:"createdAt"`
}

var errKeywordNotFound = core.Errorf(core.KindNotFound, "Keyword not found")

// checkKeyword applies the scope rules to a keyword that is about to be
// stored: facebook and reddit keywords are scoped to a community of their
// platform that the workspace has joined (accepted; pending is not joined
// yet), x keywords carry no group, and a phrase is unique
// (case-insensitively) within its platform and group. self is the id of
// the keyword being edited, "" on create.
func (st *state) checkKeyword(k keyword, self string) error {
	p := core.Platform(k.Platform)
	if p == core.X {
		if k.GroupID != nil {
			return core.Errorf(core.KindInvalid, "x keywords are word-based and must not carry a groupId")
		}
	} else {
		if k.GroupID == nil {
			return core.Errorf(core.KindInvalid, "%s keywords must be scoped to a joined community: send its id as groupId", p)
		}
		c := st.findCommunity(*k.GroupID)
		switch {
		case c == nil:
			return core.Errorf(core.KindInvalid, "groupId %s is not a known community", *k.GroupID)
		case c.Platform != k.Platform:
			return core.Errorf(core.KindInvalid, "groupId %s is a %s community, not a %s one", c.ID, c.Platform, p)
		case c.JoinState != joinAccepted:
			return core.Errorf(core.KindInvalid, "Join %s before scoping keywords to it", c.Name)
		}
	}
	// The spec's duplicate is case-insensitive and no more: the mock
	// stands for the legacy service, which does not read "Joe’s" as
	// "Joe's" as earshot's own phrases do.
	fold := strings.Map(core.FoldRune, k.Phrase)
	for _, o := range st.Keywords {
		if o.ID != self && o.Platform == k.Platform && sameGroup(o.GroupID, k.GroupID) && strings.Map(core.FoldRune, o.Phrase) == fold {
			return core.Errorf(core.KindConflict, "%q is already tracked in this scope", k.Phrase)
		}
	}
	return nil
}

func sameGroup(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// groupRef reads a groupId field: absent, null and "" all mean no group.
func groupRef(o optional[string]) *string {
	g := strings.TrimSpace(o.Value)
	if !o.Set || o.Null || g == "" {
		return nil
	}
	return &g
}

func (st *state) findKeyword(id string) *keyword {
	for i := range st.Keywords {
		if st.Keywords[i].ID == id {
			return &st.Keywords[i]
		}
	}
	return nil
}

type listKeywordsRequest struct {
	platform, groupID, noGroup string
}

func decodeListKeywords(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	return listKeywordsRequest{platform: q.Get("platform"), groupID: q.Get("groupId"), noGroup: q.Get("noGroup")}, nil
}

// parseNoGroup reads the noGroup filter: true, 1 or yes keeps only
// keywords without a group; false, 0, no or empty applies no filter.
func parseNoGroup(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true, nil
	case "", "false", "0", "no":
		return false, nil
	}
	return false, core.Errorf(core.KindInvalid, "noGroup must be true, false, 1 or 0")
}

func (s *Server) listKeywords(_ context.Context, request any) (any, error) {
	req := request.(listKeywordsRequest)
	if req.platform != "" {
		if _, err := parsePlatform(req.platform); err != nil {
			return nil, err
		}
	}
	noGroup, err := parseNoGroup(req.noGroup)
	if err != nil {
		return nil, err
	}
	return s.store.read(func(st *state) (result, error) {
		out := []keyword{}
		for _, k := range st.Keywords {
			switch {
			case req.platform != "" && k.Platform != req.platform,
				req.groupID != "" && (k.GroupID == nil || *k.GroupID != req.groupID),
				noGroup && k.GroupID != nil:
				continue
			}
			out = append(out, k)
		}
		return ok(map[string]any{"keywords": out}), nil
	})
}

type createKeywordRequest struct {
	Phrase   string           `json:"phrase"`
	Platform string           `json:"platform"`
	GroupID  optional[string] `json:"groupId"`
}

var decodeCreateKeyword = decodeBody[createKeywordRequest]

func (s *Server) createKeyword(_ context.Context, request any) (any, error) {
	req := request.(createKeywordRequest)
	phrase, err := core.NormalizePhrase(req.Phrase)
	if err != nil {
		return nil, err
	}
	p, err := parsePlatform(req.Platform)
	if err != nil {
		return nil, err
	}
	return s.store.write(func(st *state) (result, error) {
		k := keyword{
			ID: s.store.newID("keyword"), Phrase: phrase, Platform: string(p),
			GroupID: groupRef(req.GroupID), Status: string(core.Listening), CreatedAt: s.store.stamp(),
		}
		if err := st.checkKeyword(k, ""); err != nil {
			return result{}, err
		}
		st.Keywords = append(st.Keywords, k)
		return created(map[string]any{"keyword": k, "keywords": st.Keywords}), nil
	})
}

func (s *Server) resetKeywords(context.Context, any) (any, error) {
	seeded, err := seedKeywords()
	if err != nil {
		return nil, core.Wrap(core.KindInternal, err, "")
	}
	return s.store.write(func(st *state) (result, error) {
		st.Keywords = seeded
		return ok(map[string]any{"keywords": st.Keywords}), nil
	})
}

type updateKeywordRequest struct {
	pathID
	Phrase  optional[string] `json:"phrase"`
	GroupID optional[string] `json:"groupId"`
	Status  optional[string] `json:"status"`
}

var decodeUpdateKeyword = decodeBodyAt[updateKeywordRequest]("id", false)

func (s *Server) updateKeyword(_ context.Context, request any) (any, error) {
	req := request.(updateKeywordRequest)
	return s.store.write(func(st *state) (result, error) {
		k := st.findKeyword(req.id)
		if k == nil {
			return result{}, errKeywordNotFound
		}
		next := *k
		if req.Phrase.Set {
			phrase, err := core.NormalizePhrase(req.Phrase.Value)
			if err != nil {
				return result{}, err
			}
			next.Phrase = phrase
		}
		if req.GroupID.Set {
			next.GroupID = groupRef(req.GroupID)
		}
		if req.Status.Set {
			if status := core.PhraseStatus(req.Status.Value); req.Status.Null || !status.Valid() {
				return result{}, core.Errorf(core.KindInvalid, "status must be listening or paused")
			}
			next.Status = req.Status.Value
		}
		// Scope rules are checked when the scope or phrase changes, so a
		// keyword of a community left since can still be paused, also by
		// a client that sends the whole record back with the new status.
		if next.Phrase != k.Phrase || !sameGroup(next.GroupID, k.GroupID) {
			if err := st.checkKeyword(next, next.ID); err != nil {
				return result{}, err
			}
		}
		*k = next
		return ok(map[string]any{"keyword": next, "keywords": st.Keywords}), nil
	})
}

var decodeDeleteKeyword = decodePath("id")

func (s *Server) deleteKeyword(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		for i := range st.Keywords {
			if st.Keywords[i].ID == id {
				st.Keywords = append(st.Keywords[:i], st.Keywords[i+1:]...)
				return ok(map[string]any{"keywords": st.Keywords}), nil
			}
		}
		return result{}, errKeywordNotFound
	})
}
