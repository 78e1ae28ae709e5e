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

// query asks for the things of community made after after (unix seconds;
// none when 0), oldest first when asc, else newest first. No text query is
// ever sent: the mirrors' search is stemmed and would both miss and invent
// matches.
func (m *mirror) query(community string, after int64, asc bool) url.Values {
	order := "desc"
	if asc {
		order = "asc"
	}
	q := url.Values{"subreddit": {community}, "sort": {order}}
	if m.api == MirrorPullPush {
		q.Set("size", strconv.Itoa(pageSize))
		q.Set("sort_type", "created_utc")
	} else {
		q.Set("limit", strconv.Itoa(pageSize))
	}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	return q
}

// readMirror reads one endpoint's things of community made after since,
// oldest first: a read the page cap cuts then holds everything from since
// up to where it stopped, and the rest is read from there next time. Read
// newest first instead, a cut read would leave a span between since and
// its oldest item that the next read, starting at the newest item, never
// reaches, although the archive holds it (it has no listing cap). The
// archives have no cursor: a full page is followed by one that starts just
// before the newest time seen (after = newest - 1 s, so things sharing
// that second are not lost) and repeats are dropped, until a short page,
// a page with nothing new, or MaxPages. newest is the newest item's time
// (zero when none); cut says the read stopped before the archive's end,
// so only the things made before newest's second were all read. With no
// since there is nothing to reach back to, and the newest page is read.
func (s *Source) readMirror(ctx context.Context, ep endpoint, community string, since time.Time) (out []ports.RedditPost, newest time.Time, cut bool, err error) {
	seen := map[string]bool{}
	var after int64
	if !since.IsZero() {
		after = since.Unix()
	}
	for page := 0; ; page++ {
		if page == MaxPages {
			return newestFirst(out), newest, true, nil
		}
		items, held, err := s.mirrorPage(ctx, ep, s.mirror.query(community, after, !since.IsZero()))
		if err != nil {
			return nil, time.Time{}, false, err
		}
		fresh := 0
		ordered := true
		var last time.Time // the newest time on this page
		for _, it := range items {
			created := it.CreatedUTC.Time()
			if created.IsZero() {
				continue
			}
			if created.Before(last) {
				ordered = false
			}
			last = later(last, created)
			if !since.IsZero() && !created.After(since) {
				continue
			}
			id, ok := redditjson.Fullname(it.Kind, it.Name, it.ID)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			fresh++
			newest = later(newest, created)
			if rp, ok := it.post(community); ok {
				out = append(out, rp)
			}
		}
		if since.IsZero() || held < pageSize {
			return newestFirst(out), newest, false, nil
		}
		if !ordered {
			// An archive that ignored sort=asc: the next page, after this
			// one's newest, would skip what lies between. Nothing is
			// taken, so the checkpoint stays.
			return nil, time.Time{}, false, &failure{reason: "answer is not sorted oldest first"}
		}
		if fresh == 0 {
			// A full page of what was seen already: more than a page of
			// things share one second, and the read ends before it.
			return newestFirst(out), newest, true, nil
		}
		after = last.Unix() - 1
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
