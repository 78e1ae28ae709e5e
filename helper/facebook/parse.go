package facebook

import (
	"encoding/json"
	"strconv"
	"strings"
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

// forLoop is the guard facebook prefixes to some JSON answers so that a
// script tag cannot run them.
const forLoop = "for (;;);"

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
		dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(string(body), forLoop, "")))
		for {
			var doc any
			// A broken document ends what can be read of this answer;
			// the documents before it are kept.
			if err := dec.Decode(&doc); err != nil {
				break
			}
			walk(doc, "", func(s story) {
				if !seen[s.id] {
					seen[s.id] = true
					out = append(out, s)
				}
			})
		}
	}
	return out
}

// walk finds the stories in v; group is the name of the group whose
// node encloses v ("" for none), which a group's feed gives once for
// all its stories.
func walk(v any, group string, found func(story)) {
	switch v := v.(type) {
	case map[string]any:
		if t, _ := v["__typename"].(string); t == "Group" {
			if n, _ := v["name"].(string); n != "" {
				group = n
			}
		}
		if id := idOf(v["post_id"]); id != "" {
			if s, ok := storyOf(id, v); ok {
				if s.group == "" {
					s.group = group
				}
				found(s)
				return
			}
			// A post_id beside no post (a tracking record): the story
			// may be further in.
		}
		for _, c := range v {
			walk(c, group, found)
		}
	case []any:
		for _, c := range v {
			walk(c, group, found)
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
	s.created = int64(num(first(v, "creation_time")))
	if rc, ok := first(v, "reaction_count").(map[string]any); ok {
		s.likes = int(num(rc["count"]))
	}
	// The count is under comment_count in search answers and under
	// comments in a page's or group's feed.
	for _, k := range []string{"comment_count", "comments"} {
		if cc, ok := first(v, k).(map[string]any); ok && cc["total_count"] != nil {
			s.comments = int(num(cc["total_count"]))
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
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func num(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}
