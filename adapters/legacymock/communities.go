package legacymock

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/earshothq/earshot/core"
)

// Join states of a community.
const (
	joinNone     = "none"
	joinPending  = "pending"
	joinAccepted = "accepted"
)

// community is a joinable facebook group, x list or subreddit, with the
// workspace's join relation to it.
type community struct {
	ID             string   `json:"id"`
	Platform       string   `json:"platform"`
	Name           string   `json:"name"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	MemberCount    int      `json:"memberCount"`
	EntryQuestions []string `json:"entryQuestions"`
	JoinState      string   `json:"joinState"`
	AccountID      *string  `json:"accountId"`
	AccountLabel   *string  `json:"accountLabel"`
	Answers        []string `json:"answers"`
	// Source is "catalog" for the seeded rows and "registered" for rows
	// added from a link or a subreddit name.
	Source string `json:"source"`
}

func (c *community) fillNils() {
	if c.EntryQuestions == nil {
		c.EntryQuestions = []string{}
	}
	if c.Answers == nil {
		c.Answers = []string{}
	}
	if c.JoinState == "" {
		c.JoinState = joinNone
	}
}

func (c *community) leave() {
	c.JoinState = joinNone
	c.AccountID, c.AccountLabel = nil, nil
	c.Answers = []string{}
}

var errCommunityNotFound = core.Errorf(core.KindNotFound, "Community not found")

func (st *state) findCommunity(id string) *community {
	for i := range st.Communities {
		if st.Communities[i].ID == id {
			return &st.Communities[i]
		}
	}
	return nil
}

// prune brings derived parts of the state up to date before any read or
// write: a facebook join whose account is gone (or is no longer a facebook
// account) is dropped, and account labels are copied from the accounts.
// It runs under the store's lock on every call, so accounts are looked up
// by id in one index rather than by a scan per join.
func (st *state) prune() {
	var byID map[string]*account
	for i := range st.Communities {
		c := &st.Communities[i]
		if c.AccountID == nil {
			c.AccountLabel = nil
			continue
		}
		if byID == nil {
			byID = make(map[string]*account, len(st.Accounts))
			for j := range st.Accounts {
				// The first account with an id wins, as in findAccount.
				if _, dup := byID[st.Accounts[j].ID]; !dup {
					byID[st.Accounts[j].ID] = &st.Accounts[j]
				}
			}
		}
		a := byID[*c.AccountID]
		if a == nil || a.Platform != c.Platform {
			c.leave()
			continue
		}
		label := a.Label
		c.AccountLabel = &label
	}
}

// applyJoin moves a community out of joinState none by the spec's rules:
// facebook groups need a connected facebook account and one non-blank
// answer per entry question and go to pending; subreddits and x lists are
// accepted at once. A community already pending or accepted is left alone.
func (st *state) applyJoin(c *community, accountRef string, answers []string) error {
	if c.JoinState != joinNone {
		return nil
	}
	if c.Platform != string(core.Facebook) {
		c.JoinState = joinAccepted
		return nil
	}
	if strings.TrimSpace(accountRef) == "" {
		return core.Errorf(core.KindInvalid, "Joining a facebook group needs the accountId of a connected facebook account")
	}
	a, err := st.facebookAccount(accountRef)
	if err != nil {
		return err
	}
	if a.ConnectedAt == nil {
		return core.Errorf(core.KindInvalid, "Account %s is not connected yet", a.ID)
	}
	if len(answers) != len(c.EntryQuestions) {
		return core.Errorf(core.KindInvalid, "%s asks %d entry questions; send one answer for each", c.Name, len(c.EntryQuestions))
	}
	clean := make([]string, len(answers))
	for i, ans := range answers {
		clean[i] = strings.TrimSpace(ans)
		if clean[i] == "" {
			return core.Errorf(core.KindInvalid, "Answer %d is blank: every entry question needs an answer", i+1)
		}
	}
	id, label := a.ID, a.Label
	c.JoinState = joinPending
	c.AccountID, c.AccountLabel = &id, &label
	c.Answers = clean
	return nil
}

// ref is a community a link or a name points at.
type ref struct {
	platform core.Platform
	id       string
	url      string
	name     string
}

func (r ref) newRow() community {
	c := community{ID: r.id, Platform: string(r.platform), Name: r.name, URL: r.url, Source: "registered"}
	switch r.platform {
	case core.Facebook:
		c.Description = "Facebook group added from its link."
	case core.X:
		c.Description = "X list added from its link."
	default:
		c.Description = "Subreddit added by name."
	}
	c.fillNils()
	return c
}

// register returns the row a ref points at, adding it when unseen; added
// reports whether it was new.
func (st *state) register(r ref) (c *community, added bool) {
	if c := st.findCommunity(r.id); c != nil {
		return c, false
	}
	st.Communities = append(st.Communities, r.newRow())
	return &st.Communities[len(st.Communities)-1], true
}

var (
	facebookHosts = map[string]bool{"facebook.com": true, "www.facebook.com": true, "m.facebook.com": true, "web.facebook.com": true, "mbasic.facebook.com": true}
	xHosts        = map[string]bool{"x.com": true, "www.x.com": true, "mobile.x.com": true, "twitter.com": true, "www.twitter.com": true, "mobile.twitter.com": true}
	redditHosts   = map[string]bool{"reddit.com": true, "www.reddit.com": true, "old.reddit.com": true, "new.reddit.com": true, "np.reddit.com": true, "m.reddit.com": true}
)

// parseCommunityURL reads a facebook group, x list or subreddit link. A
// link without a scheme is read as https.
func parseCommunityURL(raw string) (ref, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ref{}, false
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ref{}, false
	}
	host := strings.ToLower(u.Hostname())
	parts := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	switch {
	case facebookHosts[host] && len(parts) >= 2 && parts[0] == "groups" && slugOK(parts[1]):
		slug := strings.ToLower(parts[1])
		return ref{platform: core.Facebook, id: "fb-" + slug, url: "https://www.facebook.com/groups/" + slug + "/", name: slug}, true
	case xHosts[host] && len(parts) >= 3 && parts[0] == "i" && parts[1] == "lists" && digitsOK(parts[2]):
		return ref{platform: core.X, id: "x-list-" + parts[2], url: "https://x.com/i/lists/" + parts[2], name: "List " + parts[2]}, true
	case redditHosts[host] && len(parts) >= 2 && strings.EqualFold(parts[0], "r"):
		return subredditRef(parts[1])
	}
	return ref{}, false
}

func subredditRef(name string) (ref, bool) {
	n, err := core.NormalizeCommunity(name)
	if err != nil {
		return ref{}, false
	}
	return ref{platform: core.Reddit, id: "r-" + n, url: "https://www.reddit.com/r/" + n + "/", name: "r/" + n}, true
}

func slugOK(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func digitsOK(s string) bool {
	if s == "" || len(s) > 25 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

type listCommunitiesRequest struct{ platform string }

func decodeListCommunities(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	return listCommunitiesRequest{platform: q.Get("platform")}, nil
}

func (s *Server) listCommunities(_ context.Context, request any) (any, error) {
	req := request.(listCommunitiesRequest)
	if req.platform != "" {
		if _, err := parsePlatform(req.platform); err != nil {
			return nil, err
		}
	}
	return s.store.read(func(st *state) (result, error) {
		out := []community{}
		for _, c := range st.Communities {
			if req.platform == "" || c.Platform == req.platform {
				out = append(out, c)
			}
		}
		return ok(map[string]any{"communities": out}), nil
	})
}

type joinRequest struct {
	pathID
	AccountID string   `json:"accountId"`
	Answers   []string `json:"answers"`
}

var decodeJoinCommunity = decodeBodyAt[joinRequest]("id", true)

func (s *Server) joinCommunity(_ context.Context, request any) (any, error) {
	req := request.(joinRequest)
	return s.store.write(func(st *state) (result, error) {
		c := st.findCommunity(req.id)
		if c == nil {
			return result{}, errCommunityNotFound
		}
		if err := st.applyJoin(c, req.AccountID, req.Answers); err != nil {
			return result{}, err
		}
		return ok(map[string]any{"community": *c, "communities": st.Communities}), nil
	})
}

type joinByURLRequest struct {
	URL       string   `json:"url"`
	AccountID string   `json:"accountId"`
	Answers   []string `json:"answers"`
}

var decodeJoinByURL = decodeBody[joinByURLRequest]

var errGroupURL = core.Errorf(core.KindInvalid, "url must be a facebook group link, like https://www.facebook.com/groups/<name>/")

// joinByURL registers an unseen facebook group link, then applies the
// facebook join rule. A new row answers 201, a tracked one 200.
func (s *Server) joinByURL(_ context.Context, request any) (any, error) {
	req := request.(joinByURLRequest)
	if strings.TrimSpace(req.URL) == "" {
		return nil, core.Errorf(core.KindInvalid, "url is required")
	}
	r, valid := parseCommunityURL(req.URL)
	if !valid || r.platform != core.Facebook {
		return nil, errGroupURL
	}
	return s.store.write(func(st *state) (result, error) {
		c, added := st.register(r)
		if err := st.applyJoin(c, req.AccountID, req.Answers); err != nil {
			return result{}, err
		}
		return okOrCreated(added, map[string]any{"community": *c, "communities": st.Communities}), nil
	})
}

type resolveCommunityRequest struct {
	URL string `json:"url"`
}

var decodeResolveCommunity = decodeBody[resolveCommunityRequest]

// resolveCommunity looks a link up, registering an unseen one with
// joinState none so its entry questions can be read before joining.
func (s *Server) resolveCommunity(_ context.Context, request any) (any, error) {
	req := request.(resolveCommunityRequest)
	if strings.TrimSpace(req.URL) == "" {
		return nil, core.Errorf(core.KindInvalid, "url is required")
	}
	r, valid := parseCommunityURL(req.URL)
	if !valid {
		return nil, core.Errorf(core.KindInvalid, "url must be a facebook group, x list or subreddit link")
	}
	return s.store.write(func(st *state) (result, error) {
		c, added := st.register(r)
		return okOrCreated(added, map[string]any{"community": *c}), nil
	})
}

type resolveRedditRequest struct {
	Name string `json:"name"`
}

var decodeResolveReddit = decodeBody[resolveRedditRequest]

// resolveReddit takes r/<name> or <name> (a subreddit link works too) and
// answers the subreddit accepted, creating the row when unseen.
func (s *Server) resolveReddit(_ context.Context, request any) (any, error) {
	req := request.(resolveRedditRequest)
	name := strings.TrimSpace(req.Name)
	if name == "" {
		return nil, core.Errorf(core.KindInvalid, "name is required")
	}
	r, valid := subredditRef(name)
	if !valid {
		if r, valid = parseCommunityURL(name); !valid || r.platform != core.Reddit {
			return nil, core.Errorf(core.KindInvalid, "name must be a subreddit, like r/smallbusiness or smallbusiness (3 to 21 letters, digits or underscores)")
		}
	}
	return s.store.write(func(st *state) (result, error) {
		c, added := st.register(r)
		c.JoinState = joinAccepted
		return okOrCreated(added, map[string]any{"community": *c}), nil
	})
}

// The routes whose only input is the community id in the path.
var (
	decodeAcceptCommunity = decodePath("id")
	decodeLeaveCommunity  = decodePath("id")
)

// acceptCommunity simulates the group admin approving a join request.
func (s *Server) acceptCommunity(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		c := st.findCommunity(id)
		switch {
		case c == nil:
			return result{}, errCommunityNotFound
		case c.JoinState == joinNone:
			return result{}, core.Errorf(core.KindInvalid, "No join request to accept")
		}
		c.JoinState = joinAccepted
		return ok(map[string]any{"community": *c, "communities": st.Communities}), nil
	})
}

// leaveCommunity drops the join relation; the row itself stays in the
// catalog.
func (s *Server) leaveCommunity(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		c := st.findCommunity(id)
		if c == nil {
			return result{}, errCommunityNotFound
		}
		c.leave()
		return ok(map[string]any{"communities": st.Communities}), nil
	})
}
