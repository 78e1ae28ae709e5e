package facebook

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/helper"
)

// story is the part of a facebook post the helper sends.
type story struct {
	id        string // post_id
	author    string
	authorURL string
	text      string
	url       string
	created   int64 // seconds since 1970
	likes     int
	comments  int
	group     string // the group's name, "" outside a group
}

// maxCreated is the latest creation time read as one, in seconds since
// 1970 (the year 5138), the bound the server's reddit reader sets.
const maxCreated = 1e11

// forLoop is the guard facebook prefixes to some JSON answers so that a
// script tag cannot run them.
const forLoop = "for (;;);"

// Caps on what of a page's document is parsed: one blob, and all of a
// document's blobs together. A search page's first results weigh a few
// hundred kilobytes.
const (
	maxBlob  = 2 << 20
	maxBlobs = 4 << 20
)

// parsePage returns the stories a page holds: in its document, where
// facebook puts the first results of a page it renders (see blobs), and
// in the GraphQL answers it received after, each story once.
func parsePage(doc []byte, answers [][]byte) []story {
	return parseAnswers(append(blobs(doc), answers...))
}

// blobs returns the JSON of a document's <script type="application/json"
// data-sjs> tags that carry data for the page's Relay store ("__bbox":
// facebook's server hands a page its first query results as
// {"require":[["ScheduledServerJS","handle",null,[{"__bbox":{"require":
// [["RelayPrefetchedStreamCache","next",[],[PRELOADER,{"__bbox":
// {"complete":true,"result":{"data":...}}}]]]}}]]]}), which the story
// finder reads as it reads an answer. A blob over maxBlob is skipped and
// the blobs stop at maxBlobs in all, before any is parsed.
func blobs(doc []byte) [][]byte {
	var out [][]byte
	total := 0
	for len(doc) > 0 {
		i := bytes.Index(doc, []byte("<script"))
		if i < 0 {
			break
		}
		doc = doc[i:]
		end := bytes.IndexByte(doc, '>')
		if end < 0 {
			break
		}
		tag := doc[:end]
		doc = doc[end+1:]
		stop := bytes.Index(doc, []byte("</script>"))
		if stop < 0 {
			break
		}
		body := doc[:stop]
		doc = doc[stop:]
		if !bytes.Contains(tag, []byte(`type="application/json"`)) || !bytes.Contains(tag, []byte("data-sjs")) ||
			!bytes.Contains(body, []byte(`"__bbox"`)) || len(body) > maxBlob {
			continue
		}
		if total += len(body); total > maxBlobs {
			break
		}
		out = append(out, body)
	}
	return out
}

// hasResults says whether an answer, or a blob of a document, holds
// facebook's answer to a search: stories, or its list of results, which
// is empty when the search found nothing (serpResponse.results.edges in
// a search, group_feed.edges in a group's feed). It reads the JSON, not
// the bytes: an answer that broke off after its first "post_id" holds
// no answer to read, and a page waiting on it would end before the
// answer came.
func hasResults(b []byte) bool {
	if !bytes.Contains(b, []byte(`"post_id"`)) && !bytes.Contains(b, []byte(`"serpResponse"`)) && !bytes.Contains(b, []byte(`"group_feed"`)) {
		return false
	}
	found := false
	eachDocument(b, func(doc any) {
		if !found && !resultList(doc) {
			walk(doc, "", func(story) { found = true })
			return
		}
		found = true
	})
	return found
}

// resultList says whether v holds a search's list of results, empty or
// not: an edges list under serpResponse.results or group_feed.
func resultList(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["serpResponse"].(map[string]any); ok {
			if res, ok := r["results"].(map[string]any); ok {
				if _, ok := res["edges"].([]any); ok {
					return true
				}
			}
		}
		if f, ok := v["group_feed"].(map[string]any); ok {
			if _, ok := f["edges"].([]any); ok {
				return true
			}
		}
		for _, c := range v {
			if resultList(c) {
				return true
			}
		}
	case []any:
		for _, c := range v {
			if resultList(c) {
				return true
			}
		}
	}
	return false
}

// hasGroups says whether an answer, or a blob of a document, holds
// groups, or the list of joined groups empty (tab_groups_list.edges) for
// an owner in none: a page waiting for groups that will never come
// would end only at the read's time cap, and fail.
func hasGroups(b []byte) bool {
	if bytes.Contains(b, []byte(`"__typename":"Group"`)) {
		return true
	}
	if !bytes.Contains(b, []byte(`"tab_groups_list"`)) {
		return false
	}
	found := false
	eachDocument(b, func(doc any) { found = found || groupsList(doc) })
	return found
}

// groupsList says whether v holds the list of joined groups,
// tab_groups_list with its edges.
func groupsList(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if l, ok := v["tab_groups_list"].(map[string]any); ok {
			if _, ok := l["edges"].([]any); ok {
				return true
			}
		}
		for _, c := range v {
			if groupsList(c) {
				return true
			}
		}
	case []any:
		for _, c := range v {
			if groupsList(c) {
				return true
			}
		}
	}
	return false
}

// pageHolds says whether a blob of the document or one of the answers
// has what has looks for.
func pageHolds(doc []byte, answers [][]byte, has func([]byte) bool) bool {
	return slices.ContainsFunc(blobs(doc), has) || slices.ContainsFunc(answers, has)
}

// Group is a group the owner joined, as /groups/joins/ lists it.
type Group struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// parseGroups returns the groups the owner joined that a page shows (the
// groups page /groups/joins/, in its document and in the answers it
// received), each once, in the page's order. A group is an object whose
// __typename is Group, with an id and a name, found wherever facebook
// nests it; one whose viewer_join_state says the owner is not a member
// (a suggestion beside the list) is left out.
func parseGroups(doc []byte, answers [][]byte) []Group {
	type at struct{ body, pos int }
	var out []Group
	where := map[string]at{}
	for i, body := range append(blobs(doc), answers...) {
		eachDocument(body, func(v any) {
			walkGroups(v, func(g Group) {
				if _, ok := where[g.ID]; ok {
					return
				}
				// The walk meets an object's keys in no fixed order: the
				// page's order is where each group's id first stands.
				pos := bytes.Index(body, []byte(`"`+g.ID+`"`))
				where[g.ID] = at{i, pos}
				out = append(out, g)
			})
		})
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		wa, wb := where[a.ID], where[b.ID]
		if wa.body != wb.body {
			return wa.body - wb.body
		}
		return wa.pos - wb.pos
	})
	return out
}

func walkGroups(v any, found func(Group)) {
	switch v := v.(type) {
	case map[string]any:
		if t, _ := v["__typename"].(string); t == "Group" {
			id := idOf(v["id"])
			name, _ := v["name"].(string)
			state, _ := v["viewer_join_state"].(string)
			if id != "" && name != "" && (state == "" || state == "MEMBER") {
				g := Group{ID: id, Name: name}
				g.URL, _ = v["url"].(string)
				found(g)
			}
		}
		for _, c := range v {
			walkGroups(c, found)
		}
	case []any:
		for _, c := range v {
			walkGroups(c, found)
		}
	}
}

// eachDocument hands each JSON document of a body to f: an answer may
// hold several, one a line, some prefixed with "for (;;);", which is
// taken off where a document starts only, as a post's text may quote it.
// A broken document ends what can be read of the body; the documents
// before it are kept. Numbers stay json.Number: ids are numbers past
// 2^53 at times, which a float64 would round to another post's id.
func eachDocument(body []byte, f func(any)) {
	for {
		body = bytes.TrimPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte(forLoop))
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return
		}
		f(doc)
		body = body[dec.InputOffset():]
	}
}

// parseAnswers returns the stories of the GraphQL answers a page
// received, each answer one body that may hold several JSON documents
// (facebook streams a query's parts one document a line, some prefixed
// with "for (;;);"). A story appears once however many answers repeat it.
//
// The story nodes are found by walking each document rather than by
// fixed paths: facebook nests them under keys that change with each
// release of its web client (serpResponse.results.edges[].node.
// rendering_strategy.view_model.click_model.story in search, group_feed
// .edges[].node in a group), while the story's own fields stay put. An
// object carrying "post_id" is a story; its fields are the first of each
// name found inside it, and what it embeds (a shared story) is not read
// as a story of its own.
func parseAnswers(answers [][]byte) []story {
	var out []story
	seen := map[string]bool{}
	for _, body := range answers {
		eachDocument(body, func(doc any) {
			walk(doc, "", func(s story) {
				if !seen[s.id] {
					seen[s.id] = true
					out = append(out, s)
				}
			})
		})
	}
	return out
}

// walk finds the stories in v; group is the name of the group whose
// node encloses v ("" for none), which a group's feed gives once for
// all its stories.
func walk(v any, group string, found func(story)) {
	walkUnder(v, group, 0, found)
}

// maxRecords is how many post_id objects that are not posts (tracking
// records) one path searches for a post's fields, each search reading
// all the record encloses: past them, records nested one in the other
// would make the work grow with an answer's size times its depth (an
// answer of 220 KB, 1,000 records deep, took minutes). Facebook nests a
// story in a record or two.
const maxRecords = 8

// walkUnder is walk within records such records.
func walkUnder(v any, group string, records int, found func(story)) {
	switch v := v.(type) {
	case map[string]any:
		if t, _ := v["__typename"].(string); t == "Group" {
			if n, _ := v["name"].(string); n != "" {
				group = n
			}
		}
		if id := idOf(v["post_id"]); id != "" && records < maxRecords {
			if s, ok := storyOf(id, v); ok {
				if s.group == "" {
					s.group = group
				}
				found(s)
				return
			}
			// A post_id beside no post (a tracking record): the story
			// may be further in.
			records++
		}
		for _, c := range v {
			walkUnder(c, group, records, found)
		}
	case []any:
		for _, c := range v {
			walkUnder(c, group, records, found)
		}
	}
}

func storyOf(id string, v map[string]any) (story, bool) {
	s := story{id: id}
	if m, ok := first(v, "message").(map[string]any); ok {
		s.text, _ = m["text"].(string)
	}
	if a, ok := first(v, "actors").([]any); ok && len(a) > 0 {
		if m, ok := a[0].(map[string]any); ok {
			s.author, _ = m["name"].(string)
			s.authorURL, _ = m["url"].(string)
		}
	}
	// A time past maxCreated is not seconds (milliseconds, or no date at
	// all): it would move a checkpoint past every later post, and a float
	// out of int64's range converts to an unspecified number.
	if c := num(first(v, "creation_time")); c > 0 && c <= maxCreated {
		s.created = int64(c)
	}
	if rc, ok := first(v, "reaction_count").(map[string]any); ok {
		s.likes = helper.Count(num(rc["count"]))
	}
	// The count is under comment_count in search answers and under
	// comments in a page's or group's feed.
	for _, k := range []string{"comment_count", "comments"} {
		if cc, ok := first(v, k).(map[string]any); ok && cc["total_count"] != nil {
			s.comments = helper.Count(num(cc["total_count"]))
			break
		}
	}
	s.url, _ = firstWhere(v, "url", isPermalink).(string)
	for _, k := range []string{"to", "target_group", "group"} {
		if g, ok := first(v, k).(map[string]any); ok {
			if t, _ := g["__typename"].(string); t == "Group" || k != "to" {
				s.group, _ = g["name"].(string)
				break
			}
		}
	}
	// A node without text and time is a placeholder (an ad slot, a
	// "see more" card), not a post.
	return s, s.text != "" && s.created > 0
}

// first returns the value of the first key named k in v, searched
// breadth first so that the story's own field wins over one nested in
// what it embeds.
func first(v map[string]any, k string) any {
	return firstWhere(v, k, func(any) bool { return true })
}

// isPermalink tells a post's address from the other addresses a story
// carries (its actor's profile, a picture).
func isPermalink(v any) bool {
	u, _ := v.(string)
	return strings.Contains(u, "/posts/") || strings.Contains(u, "/permalink") || strings.Contains(u, "story_fbid=")
}

func firstWhere(v map[string]any, k string, ok func(any) bool) any {
	queue := []any{v}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		switch cur := cur.(type) {
		case map[string]any:
			if x, found := cur[k]; found && x != nil && ok(x) {
				return x
			}
			for _, c := range cur {
				queue = append(queue, c)
			}
		case []any:
			queue = append(queue, cur...)
		}
	}
	return nil
}

func idOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		if s := v.String(); strings.Trim(s, "0123456789") == "" {
			return s
		}
		f, _ := v.Float64()
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

func num(v any) float64 {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}
