package reddit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// mirror is an archive of reddit that answers when reddit does not.
type mirror struct {
	url string // base address, no trailing slash
	api string // MirrorArcticShift or MirrorPullPush
}

// endpoint is one of a mirror's search paths and the kind of thing it holds.
type endpoint struct {
	path string
	kind string
}

func (m *mirror) endpoints() []endpoint {
	if m.api == MirrorPullPush {
		return []endpoint{{"/reddit/search/submission/", redditjson.KindPost}, {"/reddit/search/comment/", redditjson.KindComment}}
	}
	return []endpoint{{"/api/posts/search", redditjson.KindPost}, {"/api/comments/search", redditjson.KindComment}}
}

// query asks for the newest things of community made after since and, when
// set, before before (unix seconds). No text query is ever sent: the
// mirrors' search is stemmed and would both miss and invent matches.
func (m *mirror) query(community string, since time.Time, before int64) url.Values {
	q := url.Values{"subreddit": {community}, "sort": {"desc"}}
	if m.api == MirrorPullPush {
		q.Set("size", strconv.Itoa(pageSize))
		q.Set("sort_type", "created_utc")
	} else {
		q.Set("limit", strconv.Itoa(pageSize))
	}
	if !since.IsZero() {
		q.Set("after", strconv.FormatInt(since.Unix(), 10))
	}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	return q
}

// readMirror reads one endpoint's things of community made after since.
// The archives have no cursor: a full page is followed by one that ends
// just after the oldest time seen (before = oldest + 1 s, so things
// sharing that second are not lost) and repeats are dropped, until a short
// page, a page that reaches since, a page with nothing new, or MaxPages.
// newest is the newest item's time (zero when none); from is since, or the
// oldest time reached when the page cap or a page with nothing new ended
// the read first.
func (s *Source) readMirror(ctx context.Context, ep endpoint, community string, since time.Time) (out []ports.RedditPost, newest, from time.Time, err error) {
	seen := map[string]bool{}
	var before int64
	from = since
	for page := 0; ; page++ {
		if page == MaxPages {
			return newestFirst(out), newest, from, nil
		}
		items, held, err := s.mirrorPage(ctx, ep, s.mirror.query(community, since, before))
		if err != nil {
			return nil, time.Time{}, time.Time{}, err
		}
		fresh := 0
		reachedSince := false // the page went back to since: nothing older is wanted
		var oldest time.Time
		for _, it := range items {
			created := it.CreatedUTC.Time()
			if created.IsZero() {
				continue
			}
			if !since.IsZero() && !created.After(since) {
				reachedSince = true
				continue
			}
			id, ok := redditjson.Fullname(it.Kind, it.Name, it.ID)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			fresh++
			if oldest.IsZero() || created.Before(oldest) {
				oldest = created
			}
			if created.After(newest) {
				newest = created
			}
			if rp, ok := it.post(community); ok {
				out = append(out, rp)
			}
		}
		if since.IsZero() || held < pageSize || reachedSince {
			return newestFirst(out), newest, since, nil
		}
		if fresh == 0 {
			// A full page of what was seen already: the archive showed
			// nothing older, so the read covers only back to from.
			return newestFirst(out), newest, from, nil
		}
		before = oldest.Unix() + 1
		from = oldest
	}
}

// mirrorPage fetches and decodes one page of a mirror search; held is
// how many elements it held, decoded or not.
func (s *Source) mirrorPage(ctx context.Context, ep endpoint, q url.Values) ([]item, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.mirror.url+ep.path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, 0, &failure{reason: "request could not be built"}
	}
	req.Header.Set("User-Agent", s.ua)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, transportFailure("", err)
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, 0, &failure{reason: fmt.Sprintf("http %d", resp.StatusCode), status: resp.StatusCode}
	}
	items, held, err := decodeMirrorPage(body, ep.kind)
	if err != nil {
		if !json.Valid(body) {
			return nil, 0, &failure{reason: "answer is not JSON", cause: err}
		}
		return nil, 0, &failure{reason: "answer is not a search result", cause: err}
	}
	return items, held, nil
}
