package legacymock

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/earshothq/earshot/core"
)

// feedItem is a post the workspace's keywords picked up. Sentiment is one
// of positive, neutral, negative or mixed.
type feedItem struct {
	ID          string `json:"id"`
	Platform    string `json:"platform"`
	Author      string `json:"author"`
	Handle      string `json:"handle"`
	Community   string `json:"community"`
	Title       string `json:"title"`
	Body        string `json:"body"`
	Sentiment   string `json:"sentiment"`
	Keyword     string `json:"keyword"`
	URL         string `json:"url"`
	PublishedAt string `json:"publishedAt"`
}

// sentiments are the values a feed item's sentiment takes.
var sentiments = []string{"positive", "neutral", "negative", "mixed"}

type listFeedRequest struct {
	platform string
	search   string
}

func decodeListFeed(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	return listFeedRequest{platform: q.Get("platform"), search: q.Get("search")}, nil
}

func decodeListFeedByPlatform(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	return listFeedRequest{platform: r.PathValue("platform"), search: q.Get("search")}, nil
}

// listFeed filters the static feed by platform and by a case-insensitive
// substring over author, handle, community, title and body. The feed is
// newest first. The search string is used as given, spaces included (the
// spec asks for a substring, so " ru" must not find "truck"), and is
// looked for in each field on its own, so it never spans two of them.
// Case is folded as strings.EqualFold and the keyword duplicate rule
// fold it: lowercasing left "ς" apart from "Σ" and "ſ" from "S".
func (s *Server) listFeed(_ context.Context, request any) (any, error) {
	req := request.(listFeedRequest)
	if req.platform != "" {
		if _, err := parsePlatform(req.platform); err != nil {
			return nil, err
		}
	}
	needle := strings.Map(core.FoldRune, req.search)
	items := []feedItem{}
	for _, it := range s.feed {
		if req.platform != "" && it.Platform != req.platform {
			continue
		}
		if needle != "" && !slices.ContainsFunc([]string{it.Author, it.Handle, it.Community, it.Title, it.Body}, func(f string) bool {
			return strings.Contains(strings.Map(core.FoldRune, f), needle)
		}) {
			continue
		}
		items = append(items, it)
	}
	return encodeReply(ok(map[string]any{"items": items}))
}
