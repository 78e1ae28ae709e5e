package httpapi

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// pagedMatches is a MatchService whose export yields pages of matches,
// checking q as app.Matches does. Before each page after the first it
// waits on next, when next is set; after the pages it fails with fail,
// when fail is set.
type pagedMatches struct {
	pages [][]core.Match
	next  chan struct{}
	fail  error
	got   *ports.MatchQuery
}

func (p pagedMatches) List(_ context.Context, _ string, q ports.MatchQuery) (ports.MatchPage, error) {
	*p.got = q
	_, err := core.ParseSearch(q.Q)
	return ports.MatchPage{}, err
}
func (p pagedMatches) Get(context.Context, string, string) (core.Match, error) {
	return core.Match{}, core.Errorf(core.KindNotFound, "match not found")
}
func (p pagedMatches) Export(_ context.Context, _ string, q ports.MatchQuery) (iter.Seq2[[]core.Match, error], error) {
	*p.got = q
	if _, err := core.ParseSearch(q.Q); err != nil {
		return nil, err
	}
	return func(yield func([]core.Match, error) bool) {
		for i, page := range p.pages {
			if i > 0 && p.next != nil {
				<-p.next
			}
			if !yield(page, nil) {
				return
			}
		}
		if p.fail != nil {
			yield(nil, p.fail)
		}
	}, nil
}

func exportPages(pages, per int) [][]core.Match {
	out := make([][]core.Match, pages)
	for i := range out {
		for j := range per {
			n := i*per + j
			out[i] = append(out[i], core.Match{ID: fmt.Sprint("m", n), Phrase: "acme", Platform: core.X,
				CreatedAt: time.UnixMicro(1_767_225_600_000_000 - int64(n)).UTC(),
				Post:      core.Post{Author: "=ada", Text: fmt.Sprintf("post %d, \"quoted\"\nnext line", n)}})
		}
	}
	return out
}

func exportAPI(t *testing.T, m MatchService, l ports.RateLimiter) *httptest.Server {
	t.Helper()
	api := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Keys: keyOf{"svc_api_all": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead}}},
			Matches: m, Limiter: l})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv
}

func getExport(t *testing.T, srv *httptest.Server, query string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/matches/export?"+query, nil)
	req.Header.Set("Authorization", "Bearer svc_api_all")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// The export is a dated attachment in the format asked for, with the
// list's filters and search passed on; CSV has a header and a row per
// match, JSON Lines a record per line.
func TestExportRoute(t *testing.T) {
	var got ports.MatchQuery
	srv := exportAPI(t, pagedMatches{pages: exportPages(3, 4), got: &got}, unlimited{})
	resp := getExport(t, srv, "format=csv&platform=x&min_score=40&q=acme+-spam&before=1767225600000")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	day := time.Now().UTC().Format("2006-01-02")
	for h, want := range map[string]string{
		"Content-Type":           "text/csv; charset=utf-8",
		"Content-Disposition":    `attachment; filename="earshot-matches-` + day + `.csv"`,
		"X-Content-Type-Options": "nosniff",
		"X-Ratelimit-Remaining":  "59",
	} {
		if v := resp.Header.Get(h); v != want {
			t.Errorf("%s: %q, want %q", h, v, want)
		}
	}
	if got.Platform != core.X || got.MinScore == nil || *got.MinScore != 40 || got.Q != "acme -spam" || got.Before != 1767225600000 {
		t.Errorf("the service was asked %+v", got)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(rows) != 13 || rows[0][0] != "id" || rows[12][0] != "m11" || rows[1][7] != "'=ada" || rows[1][9] != "post 0, \"quoted\"\nnext line" {
		t.Fatalf("%d rows, %v:\n%q", len(rows), err, rows)
	}

	resp = getExport(t, srv, "format=jsonl")
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson; charset=utf-8" {
		t.Errorf("jsonl Content-Type %q", ct)
	}
	sc, n := bufio.NewScanner(resp.Body), 0
	for ; sc.Scan(); n++ {
		var m record.Match
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.ID != fmt.Sprint("m", n) {
			t.Fatalf("line %d: %s, %v", n+1, sc.Bytes(), err)
		}
	}
	if n != 12 {
		t.Fatalf("%d lines", n)
	}
}

// A bad export request is refused in the documented error body before
// anything is written.
func TestExportRefusals(t *testing.T) {
	var got ports.MatchQuery
	srv := exportAPI(t, pagedMatches{pages: exportPages(1, 1), got: &got}, unlimited{})
	for query, want := range map[string]string{
		"":                       "format is required",
		"format=xlsx":            "format must be csv or jsonl",
		"format=csv&limit=10":    "limit does not apply",
		"format=csv&min_score=x": "min_score must be",
		"format=csv&q=-spam":     "q must hold a word",
		"format=csv&q=" + strings.Repeat("a", core.MaxSearchLen+1): "q must be at most",
		"format=csv&q=a+b+c+d+e+f+g+h+i+j+k":                       "q may hold at most",
	} {
		resp := getExport(t, srv, query)
		var body errorBody
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 400 ||
			body.Error.Code != "invalid_parameter" || !strings.Contains(body.Error.Message, want) {
			t.Errorf("?%s: %d %+v %v, want invalid_parameter saying %q", query, resp.StatusCode, body, err, want)
		}
		if resp.Header.Get("Content-Disposition") != "" {
			t.Errorf("?%s: refused as an attachment", query)
		}
	}
}

// GET /matches takes q and refuses a bad one in the documented body.
func TestListMatchesSearch(t *testing.T) {
	var got ports.MatchQuery
	srv := exportAPI(t, pagedMatches{got: &got}, unlimited{})
	for q, status := range map[string]int{`"acme crm" -spam`: 200, `"`: 400, "---": 400} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/matches?q="+strings.NewReplacer(" ", "+", `"`, "%22").Replace(q), nil)
		req.Header.Set("Authorization", "Bearer svc_api_all")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status || got.Q != q {
			t.Errorf("q %q: status %d, the service got %q", q, resp.StatusCode, got.Q)
		}
	}
}

// Each page reaches the client before the next is read: the service
// yields the second page only once the client has the first page's
// rows, which a server holding the whole file before sending would
// never give it.
func TestExportStreams(t *testing.T) {
	var got ports.MatchQuery
	next := make(chan struct{})
	srv := exportAPI(t, pagedMatches{pages: exportPages(2, 3), next: next, got: &got}, unlimited{})
	resp := getExport(t, srv, "format=jsonl")
	r := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, fmt.Sprintf(`"id":"m%d"`, i)) {
			t.Fatalf("line %d before the second page: %q, %v", i+1, line, err)
		}
	}
	close(next)
	rest, err := io.ReadAll(r)
	if err != nil || strings.Count(string(rest), "\n") != 3 {
		t.Fatalf("after the second page: %q, %v", rest, err)
	}
}

// A page that fails once the file has begun breaks the transfer: the
// client never takes a cut file for a whole one.
func TestExportFailureBreaksTheTransfer(t *testing.T) {
	var got ports.MatchQuery
	srv := exportAPI(t, pagedMatches{pages: exportPages(2, 3), fail: core.Errorf(core.KindInternal, "database gone"), got: &got}, unlimited{})
	resp := getExport(t, srv, "format=csv")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if body, err := io.ReadAll(resp.Body); err == nil {
		t.Fatalf("the transfer ended cleanly after %d bytes", len(body))
	}
}

// An export is one request against the key's rate limit, however many
// pages it streams.
func TestExportIsOneRequest(t *testing.T) {
	var got ports.MatchQuery
	srv := exportAPI(t, pagedMatches{pages: exportPages(20, 50), got: &got}, ratelimit.NewMemory(nil))
	for i, want := range []string{"59", "58"} {
		resp := getExport(t, srv, "format=csv")
		n, _ := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || n == 0 || resp.Header.Get("X-RateLimit-Remaining") != want {
			t.Fatalf("export %d: status %d, %d bytes, %s left; want %s", i+1, resp.StatusCode, n, resp.Header.Get("X-RateLimit-Remaining"), want)
		}
	}
}
