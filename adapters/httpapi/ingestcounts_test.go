package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
)

// likes and comments are integers in the published schema (OpenAPI
// 3.1, JSON Schema 2020-12), where a number is an integer when its value
// is whole, however it is written: 1e2 and 1.0 are 100 and 1, and the
// row is a post. A fraction, a value past an int, a string or a bool is
// no integer and leaves the row invalid (skipped and counted); -1 is read
// and refused by validation, as before.
func TestDecodeIngestWholeNumberCounts(t *testing.T) {
	for _, c := range []struct {
		likes, comments string
		valid           bool
		wantLikes       int
		wantComments    int
	}{
		{"1e2", "0", true, 100, 0},
		{"1.0", "2.5e1", true, 1, 25},
		{"100.000", "1E1", true, 100, 10},
		{"-0", "-0.0", true, 0, 0},
		{"null", "3", true, 0, 3},
		{"7", "9", true, 7, 9},
		{"1.5", "0", false, 0, 0},
		{"1", "1e-2", false, 0, 0},
		{"1e400", "0", false, 0, 0},
		{"1e19", "0", false, 0, 0},
		{"99999999999999999999", "0", false, 0, 0},
		{`"5"`, "0", false, 0, 0},
		{"true", "0", false, 0, 0},
		{"[1]", "0", false, 0, 0},
		{"-1", "0", false, -1, 0},
		{"0", "-1e2", false, 0, -100},
	} {
		body := `{"platform":"x","posts":[{"externalId":"1","body":["acme"],"url":"https://x.com/1","likes":` + c.likes +
			`,"comments":` + c.comments + `},{"externalId":"2","body":["acme"],"url":"https://x.com/2"}]}`
		v, err := decodeIngest(context.Background(), httptest.NewRequest("POST", "/ingest", strings.NewReader(body)))
		if err != nil {
			t.Fatalf("likes %s, comments %s: %v", c.likes, c.comments, err)
		}
		posts := v.(ingestRequest).posts
		if len(posts) != 2 {
			t.Fatalf("likes %s, comments %s: %d posts", c.likes, c.comments, len(posts))
		}
		p := posts[0]
		_, perr := p.Post()
		if (perr == nil) != c.valid || p.Likes != c.wantLikes || p.Comments != c.wantComments {
			t.Errorf("likes %s, comments %s: read %d, %d, valid %v (%v); want %d, %d, valid %v",
				c.likes, c.comments, p.Likes, p.Comments, perr == nil, perr, c.wantLikes, c.wantComments, c.valid)
		}
		// The other row is a post whatever its neighbour held.
		if _, err := posts[1].Post(); err != nil || posts[1].ExternalID != "2" {
			t.Errorf("likes %s: the next row: %+v %v", c.likes, posts[1], err)
		}
	}
}
