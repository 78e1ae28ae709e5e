package redditjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kinds of reddit things read. A fullname is kind + "_" + id.
const (
	KindPost    = "t3"
	KindComment = "t1"
)

// PublicSite is where every post link points, whatever address the posts
// were read from: a test server, a proxy or a mirror; the owner reading a
// match wants the post on reddit.
const PublicSite = "https://www.reddit.com"

// Thing is the part of a reddit post or comment both readers use, under
// reddit's own field names; fields a source leaves out stay empty.
type Thing struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"` // fullname; mirrors often leave it out
	Author            string          `json:"author"`
	Title             string          `json:"title"`
	Selftext          string          `json:"selftext"`
	Body              string          `json:"body"`
	Permalink         string          `json:"permalink"`
	Subreddit         string          `json:"subreddit"`
	Score             Number          `json:"score"`
	NumComments       Number          `json:"num_comments"`
	CreatedUTC        Number          `json:"created_utc"`
	RemovedByCategory json.RawMessage `json:"removed_by_category"`
	LinkID            string          `json:"link_id"` // a comment's post, t3_...
	Stickied          bool            `json:"stickied"`
}

// Number reads a JSON number that a source may also send as a string or
// null: created_utc is a float on reddit ("1767225600.0"), an integer on
// the mirrors, and a string in some older archive records. A string is
// unquoted as JSON and trimmed; an empty one is 0.
type Number float64

func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(strings.TrimSpace(s))
		if len(b) == 0 {
			*n = 0
			return nil
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("number out of range")
	}
	*n = Number(f)
	return nil
}

// Int clamps n to a range every platform's int holds, since a float out of
// range converts to an unspecified integer.
func (n Number) Int() int {
	const lim = 1 << 31
	f := float64(n)
	switch {
	case f > lim-1:
		return lim - 1
	case f < -lim:
		return -lim
	}
	return int(f)
}

// Time reads n as seconds since 1970; the zero time when it is not a
// plausible creation time (before 2005, when reddit began, or absurdly far
// ahead).
func (n Number) Time() time.Time {
	f := float64(n)
	if f < 1_100_000_000 || f > 1e11 {
		return time.Time{}
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)).UTC()
}
