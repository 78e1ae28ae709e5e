package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// title, postedAt and community reach ingest whether every row is a post
// or some row has the wrong shape (which is dropped, the others kept).
// Members the server does not know are ignored, at the top and in a
// post, so a helper newer than the server still gets its posts in.
func TestDecodeIngestKeepsTitleTimeCommunity(t *testing.T) {
	posted := 1767225600123.456
	want := core.IngestPost{ExternalID: "t3_a", AuthorName: "ada", Body: []string{"acme"}, URL: "https://www.reddit.com/r/saas/comments/a/",
		Likes: 2, Comments: 1, Title: "Acme?", PostedAt: &posted, Community: "r/SaaS"}
	post := `{"externalId":"t3_a","authorName":"ada","body":["acme"],"url":"https://www.reddit.com/r/saas/comments/a/","likes":2,"comments":1,` +
		`"title":"Acme?","postedAt":1767225600123.456,"community":"r/SaaS","views":7,"flair":{"text":"q"}}`
	for name, body := range map[string]string{
		"every row a post":         `{"platform":"reddit","client":"helper/2","posts":[` + post + `]}`,
		"a row of the wrong shape": `{"platform":"reddit","client":"helper/2","posts":[` + post + `,{"likes":"many"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/ingest", strings.NewReader(body))
			v, err := decodeIngest(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			got := v.(ingestRequest)
			if got.platform != "reddit" || len(got.posts) == 0 || !reflect.DeepEqual(got.posts[0], want) {
				t.Fatalf("decodeIngest = %q %+v; want reddit %+v", got.platform, got.posts, want)
			}
		})
	}
	// null is "not given", as for the spec's fields.
	r := httptest.NewRequest("POST", "/ingest", strings.NewReader(`{"platform":"x","posts":[{"title":null,"postedAt":null,"community":null}]}`))
	v, err := decodeIngest(context.Background(), r)
	if err != nil || !reflect.DeepEqual(v.(ingestRequest).posts, []core.IngestPost{{}}) {
		t.Fatalf("nulls: %+v, %v", v, err)
	}
}

// records keeps every log record's level and message.
type records struct {
	levels []slog.Level
	msgs   []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.levels = append(r.levels, rec.Level)
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// A deployment without a proxy says so once, when the helper endpoints
// start; each GET /proxy then answers 503 as the spec says, which is the
// answer by design and no failure: its request line is debug, not a
// warning an operator would see on every helper start.
func TestProxyUnsetIsNoWarningPerCall(t *testing.T) {
	rec := &records{}
	log := slog.New(rec)
	h := NewHelper(HelperConfig{Logger: log}, helperKeys, &fakeIngest{}, nil)
	srv := RequestLog(log, func(string, string, int, time.Duration) {}, h)
	if len(rec.msgs) != 1 || rec.levels[0] != slog.LevelInfo || !strings.Contains(rec.msgs[0], "proxy") {
		t.Fatalf("at start: %q at %v; want one info line about the proxy", rec.msgs, rec.levels)
	}
	for range 3 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/proxy", nil)
		r.Header.Set("Authorization", "Bearer svc_ingest_one")
		srv.ServeHTTP(w, r)
		var body errorBody
		if w.Code != http.StatusServiceUnavailable || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error.Code != "service_unavailable" {
			t.Fatalf("GET /proxy = %d %s; want 503 service_unavailable", w.Code, w.Body)
		}
	}
	for i, l := range rec.levels[1:] {
		if l > slog.LevelDebug {
			t.Errorf("per call: %q at %v; want debug", rec.msgs[i+1], l)
		}
	}

	// A proxy set: nothing said at start, and a 503 that is a failure
	// (not this one) stays a warning, as before.
	rec2 := &records{}
	NewHelper(HelperConfig{Logger: slog.New(rec2), ProxyURL: "http://u:p@127.0.0.1:3128"}, helperKeys, &fakeIngest{}, nil)
	if len(rec2.msgs) != 0 {
		t.Fatalf("with a proxy, at start: %q", rec2.msgs)
	}
	var buf bytes.Buffer
	fail := RequestLog(slog.New(slog.NewTextHandler(&buf, nil)), func(string, string, int, time.Duration) {},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	fail.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if !strings.Contains(buf.String(), "level=WARN") {
		t.Fatalf("another 503: %q; want a warning", buf.String())
	}
}

// Every helper route is in the OpenAPI document, with its request and
// answer, and everything the document puts at the site's root is a
// helper route (TestOpenAPIHelperExtensions checks each one's key).
func TestOpenAPIDocumentsHelperRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	h := NewHelper(HelperConfig{}, nil, nil, nil)
	h.HandleAccountStatus(nil)
	routes := map[string]bool{"POST /account-status": true}
	for _, r := range h.routes() {
		routes[r.method+" "+r.path] = true
	}
	for route := range routes {
		method, path, _ := strings.Cut(route, " ")
		raw, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s is not documented", route)
			continue
		}
		var op struct {
			Parameters  []json.RawMessage          `json:"parameters"`
			RequestBody json.RawMessage            `json:"requestBody"`
			Responses   map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			t.Fatal(route, err)
		}
		if op.Responses["200"] == nil || op.Responses["401"] == nil {
			t.Errorf("%s: responses %v; want 200 and 401 at least", route, reflect.ValueOf(op.Responses).MapKeys())
		}
		if method == "POST" && op.RequestBody == nil {
			t.Errorf("%s: no request body", route)
		}
		if method == "GET" && path != "/proxy" && len(op.Parameters) == 0 {
			t.Errorf("%s: no platform parameter", route)
		}
	}
	for path, ops := range doc.Paths {
		if strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		for method := range ops {
			if method != "parameters" && !routes[strings.ToUpper(method)+" "+path] {
				t.Errorf("%s %s is documented but no helper route", method, path)
			}
		}
	}
}
