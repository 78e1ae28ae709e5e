package facebook

import (
	"strings"
	"testing"
)

// nestedRecords is an answer of depth objects each carrying a post_id
// but no post, one inside the other: the shape of a tracking record,
// repeated.
func nestedRecords(depth int) []byte {
	return []byte(strings.Repeat(`{"post_id":"1","a":`, depth) + "0" + strings.Repeat("}", depth))
}

// Each post_id that is not a post was searched, field by field, through
// all it encloses: records nested one in the other made the work grow
// with the square of the answer's size (an answer of 220 KB, 1,000
// records deep, took minutes). The search for a post's fields is now
// made by the outermost few records of a path only, so the work grows
// with the size: ten times the records cost about ten times as much,
// not a hundred.
func TestNestedRecordsBounded(t *testing.T) {
	cost := func(depth int) float64 {
		body := nestedRecords(depth)
		var got []story
		allocs := testing.AllocsPerRun(1, func() { got = parseAnswers([][]byte{body}) })
		if len(got) != 0 {
			t.Fatalf("stories %+v", got)
		}
		return allocs
	}
	small, large := cost(200), cost(2000)
	t.Logf("allocations: %.0f for 200 records, %.0f for 2,000", small, large)
	if large > 20*small {
		t.Errorf("%.0f allocations for 2,000 records, %.0f for 200: the work grows faster than the answer", large, small)
	}
}
