package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// fakeWindow checks a previewed phrase as app.Window does (core),
// answers one post and one dropped match, and records what the transport
// handed it.
type fakeWindow struct {
	owner, phraseID, setID string
	filters                core.PhraseFilters
	change                 *core.PhraseFiltersChange
}

var (
	windowSeen = time.UnixMilli(1_700_000_000_000).UTC()
	windowPost = core.RecentPost{Seq: 7, OwnerID: "o1", Platform: core.Reddit, Community: "golang", SeenAt: windowSeen,
		Post: core.Post{ExternalID: "t3_a", Author: "ada", Title: "Acme <b>CRM</b>", Text: "we use acme", URL: "https://reddit.com/a", Likes: 2}}
	droppedMatch = core.Match{ID: "m1", Phrase: "acme", Platform: core.Reddit, CreatedAt: windowSeen, Backfilled: true,
		Post: core.Post{ExternalID: "t3_b", Text: "acme is hiring", URL: "https://reddit.com/b"}}
)

func (f *fakeWindow) Preview(_ context.Context, owner, phrase, platform, community string, fs core.PhraseFilters) (ports.Preview, error) {
	f.owner, f.filters = owner, fs
	p, err := core.NewPhrase(owner, phrase, platform, community)
	if err != nil {
		return ports.Preview{}, err
	}
	if p.Filters, err = core.NewPhraseFilters(fs); err != nil {
		return ports.Preview{}, err
	}
	return ports.Preview{Phrase: p, Days: 7, Posts: 1000,
		Window: ports.Finds[core.RecentPost]{Count: 1, Read: 20000, Partial: true, First: []core.RecentPost{windowPost}}}, nil
}

func (f *fakeWindow) PreviewChange(_ context.Context, owner, id string, ch core.PhraseFiltersChange) (ports.Preview, error) {
	f.owner, f.phraseID, f.change = owner, id, &ch
	if id != "p1" {
		return ports.Preview{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	checked, err := ch.Check()
	if err != nil {
		return ports.Preview{}, err
	}
	p := core.Phrase{ID: id, Phrase: "acme", Platform: core.Reddit, Community: "golang"}
	p.Filters = p.Filters.With(checked)
	return ports.Preview{Phrase: p, Existing: true, Archivable: 1,
		Dropped: ports.Finds[core.Match]{Count: 1, Read: 3, First: []core.Match{droppedMatch}}}, nil
}

func (f *fakeWindow) ApplyFilters(_ context.Context, owner, id string) (ports.Applied, error) {
	f.owner, f.phraseID = owner, id
	if id != "p1" {
		return ports.Applied{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	return ports.Applied{Set: core.ArchiveSet{ID: "s1", Matches: 4}, Read: 9}, nil
}

func (f *fakeWindow) UndoApply(_ context.Context, owner, id, set string) (int, error) {
	f.owner, f.phraseID, f.setID = owner, id, set
	if set != "s1" {
		return 0, core.Errorf(core.KindNotFound, "archived set not found")
	}
	return 4, nil
}

func windowAPI(t *testing.T, svc WindowService) *httptest.Server {
	t.Helper()
	keys := keyOf{"svc_api_r": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeRead}}}
	deps := Deps{Keys: keys, Limiter: unlimited{}}
	if svc != nil {
		deps.Window = svc
	}
	srv := httptest.NewServer(New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
	t.Cleanup(srv.Close)
	return srv
}

// A preview takes the create body, filters included, and answers the
// phrase as it would be, what it finds in the window and, for an
// existing phrase, what its changed filters drop; a read key may ask.
func TestWindowPreviewRoutes(t *testing.T) {
	f := &fakeWindow{}
	srv := windowAPI(t, f)
	status, body := send(t, srv, "POST", "/api/v1/keywords/preview", "svc_api_r",
		`{"phrase":"  Acme ","platform":"reddit","community":"r/golang","exclude":["hiring"],"minLikes":2}`)
	if status != 200 || f.owner != "o1" || !reflect.DeepEqual(f.filters, core.PhraseFilters{Exclude: []string{"hiring"}, MinLikes: 2}) {
		t.Fatalf("preview: %d %v (service got %+v)", status, body, f.filters)
	}
	data := body["data"].(map[string]any)
	wantPhrase := map[string]any{"phrase": "Acme", "platform": "reddit", "community": "golang", "exclude": []any{"hiring"}, "minLikes": 2.0}
	if !reflect.DeepEqual(data["phrase"], wantPhrase) {
		t.Fatalf("phrase %v", data["phrase"])
	}
	wantWindow := map[string]any{"on": true, "days": 7.0, "maxPosts": 1000.0, "count": 1.0, "read": 20000.0, "complete": false,
		"posts": []any{map[string]any{"externalId": "t3_a", "platform": "reddit", "community": "golang", "seenAt": 1.7e12,
			"post": map[string]any{"author": "ada", "title": "Acme <b>CRM</b>", "text": "we use acme", "url": "https://reddit.com/a",
				"likes": 2.0, "comments": 0.0, "postedAt": nil}}}}
	if !reflect.DeepEqual(data["window"], wantWindow) {
		t.Fatalf("window %v\nwant %v", data["window"], wantWindow)
	}
	if _, ok := data["dropped"]; ok {
		t.Fatal("a new phrase's preview says what it drops")
	}

	status, body = send(t, srv, "POST", "/api/v1/keywords/p1/preview", "svc_api_r", `{"exclude":["hiring"]}`)
	if status != 200 || f.phraseID != "p1" || f.change.Exclude == nil || f.change.Require != nil {
		t.Fatalf("preview of a change: %d %v (service got %+v)", status, body, f.change)
	}
	dropped := body["data"].(map[string]any)["dropped"].(map[string]any)
	if dropped["count"] != 1.0 || dropped["archivable"] != 1.0 || dropped["complete"] != true || dropped["read"] != 3.0 {
		t.Fatalf("dropped %v", dropped)
	}
	m := dropped["matches"].([]any)[0].(map[string]any)
	if m["id"] != "m1" || m["backfilled"] != true {
		t.Fatalf("dropped match %v", m)
	}
	if status, _ := send(t, srv, "POST", "/api/v1/keywords/p1/preview", "svc_api_r", `{}`); status != 200 || !f.change.IsZero() {
		t.Fatalf("an empty change: %d, %+v", status, f.change)
	}

	for _, c := range []struct {
		path, body    string
		status        int
		code, message string
	}{
		{"/api/v1/keywords/preview", `{"platform":"x"}`, 400, "invalid_parameter", "phrase is required"},
		{"/api/v1/keywords/preview", `{"phrase":"a"}`, 400, "invalid_parameter", "platform is required"},
		{"/api/v1/keywords/preview", `{"phrase":"","platform":"x"}`, 400, "invalid_parameter", ""},
		{"/api/v1/keywords/preview", `{"phrase":"a","platform":"x","exclude":"jobs"}`, 400, "invalid_parameter", "exclude must be of type array of strings"},
		{"/api/v1/keywords/preview", `{"phrase":"a","platform":"x","status":"paused"}`, 400, "invalid_parameter", "unknown field status"},
		{"/api/v1/keywords/preview", `{"phrase":`, 400, "invalid_json", ""},
		{"/api/v1/keywords/p1/preview", `{"status":"paused"}`, 400, "invalid_parameter", "unknown field status"},
		{"/api/v1/keywords/p1/preview", `{"require":[""]}`, 400, "invalid_parameter", "require entry 1 must not be empty"},
		{"/api/v1/keywords/nope/preview", `{}`, 404, "not_found", ""},
	} {
		status, body := send(t, srv, "POST", c.path, "svc_api_r", c.body)
		e, _ := body["error"].(map[string]any)
		if status != c.status || e["code"] != c.code || (c.message != "" && e["message"] != c.message) {
			t.Errorf("POST %s %s: %d %v; want %d %s %q", c.path, c.body, status, body, c.status, c.code, c.message)
		}
	}
}

// Applying a phrase's filters answers the set it archived, and undoing
// it the count restored; an unknown phrase or set is not_found.
func TestApplyFiltersRoutes(t *testing.T) {
	f := &fakeWindow{}
	srv := windowAPI(t, f)
	status, body := send(t, srv, "POST", "/api/v1/keywords/p1/apply-filters", "svc_api_r", "")
	want := map[string]any{"setId": "s1", "archived": 4.0, "read": 9.0, "complete": true}
	if status != 200 || !reflect.DeepEqual(body["data"], want) || f.phraseID != "p1" {
		t.Fatalf("apply: %d %v", status, body)
	}
	status, body = send(t, srv, "POST", "/api/v1/keywords/p1/apply-filters/s1/undo", "svc_api_r", "")
	if status != 200 || !reflect.DeepEqual(body["data"], map[string]any{"setId": "s1", "restored": 4.0}) || f.setID != "s1" || f.phraseID != "p1" {
		t.Fatalf("undo: %d %v", status, body)
	}
	for _, path := range []string{"/api/v1/keywords/nope/apply-filters", "/api/v1/keywords/p1/apply-filters/s2/undo"} {
		if status, body := send(t, srv, "POST", path, "svc_api_r", ""); status != 404 || body["error"].(map[string]any)["code"] != "not_found" {
			t.Errorf("POST %s: %d %v", path, status, body)
		}
	}
	// Other methods on these paths are refused in the documented body,
	// and GET /keywords/{id} still reads a phrase named by any id.
	if status, body := send(t, srv, "GET", "/api/v1/keywords/preview", "svc_api_r", ""); status != 400 || body["error"].(map[string]any)["code"] != "invalid_request" {
		t.Errorf("GET /keywords/preview: %d %v", status, body)
	}
	if status, body := send(t, srv, "DELETE", "/api/v1/keywords/p1/apply-filters", "svc_api_r", ""); status != 400 || body["error"].(map[string]any)["code"] != "invalid_request" {
		t.Errorf("DELETE apply-filters: %d %v", status, body)
	}
}

// A server without the window answers not_found on its routes.
func TestWindowRoutesWithoutWindow(t *testing.T) {
	srv := windowAPI(t, nil)
	for _, path := range []string{"/api/v1/keywords/preview", "/api/v1/keywords/p1/preview", "/api/v1/keywords/p1/apply-filters"} {
		body := `{"phrase":"a","platform":"x"}`
		if path != "/api/v1/keywords/preview" {
			body = `{}`
		}
		if status, out := send(t, srv, "POST", path, "svc_api_r", body); status != 404 {
			t.Errorf("POST %s: %d %v", path, status, out)
		}
	}
}
