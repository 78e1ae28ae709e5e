package reddit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
	"github.com/earshothq/earshot/server"
)

// realServer runs `earshot serve` in this process on loopback (SQLite in
// a temporary folder, the operator's proxy at proxyURL) and returns its
// address and the first owner's API and ingest keys.
func realServer(t *testing.T, proxyURL string) (site, apiKey, ingestKey string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"EARSHOT_ADDR":         "127.0.0.1:0",
		"EARSHOT_DATABASE_URL": "sqlite://" + filepath.Join(dir, "earshot.db"),
		"EARSHOT_PROXY_URL":    proxyURL,
		// The server's own reddit reader reaches nothing and waits long:
		// only the helper reads here.
		"EARSHOT_REDDIT_BASE_URL":           "http://127.0.0.1:1",
		"EARSHOT_REDDIT_INTERVAL":           "24h",
		"EARSHOT_PLAN_PHRASES_PER_PLATFORM": "10",
	}
	cfg, err := server.ConfigFlags(flag.NewFlagSet("serve", flag.ContinueOnError), func(k string) string { return env[k] })()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer // written by the start hook, read after Start returns
	var s *server.Site
	a := server.Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, fx.Populate(&s))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	api := regexp.MustCompile(`API key \(every scope\): (svc_api_\S+)`).FindStringSubmatch(out.String())
	ingest := regexp.MustCompile(`ingest key:\s+(svc_ingest_\S+)`).FindStringSubmatch(out.String())
	if api == nil || ingest == nil {
		t.Fatalf("no bootstrap keys in %q", out.String())
	}
	return s.URL(), api[1], ingest[1]
}

// keyword is a phrase as GET /api/v1/keywords lists it.
type keyword struct {
	ID            string  `json:"id"`
	Community     string  `json:"community"`
	LastCheckedAt float64 `json:"lastCheckedAt"`
	LastSource    string  `json:"lastSource"`
}

func apiCall(t *testing.T, method, u, key string, body any, into any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, u, resp.StatusCode, raw)
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s %s: %v: %s", method, u, err, raw)
		}
	}
}

// The helper against the real server, through a real forward proxy: a
// pass that reddit refuses r/secretclub in (private) names it unread, so
// the server records the read of the phrases of r/golang and r/sales
// only, and r/secretclub's phrase keeps its lastCheckedAt; once it
// reopens, the pass that reads it alone (a day later) records it.
func TestClosedCommunityKeepsItsLastCheckedAtOnTheServer(t *testing.T) {
	proxy := newProxy(t, "op", "s3cret")
	pu, _ := url.Parse(proxy.srv.URL)
	pu.User = url.UserPassword("op", "s3cret")
	site, apiKey, ingestKey := realServer(t, pu.String())
	for _, c := range []string{"golang", "sales", "secretclub"} {
		apiCall(t, "POST", site+"/api/v1/keywords", apiKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": c}, nil)
	}
	keywords := func() map[string]keyword {
		t.Helper()
		var page struct{ Data []keyword }
		apiCall(t, "GET", site+"/api/v1/keywords", apiKey, nil, &page)
		out := map[string]keyword{}
		for _, k := range page.Data {
			out[k.Community] = k
		}
		return out
	}
	before := keywords()

	rd := newReddit(t)
	rd.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "Any alternative to Acme?", text: "asking", created: 1767225500})
	closed := true
	rd.mu.Lock()
	rd.answer = func(w http.ResponseWriter, r *http.Request) bool {
		rd.mu.Lock()
		refuse := closed && strings.Contains(r.URL.Path, "secretclub")
		rd.mu.Unlock()
		if refuse {
			privateAnswer(w, r)
		}
		return refuse
	}
	rd.mu.Unlock()
	clk := &clock{now: time.Now()}
	c, err := helper.NewClient(site, ingestKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := helper.OpenState(filepath.Join(t.TempDir(), "state.json"), site)
	if err != nil {
		t.Fatal(err)
	}
	runner := &helper.Runner{Client: c, State: st, Now: clk.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Readers: []helper.Reader{&reddit.Reader{BaseURL: rd.srv.URL, Pace: -1, Now: clk.Now, Sleep: clk.Sleep, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}}

	if err := runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if proxy.forwarded.Load() == 0 {
		t.Fatal("nothing went through the proxy")
	}
	after := keywords()
	for _, open := range []string{"golang", "sales"} {
		if k := after[open]; k.LastSource != "helper" || k.LastCheckedAt <= before[open].LastCheckedAt {
			t.Errorf("r/%s, read: %+v (before %+v); want lastSource helper and a later lastCheckedAt", open, k, before[open])
		}
	}
	if k := after["secretclub"]; k.LastSource == "helper" || k.LastCheckedAt != before["secretclub"].LastCheckedAt {
		t.Errorf("r/secretclub, refused: %+v (before %+v); want it as it was", k, before["secretclub"])
	}

	// It reopens; a day later the helper reads it alone, and says so.
	rd.mu.Lock()
	closed = false
	rd.mu.Unlock()
	clk.Sleep(context.Background(), reddit.ClosedRetry)
	if err := runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k := keywords()["secretclub"]; k.LastSource != "helper" || k.LastCheckedAt <= before["secretclub"].LastCheckedAt {
		t.Errorf("r/secretclub, reopened and read: %+v; want lastSource helper and a later lastCheckedAt", k)
	}
}
