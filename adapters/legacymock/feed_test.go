package legacymock

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestFeedSeed(t *testing.T) {
	c := newClient(t, Config{})
	items := c.must(200, "GET", "/feed", nil).list("items")
	if len(items) < 15 {
		t.Fatalf("%d feed items", len(items))
	}
	platforms, moods := map[string]int{}, map[string]int{}
	prev := "9999"
	for _, it := range items {
		platforms[it["platform"].(string)]++
		moods[it["sentiment"].(string)]++
		if !oneOf(it["sentiment"].(string), sentiments) {
			t.Errorf("%v: sentiment %v", it["id"], it["sentiment"])
		}
		if p := it["publishedAt"].(string); p > prev {
			t.Errorf("feed not newest first at %v", it["id"])
		} else {
			prev = p
		}
	}
	if len(platforms) != 3 || len(moods) != len(sentiments) {
		t.Errorf("spread: %v %v", platforms, moods)
	}
}

func TestFeedFilters(t *testing.T) {
	c := newClient(t, Config{})
	for _, p := range []string{"facebook", "x", "reddit"} {
		byQuery := c.must(200, "GET", "/feed?platform="+p, nil).list("items")
		byPath := c.must(200, "GET", "/feed/"+p, nil).list("items")
		if len(byQuery) == 0 || len(byQuery) != len(byPath) {
			t.Errorf("%s: %d by query, %d by path", p, len(byQuery), len(byPath))
		}
		for _, it := range byQuery {
			if it["platform"] != p {
				t.Errorf("%s filter let %v through", p, it["id"])
			}
		}
	}
	c.fails(400, "platform must be facebook, x, or reddit", "GET", "/feed?platform=tiktok", nil)
	c.fails(400, "platform must be facebook, x, or reddit", "GET", "/feed/tiktok", nil)
}

func TestFeedSearch(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		q, field, want string
	}{
		{"marisol", "author", "Marisol Vega"},
		{"@BRI_BRAIDS", "handle", "@bri_braids"},
		{"salon & spa", "community", "Salon & Spa Owners Network"},
		{"one-truck plumbing", "title", "Is booking software worth it for a one-truck plumbing business?"},
		{"mother's day", "body", ""},
	} {
		items := c.must(200, "GET", "/feed?search="+url.QueryEscape(tt.q), nil).list("items")
		if len(items) == 0 {
			t.Errorf("search %q found nothing", tt.q)
			continue
		}
		for _, it := range items {
			hay := strings.ToLower(it["author"].(string) + it["handle"].(string) + it["community"].(string) + it["title"].(string) + it["body"].(string))
			if !strings.Contains(hay, strings.ToLower(tt.q)) {
				t.Errorf("search %q matched %v", tt.q, it["id"])
			}
		}
		if tt.want != "" && find(items, tt.field, tt.want) == nil {
			t.Errorf("search %q missed the item by %s", tt.q, tt.field)
		}
	}
	if n := len(c.must(200, "GET", "/feed/reddit?search=calendly", nil).list("items")); n != 2 {
		t.Errorf("reddit + calendly: %d", n)
	}
	if n := len(c.must(200, "GET", "/feed?search=zzzz-no-such-text", nil).list("items")); n != 0 {
		t.Errorf("nonsense search: %d", n)
	}
}

// The search string is a substring as given: spaces around it count, so
// " ru" does not find "one-truck", and it never spans two fields.
func TestFeedSearchAsGiven(t *testing.T) {
	c := newClient(t, Config{})
	all := c.must(200, "GET", "/feed", nil).list("items")
	fields := func(it map[string]any) []string {
		return []string{it["author"].(string), it["handle"].(string), it["community"].(string), it["title"].(string), it["body"].(string)}
	}
	ids := func(items []map[string]any) []string {
		var out []string
		for _, it := range items {
			out = append(out, it["id"].(string))
		}
		return out
	}
	for _, q := range []string{" ru", "ru", "truck ", " TRUCK", "-truck", "plumbing business?", " ", "marisol vega\n"} {
		var want []map[string]any
		for _, it := range all {
			if slices.ContainsFunc(fields(it), func(f string) bool { return strings.Contains(strings.ToLower(f), strings.ToLower(q)) }) {
				want = append(want, it)
			}
		}
		got := c.must(200, "GET", "/feed?search="+url.QueryEscape(q), nil).list("items")
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("search %q found %v, want %v", q, ids(got), ids(want))
		}
	}
	truck := find(all, "title", "Is booking software worth it for a one-truck plumbing business?")
	if truck == nil {
		t.Fatal("the seed lost its one-truck post")
	}
	for _, it := range c.must(200, "GET", "/feed?search="+url.QueryEscape(" ru"), nil).list("items") {
		if it["id"] == truck["id"] {
			t.Errorf(`search " ru" found %q`, truck["title"])
		}
	}
}
