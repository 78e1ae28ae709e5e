package httpapi

import "github.com/earshothq/earshot/core"

// matchPage is the body of GET /matches, written by encodeResponse with
// encoding/json like every other answer.
type matchPage struct {
	Data       []MatchJSON `json:"data"`
	NextCursor *float64    `json:"nextCursor"`
}

// newMatchPage is the page of ms, each as its MatchRecord, with the
// cursor of the next page (nil on the last).
func newMatchPage(ms []core.Match, next *float64) matchPage {
	p := matchPage{Data: make([]MatchJSON, len(ms)), NextCursor: next}
	for i, m := range ms {
		p.Data[i] = MatchRecord(m)
	}
	return p
}
