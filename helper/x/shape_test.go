package x

import (
	"testing"
	"time"

	"github.com/earshothq/earshot/helper/browser"
)

// A field of one tweet in another type than the parser expects (x
// changing a field's shape: a number where a string was, an object
// where a number was) costs that field, or that tweet when it is the
// id, handle or text, never the page's other tweets. The whole answer
// was refused as "not a SearchTimeline answer", so one odd tweet made
// every pass fail its search. The tweets are timelineOf's shape (the
// fixtures', testdata/README.md) with one field's type changed.
func TestParseKeepsThePageWhenAFieldChangesType(t *testing.T) {
	pg, err := parseSearch(timelineOf(
		`{"rest_id":"1861000000000000001","core":{"user_results":{"result":{"core":{"screen_name":"ada"}}}},"legacy":{"full_text":"acme","created_at":1764165550}}`,
		`{"rest_id":1861000000000000002,"core":{"user_results":{"result":{"core":{"screen_name":"ada"}}}},"legacy":{"full_text":"acme"}}`,
		`{"rest_id":"1861000000000000003","core":{"user_results":{"result":{"core":{"screen_name":{"text":"bob"}},"legacy":{"screen_name":"bob"}}}},"legacy":{"full_text":"acme","created_at":"Thu Nov 26 14:05:00 +0000 2026"}}`,
		`{"rest_id":"1861000000000000004","core":{"user_results":{"result":{"core":{"screen_name":"cy"}}}},"legacy":{"full_text":["acme"]}}`))
	if err != nil {
		t.Fatalf("parseSearch: %v", err)
	}
	if len(pg.tweets) != 2 || pg.tweets[0].ID != "1861000000000000001" || !pg.tweets[0].PostedAt.IsZero() ||
		pg.tweets[1].ID != "1861000000000000003" || pg.tweets[1].Handle != "bob" || pg.tweets[1].PostedAt.IsZero() {
		t.Fatalf("tweets %+v; want the first without its date and the third by its legacy handle", pg.tweets)
	}
}

// An answer without the search's timeline (x moved or renamed it) is not
// an empty search: it is refused, so the search fails visibly rather
// than being read as "nothing found" on every pass, each phrase recorded
// as read and no post ever sent. An empty timeline (instructions: []) is
// x's own "nothing".
func TestParseRefusesAnAnswerWithoutTheTimeline(t *testing.T) {
	for _, body := range []string{
		`{}`,
		`{"data":{}}`,
		`{"data":{"search_by_raw_query":{"search_timeline":{"timeline":{}}}}}`,
		`{"data":{"search_by_raw_query":{"search_timeline":{"timeline":{"instructions":null}}}}}`,
		`{"data":{"search_by_raw_query":{"search_timeline_v2":{"timeline":{"instructions":[{"entries":[]}]}}}}}`,
		`{"data":"moved"}`,
	} {
		if _, err := parseSearch([]byte(body)); err == nil {
			t.Errorf("%s: read as a search answer", body)
		}
		p := &browser.Page{URL: "https://x.com/search?q=acme&f=live", Status: 200,
			Answers: []browser.Answer{{URL: "https://x.com/i/api/graphql/q/SearchTimeline", Status: 200, Body: []byte(body)}}}
		if sig, _, _ := classify(p, time.Now()); sig.OK() {
			t.Errorf("%s: classified as a normal answer", body)
		}
	}
	if pg, err := parseSearch([]byte(`{"data":{"search_by_raw_query":{"search_timeline":{"timeline":{"instructions":[]}}}}}`)); err != nil || len(pg.tweets) != 0 {
		t.Errorf("an empty timeline: %+v, %v", pg, err)
	}
}

// A search answer that is JSON but not the timeline is reported without
// its body: the server reads a body for a block or captcha page's words
// (core/health's markers), and x's JSON holds people's posts, one of
// which may speak of a captcha or a checkpoint. Reported with it, a
// changed shape read as captcha_html and paused the account until a new
// session was uploaded, which would not have helped. Its error code
// still goes.
func TestAJSONAnswerWithoutTheTimelineIsReportedWithoutItsBody(t *testing.T) {
	body := `{"data":{"search_by_raw_query":{"search_results":[{"full_text":"had to solve a captcha, then /checkpoint/ again"}]}}}`
	p := &browser.Page{URL: "https://x.com/search?q=acme&f=live", Status: 200,
		Answers: []browser.Answer{{URL: "https://x.com/i/api/graphql/q/SearchTimeline", Status: 200, Body: []byte(body)}}}
	sig, _, _ := classify(p, time.Now())
	if sig.OK() || sig.Body != "" {
		t.Errorf("signal %+v; want a failed read without the answer's posts", sig)
	}
	p.Answers[0].Body = []byte(`{"errors":[{"code":88,"message":"Rate limit exceeded"}]}`)
	if sig, _, _ := classify(p, time.Now()); sig.Code != 88 {
		t.Errorf("an answer's error: signal %+v", sig)
	}
	p.Answers[0].Body = []byte(`<html><body>Just a moment... challenge-platform</body></html>`)
	if sig, _, _ := classify(p, time.Now()); sig.Body == "" {
		t.Errorf("a page that is not JSON goes with its start, for the server to name: %+v", sig)
	}
}
