package x

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// The one parser of x's answers: the SearchTimeline GraphQL answer its
// web client receives for /search?q=...&f=live. When x changes the
// shape, this file and the fixture in testdata/ change, nothing else.
//
// The shape, as x's web client receives it (and as open-source scrapers
// such as twscrape and the-convocation/twitter-scraper decode it):
//
//	data.search_by_raw_query.search_timeline.timeline.instructions[]
//	  .entries[].content.itemContent.tweet_results.result
//	    rest_id, legacy.{full_text, favorite_count, reply_count, created_at},
//	    note_tweet.note_tweet_results.result.text (a post over 280
//	      characters: its whole text, full_text being cut there),
//	    core.user_results.result.legacy.screen_name
//	    (newer answers: core.user_results.result.core.screen_name)
//
// A result may be a TweetWithVisibilityResults wrapping the tweet under
// "tweet"; entries that are not tweets (prompts) are skipped, and so are
// ads (promoted tweets, with itemContent.promotedMetadata). The
// "Bottom" cursor (content.cursorType, content.value) is what the client
// asks the next page with, once the page is scrolled to its end: on the
// first page it is an entry among the tweets, on later pages the entry
// of a TimelineReplaceEntry instruction. A page with no tweets is past
// the last result. testdata/README.md describes the fixtures.

type timelineAnswer struct {
	Data struct {
		Search struct {
			Timeline struct {
				Timeline struct {
					Instructions []struct {
						Entries []timelineEntry `json:"entries"`
						Entry   *timelineEntry  `json:"entry"`
					} `json:"instructions"`
				} `json:"timeline"`
			} `json:"search_timeline"`
		} `json:"search_by_raw_query"`
	} `json:"data"`
	Errors []struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Path    []any  `json:"path"`
	} `json:"errors"`
}

type timelineEntry struct {
	EntryID string `json:"entryId"`
	Content struct {
		CursorType  string `json:"cursorType"`
		Value       string `json:"value"`
		ItemContent struct {
			TweetResults struct {
				Result *tweetResult `json:"result"`
			} `json:"tweet_results"`
			PromotedMetadata json.RawMessage `json:"promotedMetadata"`
		} `json:"itemContent"`
	} `json:"content"`
}

type tweetResult struct {
	RestID string       `json:"rest_id"`
	Tweet  *tweetResult `json:"tweet"`
	Core   struct {
		UserResults struct {
			Result struct {
				Legacy struct {
					ScreenName string `json:"screen_name"`
				} `json:"legacy"`
				Core struct {
					ScreenName string `json:"screen_name"`
				} `json:"core"`
			} `json:"result"`
		} `json:"user_results"`
	} `json:"core"`
	// NoteTweet holds the whole text of a post longer than 280
	// characters, whose legacy.full_text x cuts there.
	NoteTweet struct {
		Results struct {
			Result struct {
				Text string `json:"text"`
			} `json:"result"`
		} `json:"note_tweet_results"`
	} `json:"note_tweet"`
	Legacy struct {
		FullText      string `json:"full_text"`
		FavoriteCount count  `json:"favorite_count"`
		ReplyCount    count  `json:"reply_count"`
		CreatedAt     string `json:"created_at"`
	} `json:"legacy"`
}

// count is a count of a tweet, read within 0 to 2^31-1, 0 when it is not
// a number: one odd count does not cost the page its other tweets, and
// the server skips a post with a negative count.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		f = 0
	}
	*c = count(helper.Count(f))
	return nil
}

// tweet is one post of a search answer.
type tweet struct {
	ID, Handle, Text string
	Likes, Replies   int
	PostedAt         time.Time
}

// createdAtLayout is legacy.created_at's: "Wed Oct 10 20:19:24 +0000 2018".
const createdAtLayout = "Mon Jan 02 15:04:05 -0700 2006"

// searchPage is what one SearchTimeline answer holds.
type searchPage struct {
	tweets []tweet
	// bottom is the cursor of the next page, "" for none.
	bottom string
	// errCode is the first of x's error codes the answer carried (0 for
	// none), which names an account issue (see core/health).
	errCode int
}

// parseSearch reads a SearchTimeline answer.
func parseSearch(body []byte) (searchPage, error) {
	var a timelineAnswer
	var pg searchPage
	if err := json.Unmarshal(body, &a); err != nil {
		// A value of another type than expected (x changing one field's
		// shape) is left out and the rest decoded: it costs that field,
		// or the tweet whose id, handle or text it was, not the page.
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return pg, fmt.Errorf("not a SearchTimeline answer: %w", err)
		}
	}
	for _, e := range a.Errors {
		// An error whose path leads into one entry (a quoted tweet x
		// could not look up, "Dependency: Internal error. (131)") is that
		// entry's when the timeline came: the page's other tweets are
		// there, and it says nothing of the account. Taken for the
		// answer's, it would fail the search and report the account's
		// reading as failing, on every pass while that entry is in the
		// results.
		if len(a.Data.Search.Timeline.Timeline.Instructions) > 0 &&
			slices.ContainsFunc(e.Path, func(p any) bool { return p == "entries" || p == "entry" }) {
			continue
		}
		pg.errCode = e.Code
		break
	}
	if a.Data.Search.Timeline.Timeline.Instructions == nil && pg.errCode == 0 {
		// x moved or renamed the timeline: taken for an empty search, every
		// phrase would be recorded as read with no post ever sent.
		return pg, errors.New("not a SearchTimeline answer: no search_by_raw_query.search_timeline.timeline.instructions")
	}
	for _, in := range a.Data.Search.Timeline.Timeline.Instructions {
		entries := in.Entries
		if in.Entry != nil {
			entries = append(entries, *in.Entry)
		}
		for _, e := range entries {
			if e.Content.CursorType == "Bottom" {
				pg.bottom = e.Content.Value
				continue
			}
			if promoted(e) {
				continue
			}
			r := e.Content.ItemContent.TweetResults.Result
			if r != nil && r.RestID == "" && r.Tweet != nil {
				r = r.Tweet
			}
			if r == nil || !isID(r.RestID) {
				continue
			}
			handle := r.Core.UserResults.Result.Core.ScreenName
			if handle == "" {
				handle = r.Core.UserResults.Result.Legacy.ScreenName
			}
			text := r.NoteTweet.Results.Result.Text
			if strings.TrimSpace(text) == "" {
				text = unescape.Replace(r.Legacy.FullText)
			}
			t := tweet{ID: r.RestID, Handle: handle, Text: text, Likes: int(r.Legacy.FavoriteCount), Replies: int(r.Legacy.ReplyCount)}
			if at, err := time.Parse(createdAtLayout, r.Legacy.CreatedAt); err == nil {
				t.PostedAt = at
			}
			if handle == "" || strings.TrimSpace(t.Text) == "" {
				continue
			}
			// The server keeps no more of a text (core's IngestPost), and a
			// batch is bounded by its body limit: a tweet of a megabyte
			// would make a batch refused on every pass.
			t.Text = core.Cut(t.Text, core.MaxPostText)
			pg.tweets = append(pg.tweets, t)
		}
	}
	return pg, nil
}

// promoted reports whether an entry is an ad x placed among the results
// (itemContent.promotedMetadata, an entryId "promoted-tweet-..." or
// "promotedTweet-..."): not a result of the search, often months old, so
// that taken for one it would be sent as a post and, older than the
// checkpoint, end the reading of a search whose later pages hold posts
// not read yet.
func promoted(e timelineEntry) bool {
	m := strings.TrimSpace(string(e.Content.ItemContent.PromotedMetadata))
	return (m != "" && m != "null") || strings.HasPrefix(e.EntryID, "promoted")
}

// unescape undoes the escaping x applies to legacy.full_text (and only
// there: a note_tweet's text comes as written): "&amp;", "&lt;" and
// "&gt;". Left escaped, "Q&A" would be sent as "Q&amp;A" and match no
// phrase holding "&", "<" or ">". One pass, so "&amp;lt;" becomes "&lt;"
// as its author wrote it.
var unescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// isID reports whether s is one of x's ids: a decimal snowflake, at most
// 19 digits (an int64) without a leading zero. Ids are compared by length
// and then digit by digit (compareIDs) to move a search's checkpoint, so
// anything else could pass every later tweet.
func isID(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
