package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The state file of a helper that has watched many reddit communities
// keeps, after a pass, the checkpoints of the communities watched now
// and in the last week only: those of a community left weeks ago, and
// those of a state file older than the record of when each community was
// watched, are dropped, as x's and facebook's of phrases no longer
// listened to are. The other platforms' keys stay.
func TestHelperStateForgetsRedditCommunitiesLeftLongAgo(t *testing.T) {
	t.Parallel()
	proxy, forwarded := loopProxy(t)
	pu, _ := url.Parse(proxy.URL)
	pu.User = url.UserPassword("op", "s3cret")
	// Only the helper reads: the server's own reddit reader waits a day.
	s := start(t, "EARSHOT_PROXY_URL="+pu.String(), "EARSHOT_REDDIT_INTERVAL=24h")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "golang"}).want(t, 201, "")
	reddit := newFakeReddit(t)
	reddit.add("t3", "p1", "golang", "Any alternative to Acme?", "we need one", time.Now().Unix()-60)

	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	now := time.Now().Unix()
	watched, _ := json.Marshal(map[string]int64{"golang": now - 3600, "rust": now - 2*86400, "python": now - 30*86400})
	old := map[string]map[string]string{s.URL: {
		"reddit:new:golang": "1767225000", "reddit:comments:golang": "1767225000",
		"reddit:new:rust": "1767225000", "reddit:comments:rust": "1767225000",
		"reddit:new:python": "1767225000", "reddit:comments:python": "1767225000",
		"reddit:new:legacy": "1767225000", "reddit:comments:legacy": "1767225000",
		"reddit:watched": string(watched), "x:search:acme": "1790",
	}}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(state, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(dir), "EARSHOT_HELPER_REDDIT_URL="+reddit.srv.URL, "EARSHOT_HELPER_REDDIT_PACE=1ms",
		"EARSHOT_HELPER_PLATFORMS=reddit", "EARSHOT_HELPER_STATE="+state)
	if code, logs := runHelper(t, env, s.URL, s.IngestKey); code != 0 {
		t.Fatalf("earshot helper --once exited %d:\n%s", code, logs)
	}
	if forwarded.Load() != 2 || reddit.direct.Load() != 0 {
		t.Fatalf("proxy forwarded %d requests, %d went direct; want 2 and 0", forwarded.Load(), reddit.direct.Load())
	}
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	kept := got[s.URL]
	for k, want := range map[string]bool{
		"reddit:new:golang": true, "reddit:comments:golang": true,
		"reddit:new:rust": true, "reddit:comments:rust": true,
		"reddit:new:python": false, "reddit:comments:python": false,
		"reddit:new:legacy": false, "reddit:comments:legacy": false,
		"x:search:acme": true,
	} {
		if _, ok := kept[k]; ok != want {
			t.Errorf("after the pass %s is kept: %t, want %t", k, ok, want)
		}
	}
	if v := kept["reddit:new:golang"]; v == "1767225000" {
		t.Errorf("r/golang's checkpoint did not move with its post: %s", v)
	}
	if t.Failed() {
		t.Log(fmt.Sprint(kept))
	}
}
