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
	ts, code, err := parseSearch(b)
	if err != nil || code != 0 || len(ts) != 2 {
		t.Fatalf("parseSearch = %+v, %d, %v", ts, code, err)
	}
	if ts[0].Handle != "ada_builds" || ts[1].Handle != "grace_h" || ts[1].ID != "1861000000000000001" || ts[0].PostedAt.IsZero() {
		t.Errorf("tweets: %+v", ts)
	}
	if _, code, _ := parseSearch([]byte(`{"errors":[{"code":89,"message":"Invalid or expired token."}]}`)); code != 89 {
		t.Errorf("error code %d", code)
	}
}
