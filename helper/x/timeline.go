package x

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
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
//	    core.user_results.result.legacy.screen_name
//	    (newer answers: core.user_results.result.core.screen_name)
//
// A result may be a TweetWithVisibilityResults wrapping the tweet under
// "tweet"; entries that are not tweets (cursors, prompts) are skipped.

type timelineAnswer struct {
	Data struct {
		Search struct {
			Timeline struct {
				Timeline struct {
					Instructions []struct {
						Entries []struct {
							Content struct {
								ItemContent struct {
									TweetResults struct {
										Result *tweetResult `json:"result"`
									} `json:"tweet_results"`
								} `json:"itemContent"`
							} `json:"content"`
						} `json:"entries"`
					} `json:"instructions"`
				} `json:"timeline"`
			} `json:"search_timeline"`
		} `json:"search_by_raw_query"`
	} `json:"data"`
	Errors []struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
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
	Legacy struct {
		FullText      string `json:"full_text"`
		FavoriteCount int    `json:"favorite_count"`
		ReplyCount    int    `json:"reply_count"`
		CreatedAt     string `json:"created_at"`
	} `json:"legacy"`
}

// tweet is one post of a search answer.
type tweet struct {
	ID, Handle, Text string
	Likes, Replies   int
	PostedAt         time.Time
}

// createdAtLayout is legacy.created_at's: "Wed Oct 10 20:19:24 +0000 2018".
const createdAtLayout = "Mon Jan 02 15:04:05 -0700 2006"

// parseSearch reads a SearchTimeline answer; errCode is the first of x's
// error codes the answer carried (0 for none), which names an account
// issue (see core/health).
func parseSearch(body []byte) (tweets []tweet, errCode int, err error) {
	var a timelineAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, 0, fmt.Errorf("not a SearchTimeline answer: %w", err)
	}
	if len(a.Errors) > 0 {
		errCode = a.Errors[0].Code
	}
	for _, in := range a.Data.Search.Timeline.Timeline.Instructions {
		for _, e := range in.Entries {
			r := e.Content.ItemContent.TweetResults.Result
			if r != nil && r.RestID == "" && r.Tweet != nil {
				r = r.Tweet
			}
			if r == nil || r.RestID == "" {
				continue
			}
			handle := r.Core.UserResults.Result.Core.ScreenName
			if handle == "" {
				handle = r.Core.UserResults.Result.Legacy.ScreenName
			}
			t := tweet{ID: r.RestID, Handle: handle, Text: r.Legacy.FullText, Likes: r.Legacy.FavoriteCount, Replies: r.Legacy.ReplyCount}
			if at, err := time.Parse(createdAtLayout, r.Legacy.CreatedAt); err == nil {
				t.PostedAt = at
			}
			if handle == "" || strings.TrimSpace(t.Text) == "" {
				continue
			}
			tweets = append(tweets, t)
		}
	}
	return tweets, errCode, nil
}
