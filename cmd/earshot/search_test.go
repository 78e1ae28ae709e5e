package main

import (
	"encoding/csv"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The API's search and export through the real binary: q finds posts by
// title, text and author and pages with the list's cursor; a bad q is
// invalid_parameter; the export of a view is its matches, in its order,
// and one request against the key's limit.
func TestAPISearchAndExport(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=1000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	var posts []any
	for i := range 30 {
		text := fmt.Sprintf("acme post %d", i)
		if i%3 == 0 {
			text += ", about Invoice-Tools"
		}
		posts = append(posts, xPost(fmt.Sprint("p", i), fmt.Sprint("author", i%2), text))
	}
	s.ingest(s.IngestKey, "x", posts...)
	ids := func(path string) (out []string) {
		t.Helper()
		for before := ""; ; {
			r := s.call("GET", path+before, s.APIKey, nil).want(t, 200, "").JSON(t)
			for _, m := range r["data"].([]any) {
				out = append(out, m.(map[string]any)["id"].(string))
			}
			next, ok := r["nextCursor"].(float64)
			if !ok {
				return out
			}
			before = "&before=" + strconv.FormatFloat(next, 'f', -1, 64)
		}
	}
	q := "/api/v1/matches?limit=4&q=" + url.QueryEscape(`"invoice tools" -author1`)
	found := ids(q)
	all := ids("/api/v1/matches?limit=100")
	var want []string
	for i, id := range all { // newest first: p29 ... p0
		if n := 29 - i; n%3 == 0 && n%2 == 0 {
			want = append(want, id)
		}
	}
	if len(found) != 5 || !slices.Equal(found, want) {
		t.Fatalf("the search paged to %d matches %v, want %v", len(found), found, want)
	}
	s.call("GET", "/api/v1/matches?q=-acme", s.APIKey, nil).want(t, 400, "invalid_parameter")
	s.call("GET", "/api/v1/matches?q="+strings.Repeat("a", 201), s.APIKey, nil).want(t, 400, "invalid_parameter")
	s.call("GET", "/api/v1/matches/export?format=csv&limit=5", s.APIKey, nil).want(t, 400, "invalid_parameter")

	r := s.call("GET", "/api/v1/matches/export?format=csv&q="+url.QueryEscape(`"invoice tools" -author1`), s.APIKey, nil).want(t, 200, "")
	left := r.Header.Get("X-RateLimit-Remaining")
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, row := range rows[1:] {
		exported = append(exported, row[0])
	}
	if !slices.Equal(exported, want) || !strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="earshot-matches-`) {
		t.Fatalf("exported %v (%s), want %v", exported, r.Header.Get("Content-Disposition"), want)
	}
	r = s.call("GET", "/api/v1/me", s.APIKey, nil).want(t, 200, "")
	if n, _ := strconv.Atoi(left); r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(n-1) {
		t.Fatalf("after the export %s left, after the next request %s", left, r.Header.Get("X-RateLimit-Remaining"))
	}
}
