package main

import (
	"strings"
	"testing"
)

// A helper's title, postedAt and community reach the match the API
// serves: a phrase found only in the title matches, the time is kept, and
// a reddit post matches only the phrases of its own community. A
// deployment without a proxy says so once at start, and GET /proxy's 503
// is no warning on each call.
func TestIngestTitleTimeCommunityEndToEnd(t *testing.T) {
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=3", "EARSHOT_LOG_LEVEL=info")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "saas"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "crm"}).want(t, 201, "")

	r := s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "client": "a newer helper", "posts": []any{
		map[string]any{"externalId": "1", "body": []string{"which tool do you use?"}, "url": "https://x.com/ada/status/1",
			"title": "Acme or not?", "postedAt": 1767225600123.456, "views": 40},
	}}).want(t, 200, "").JSON(t)
	if r["ingested"] != 1.0 || r["skipped"] != 0.0 {
		t.Fatalf("x batch: %v", r)
	}
	r = s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "reddit", "posts": []any{
		map[string]any{"externalId": "t3_a", "body": []string{"acme for a small team?"}, "url": "https://www.reddit.com/r/SaaS/comments/a/", "community": "r/SaaS"},
		map[string]any{"externalId": "t3_b", "body": []string{"acme, no community named"}, "url": "https://www.reddit.com/comments/b/"},
	}}).want(t, 200, "").JSON(t)
	if r["ingested"] != 1.0 || r["skipped"] != 1.0 {
		t.Fatalf("reddit batch: %v", r)
	}

	ms := s.call("GET", "/api/v1/matches?platform=x", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(ms) != 1 {
		t.Fatalf("x matches: %v", ms)
	}
	post := ms[0].(map[string]any)["post"].(map[string]any)
	if post["title"] != "Acme or not?" || post["postedAt"] != 1767225600123.456 {
		t.Fatalf("x match's post: %v", post)
	}
	ms = s.call("GET", "/api/v1/matches?platform=reddit", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	// One match: r/crm's phrase of the same words is not the post's.
	if len(ms) != 1 {
		t.Fatalf("reddit matches: %v; want t3_a on r/saas's phrase only", ms)
	}
	if post := ms[0].(map[string]any)["post"].(map[string]any); post["url"] != "https://www.reddit.com/r/SaaS/comments/a/" {
		t.Fatalf("reddit match's post: %v", post)
	}

	for range 3 {
		s.call("GET", "/proxy", s.IngestKey, nil).want(t, 503, "service_unavailable")
	}
	// A request logged after them: once its line is in, theirs are too.
	s.call("GET", "/ingest-fields-test-done", "", nil)
	waitLog(t, s, `"path":"/ingest-fields-test-done"`)
	logs := s.logs.String()
	if n := strings.Count(logs, "EARSHOT_PROXY_URL is unset"); n != 1 {
		t.Errorf("the missing proxy is said %d times, want once:\n%s", n, logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"path":"/proxy"`) && strings.Contains(line, `"level":"WARN"`) {
			t.Errorf("GET /proxy without a proxy logged a warning: %s", line)
		}
	}
}
