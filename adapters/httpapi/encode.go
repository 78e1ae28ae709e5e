package httpapi

import (
	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
)

// matchPage is the body of GET /matches, written by encodeResponse with
// encoding/json like every other answer.
type matchPage struct {
	Data       []record.Match `json:"data"`
	NextCursor *float64       `json:"nextCursor"`
}

// newMatchPage is the page of ms, each as its record (the one webhook
// messages carry too), with the cursor of the next page (nil on the
// last).
func newMatchPage(ms []core.Match, next *float64) matchPage {
	p := matchPage{Data: make([]record.Match, len(ms)), NextCursor: next}
	for i, m := range ms {
		p.Data[i] = record.NewMatch(m)
	}
	return p
}
