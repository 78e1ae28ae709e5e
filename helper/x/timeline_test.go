package x

import (
	"os"
	"testing"
)

func TestParseSearchFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/search_timeline.json")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := parseSearch(b)
	ts := pg.tweets
	if err != nil || pg.errCode != 0 || len(ts) != 2 {
		t.Fatalf("parseSearch = %+v, %v", pg, err)
	}
	if ts[0].Handle != "ada_builds" || ts[1].Handle != "grace_h" || ts[1].ID != "1861000000000000001" || ts[0].PostedAt.IsZero() {
		t.Errorf("tweets: %+v", ts)
	}
	if pg.bottom != "DAACCgACGdy" {
		t.Errorf("the first page's Bottom cursor, an entry: %q", pg.bottom)
	}
	if pg, _ := parseSearch([]byte(`{"errors":[{"code":89,"message":"Invalid or expired token."}]}`)); pg.errCode != 89 {
		t.Errorf("error code %d", pg.errCode)
	}
}

// Later pages give their cursors in TimelineReplaceEntry instructions;
// the page past the last result has no tweets.
func TestParseLaterPages(t *testing.T) {
	for _, tc := range []struct {
		file, bottom string
		tweets       int
	}{
		{"search_timeline_page2.json", "DAACCgACGdz", 2},
		{"search_timeline_end.json", "DAACCgACGdz-end", 0},
	} {
		b, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := parseSearch(b)
		if err != nil || len(pg.tweets) != tc.tweets || pg.bottom != tc.bottom {
			t.Errorf("%s: %d tweets, bottom %q, %v; want %d, %q", tc.file, len(pg.tweets), pg.bottom, err, tc.tweets, tc.bottom)
		}
	}
}
