package legacymock

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// feedClient serves a mock whose static feed is items, so a search can be
// tried on text the seed does not hold. The items have the shape of
// feedItem, the one the seed's feed is read into.
func feedClient(t *testing.T, items []feedItem) *client {
	t.Helper()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.feed = items
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &client{t: t, base: srv.URL, http: srv.Client()}
}

// The spec's search is case-insensitive: two texts that differ only in
// case match, the way strings.EqualFold and the mock's own duplicate rule
// for keywords (core.FoldRune) read case. Lowercasing misses the pairs
// whose lower cases differ: a final sigma and a sigma, a long s and an s.
func TestOutmockFeedSearchFoldsCase(t *testing.T) {
	c := feedClient(t, []feedItem{
		{ID: "greek", Platform: "reddit", Author: "Νίκος", Handle: "u/nikos", Community: "r/greece", Title: "ΟΔΟΣ ΠΑΝΕΠΙΣΤΗΜΙΟΥ", Body: "Κλείσαμε ραντεβού online.", Sentiment: "neutral", PublishedAt: "2024-06-12T07:48:00.000Z"},
		{ID: "german", Platform: "facebook", Author: "Jörg", Handle: "joerg", Community: "Friseure", Title: "", Body: "GROSSE STRASSE 5, TERMIN PER APP", Sentiment: "neutral", PublishedAt: "2024-06-11T07:48:00.000Z"},
		{ID: "kelvin", Platform: "x", Author: "Kim", Handle: "@kim", Community: "Lab", Title: "", Body: "Stored at 4 K overnight", Sentiment: "neutral", PublishedAt: "2024-06-10T07:48:00.000Z"},
	})
	for _, tt := range []struct{ q, want string }{
		{"οδος", "greek"},      // final sigma against a capital sigma
		{"ΟΔΟς", "greek"},      // and the other way round
		{"σ πανεπ", "greek"},   // a medial sigma against a final position
		{"ſtraſſe", "german"},  // long s against S
		{"termin", "german"},   // plain ASCII still matches
		{"4 \u212a", "kelvin"}, // Kelvin sign against K
	} {
		items := c.must(200, "GET", "/feed?search="+url.QueryEscape(tt.q), nil).list("items")
		if len(items) != 1 || items[0]["id"] != tt.want {
			t.Errorf("search %q found %v, want %s", tt.q, items, tt.want)
		}
	}
	// Only case is ignored: ß is not ss, and accents count.
	for _, q := range []string{"grosse straße", "οδός"} {
		if items := c.must(200, "GET", "/feed?search="+url.QueryEscape(q), nil).list("items"); len(items) != 0 {
			t.Errorf("search %q found %v", q, items)
		}
	}
}
