package legacymock

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

func TestMissingStateFileStartsSeededAndWritesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mock-state.json")
	c := newClient(t, Config{StatePath: path})
	if n := len(c.must(200, "GET", "/accounts", nil).list("accounts")); n != 2 {
		t.Errorf("seeded accounts: %d", n)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the seeded state was not written: %v", err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion || len(st.Communities) == 0 {
		t.Errorf("state file: %v, %+v", err, st.Version)
	}
}

func TestStateSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	acc := c.must(201, "POST", "/accounts", map[string]any{"platform": "x"}).obj("account")["id"].(string)
	c.must(200, "PATCH", "/accounts/"+acc, map[string]any{"lastIssue": "captcha_html", "connectedAt": "2024-06-01T00:00:00Z"})
	lid := c.must(201, "POST", "/listings", newListing()).obj("listing")["listingId"].(string)
	c.must(200, "PATCH", "/listings/"+lid+"/status", map[string]any{"status": "active"})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "chair rental", "platform": "x"})
	c.must(200, "POST", "/communities/"+fbPending+"/accept", nil)
	c.must(201, "POST", "/communities/resolve-reddit", map[string]any{"name": "r/barbers"})
	key := c.must(201, "POST", "/api-keys", map[string]any{"name": "ci", "scopes": validScopes()}).obj("apiKey")
	c.must(200, "PUT", "/brand", acmeBrand())
	c.must(200, "DELETE", "/keywords/keyword-1714650300000-schapp", nil)

	before := map[string]string{}
	for _, p := range []string{"/accounts", "/listings", "/keywords", "/communities", "/api-keys", "/brand"} {
		before[p] = c.must(200, "GET", p, nil).raw
	}

	// A second server on the same file sees exactly the same state.
	c2 := newClient(t, Config{StatePath: path})
	for p, raw := range before {
		if got := c2.must(200, "GET", p, nil).raw; got != raw {
			t.Errorf("%s after restart:\n got %s\nwant %s", p, got, raw)
		}
	}
	if k := c2.must(200, "GET", "/api-keys", nil).list("apiKeys"); len(k) != 1 || k[0]["prefix"] != key["prefix"] {
		t.Errorf("key after restart %v", k)
	}
	c2.must(200, "POST", "/accounts/"+acc+"/resolve", nil)
}

func TestCorruptStateFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{StatePath: path}); err == nil {
		t.Fatal("New accepted a corrupt state file")
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Error("a corrupt state file must be left alone")
	}
}

func TestUnwritableStatePathFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "state.json")
	if _, err := New(Config{StatePath: path}); err == nil {
		t.Fatal("New accepted a state path it cannot write")
	}
}

func TestStateFileLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	c := newClient(t, Config{StatePath: filepath.Join(dir, "state.json")})
	for i := 0; i < 5; i++ {
		c.must(201, "POST", "/accounts", map[string]any{"platform": "reddit"})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the state file", len(entries))
	}
}

func TestParallelWritersKeepStateConsistent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	const writers, each = 6, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				c.must(201, "POST", "/keywords", map[string]any{"phrase": fmt.Sprintf("phrase %d-%d", w, i), "platform": "x"})
				c.must(201, "POST", "/listings", newListing())
				c.do("GET", "/communities", nil)
				c.must(200, "PATCH", "/accounts/"+redditAccount, map[string]any{"label": fmt.Sprintf("writer %d", w)})
			}
		}(w)
	}
	wg.Wait()
	kws := c.must(200, "GET", "/keywords?platform=x", nil).list("keywords")
	lst := c.must(200, "GET", "/listings", nil).list("listings")
	if len(kws) != 3+writers*each || len(lst) != 2+writers*each {
		t.Fatalf("lost writes: %d keywords, %d listings", len(kws), len(lst))
	}
	ids := map[string]bool{}
	for _, l := range lst {
		ids[l["listingId"].(string)] = true
	}
	if len(ids) != len(lst) {
		t.Error("duplicate listing ids")
	}
	// The file holds the same state.
	c2 := newClient(t, Config{StatePath: path})
	if n := len(c2.must(200, "GET", "/listings", nil).list("listings")); n != len(lst) {
		t.Errorf("file has %d listings, memory %d", n, len(lst))
	}
}

// --state pointed at a file the mock did not write is refused, and the
// file stays exactly as it was: no start, no overwrite.
func TestForeignStateFileIsRefusedUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"tsconfig":           `{"compilerOptions": {"strict": true}, "include": ["src"]}`,
		"fields that fit":    `{"version": 1, "accounts": [], "keywords": []}`,
		"legacy plus extras": `{"version": 1, "accounts": [], "apiKeys": [], "brand": null, "communities": [], "keywords": [], "listings": [], "name": "x"}`,
		"another format":     `{"format": "something-else", "version": 1}`,
		"newer version":      `{"format": "earshot-mock-state", "version": 99}`,
		"array":              `[1, 2, 3]`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tsconfig.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := New(Config{StatePath: path}); err == nil {
				t.Fatal("New adopted a file the mock did not write")
			}
			if data, _ := os.ReadFile(path); string(data) != content {
				t.Errorf("the file was changed to %s", data)
			}
		})
	}
}

// The file the mock writes carries the marker; a file written before the
// marker existed (version 1 and exactly the mock's keys) is still read,
// and gets the marker on the next change.
func TestStateFileMarker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	c.must(201, "POST", "/keywords", map[string]any{"phrase": "chair rental", "platform": "x"})
	data, _ := os.ReadFile(path)
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil || top["format"] != stateFormat {
		t.Fatalf("state file without the marker: %v, %.80s", err, data)
	}
	delete(top, "format")
	legacy, _ := json.Marshal(top)
	if err := os.WriteFile(path, legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	c2 := newClient(t, Config{StatePath: path})
	if kws := c2.must(200, "GET", "/keywords?platform=x", nil).list("keywords"); find(kws, "phrase", "chair rental") == nil {
		t.Fatal("the legacy file's keyword is lost")
	}
	c2.must(201, "POST", "/keywords", map[string]any{"phrase": "walk-in queue", "platform": "x"})
	data, _ = os.ReadFile(path)
	if err := json.Unmarshal(data, &top); err != nil || top["format"] != stateFormat {
		t.Fatalf("the rewritten legacy file has no marker: %v", err)
	}
}

// No request grows the state by more than a little: a text or a list
// over the field bounds is refused, and so is a change that adds more
// than maxGrowth however it is spread, leaving the file as it was.
func TestStateGrowthIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	before, _ := os.ReadFile(path)

	c.fails(400, fmt.Sprintf("title is longer than %d bytes", maxString), "POST", "/listings", with(newListing(), "title", strings.Repeat("x", maxString+1)))
	long := map[string]any{"identity": map[string]any{"name": "Slotwise"}, "voice": map[string]any{"dos": make([]string, maxItems+1)}}
	c.fails(400, fmt.Sprintf("dos has more than %d items", maxItems), "PUT", "/brand", long)
	c.fails(400, fmt.Sprintf("a field name in channels is longer than %d bytes", maxString), "PUT", "/brand",
		map[string]any{"identity": map[string]any{"name": "Slotwise"}, "channels": map[string]any{strings.Repeat("k", maxString+1): true}})
	// Each text and the list within bounds, the whole far past maxGrowth.
	dos := make([]string, maxItems)
	for i := range dos {
		dos[i] = strings.Repeat("d", 4<<10)
	}
	r := c.must(413, "PUT", "/brand", map[string]any{"identity": map[string]any{"name": "Slotwise"}, "voice": map[string]any{"dos": dos}})
	if !strings.Contains(r.errMsg(), "one request may add at most 64 KB") {
		t.Errorf("413 message %q", r.errMsg())
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("refused changes grew the state file from %d to %d bytes", len(before), len(after))
	}
	if b := c.must(200, "GET", "/brand", nil).raw; strings.Contains(b, "dddd") {
		t.Error("a refused brand is served")
	}
	// Within bounds all is as before.
	c.must(200, "PUT", "/brand", map[string]any{"identity": map[string]any{"name": "Slotwise"}, "voice": map[string]any{"dos": dos[:8]}})
}

func TestCheckGrowth(t *testing.T) {
	for _, tc := range []struct {
		before, after int
		ok            bool
	}{
		{1000, 1000 + maxGrowth, true},
		{1000, 1001 + maxGrowth, false},
		{maxState - 10, maxState + 10, false},
		{maxState + 100, maxState + 50, true}, // shrinking a full state is always allowed
		{5000, 10, true},
	} {
		if err := checkGrowth(tc.before, tc.after); (err == nil) != tc.ok {
			t.Errorf("checkGrowth(%d, %d) = %v", tc.before, tc.after, err)
		}
	}
}

// A deeply nested body is refused as it is read. The state file is
// indented, so each level costs a line as wide as its depth: a 10 KB brand
// 5000 levels deep was encoded into some 240 MB, under the store's lock,
// before the growth bound could refuse it.
func TestDeepNestingIsRefusedCheaply(t *testing.T) {
	c := newClient(t, Config{})
	const depth = 5000
	body := `{"identity":{"name":"x","deep":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.fails(400, "", "PUT", "/brand", body)
	runtime.ReadMemStats(&after)
	if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 32 {
		t.Errorf("a %d-byte body cost %d MB", len(body), mb)
	}
	if r := c.must(200, "GET", "/brand", nil); r.body["brand"] != nil {
		t.Errorf("a refused brand is stored: %.200s", r.raw)
	}
}

// bigJoinedState is a state near its 8 MB bound: 12000 accounts and
// 12000 groups joined through the last of them.
func bigJoinedState(tb testing.TB) *state {
	st, err := seedState()
	if err != nil {
		tb.Fatal(err)
	}
	const n = 12000
	for i := range n {
		st.Accounts = append(st.Accounts, account{ID: fmt.Sprintf("account-1714557600000-%06d", i), Platform: "facebook", Label: "Facebook"})
	}
	last := st.Accounts[len(st.Accounts)-1].ID
	for i := range n {
		c := ref{platform: "facebook", id: fmt.Sprintf("fb-group%06d", i), url: "https://www.facebook.com/groups/g/", name: "g"}.newRow()
		id := last
		c.JoinState, c.AccountID = joinPending, &id
		st.Communities = append(st.Communities, c)
	}
	if data, err := encodeState(st); err != nil || len(data) > maxState {
		tb.Fatalf("the state is %d bytes (%v), past maxState", len(data), err)
	}
	return st
}

func TestPruneKeepsLiveJoinsOfABigState(t *testing.T) {
	st := bigJoinedState(t)
	st.prune()
	if c := st.findCommunity("fb-group000000"); c.JoinState != joinPending || c.AccountLabel == nil || *c.AccountLabel != "Facebook" {
		t.Errorf("prune changed a live join: %+v", c)
	}
}

// prune runs before every read and write, under the store's one lock, so
// it should cost far less than the encoding of the state every write
// pays: prune/encode is the ratio to watch (a scan of the accounts per
// join made it about 4.5 at this size; one index by id, about 0.01).
// peak-heap-MB is the process's over the loop, the state included.
func BenchmarkPruneAgainstEncode(b *testing.B) {
	st := bigJoinedState(b)
	var prune, encode time.Duration
	stop := peakmem.MeasureHeap(b)
	for b.Loop() {
		start := time.Now()
		st.prune()
		prune += time.Since(start)
		start = time.Now()
		if _, err := encodeState(st); err != nil {
			b.Fatal(err)
		}
		encode += time.Since(start)
	}
	stop()
	b.ReportMetric(float64(prune)/float64(encode), "prune/encode")
}

// A body the field bounds refuse is refused as it is read, before it is
// built into values: a 1 MB list of zeros was decoded into half a
// million values (some 56 MB) only to be refused for its length, and an
// object of a hundred thousand fields was stored in the brand's free-form
// parts, or built and dropped elsewhere.
func TestWideBodyIsRefusedCheaply(t *testing.T) {
	c := newClient(t, Config{})
	n := (maxBody - 100) / 2
	list := `{"identity":{"name":"x"},"a":[` + strings.Repeat("0,", n-1) + `0]}`
	var sb strings.Builder
	sb.WriteString(`{"identity":{"name":"x"},"b":{`)
	for i := 0; sb.Len() < maxBody-200; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"%x":0`, i)
	}
	sb.WriteString("}}")
	for name, tt := range map[string]struct{ body, msg string }{
		"list":   {list, fmt.Sprintf("a has more than %d items", maxItems)},
		"object": {sb.String(), fmt.Sprintf("b has more than %d fields", maxItems)},
	} {
		for _, route := range []string{"/brand", "/listings"} {
			method := map[string]string{"/brand": "PUT", "/listings": "POST"}[route]
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			c.fails(400, tt.msg, method, route, tt.body)
			runtime.ReadMemStats(&after)
			if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 16 {
				t.Errorf("%s to %s: a %d-byte body cost %d MB", name, route, len(tt.body), mb)
			}
		}
	}
	if r := c.must(200, "GET", "/brand", nil); r.body["brand"] != nil {
		t.Errorf("a refused brand is stored: %.200s", r.raw)
	}
}
