package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// fakeFilteredPhrases keeps one phrase, checks filters as app.Phrases
// does (core), and records what the transport handed it.
type fakeFilteredPhrases struct {
	p       core.Phrase
	added   *core.PhraseFilters
	status  *string
	changed *core.PhraseFiltersChange
}

func (f *fakeFilteredPhrases) AddWithFilters(_ context.Context, owner, phrase, platform, community string, fs core.PhraseFilters, _ string) (core.Phrase, bool, error) {
	f.added = &fs
	p, err := core.NewPhrase(owner, phrase, platform, community)
	if err != nil {
		return core.Phrase{}, false, err
	}
	if p.Filters, err = core.NewPhraseFilters(fs); err != nil {
		return core.Phrase{}, false, err
	}
	p.ID, p.LastCheckedAt = "p1", time.UnixMilli(1_700_000_000_000)
	f.p = p
	return p, false, nil
}

func (f *fakeFilteredPhrases) Update(_ context.Context, _, id string, status *string, ch core.PhraseFiltersChange) (core.Phrase, error) {
	f.status, f.changed = status, &ch
	if id != f.p.ID {
		return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	checked, err := ch.Check()
	if err != nil {
		return core.Phrase{}, err
	}
	f.p.Filters = f.p.Filters.With(checked)
	if status != nil {
		f.p.Status = core.PhraseStatus(*status)
	}
	return f.p, nil
}

func (f *fakeFilteredPhrases) Get(_ context.Context, _, id string) (core.Phrase, error) {
	if id != f.p.ID {
		return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	return f.p, nil
}
func (f *fakeFilteredPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return []core.Phrase{f.p}, nil
}
func (f *fakeFilteredPhrases) Delete(context.Context, string, string) error { return nil }
func (f *fakeFilteredPhrases) Plan(context.Context, string) (core.Plan, error) {
	return core.Plan{}, nil
}

func phraseAPI(t *testing.T, svc PhraseService) *httptest.Server {
	t.Helper()
	keys := keyOf{"svc_api_w": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWritePhrases}}}
	srv := httptest.NewServer(New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Keys: keys, Limiter: unlimited{}, Phrases: svc}))
	t.Cleanup(srv.Close)
	return srv
}

// The filter fields go in on create and update and come out on every
// phrase record: normalised, and shown empty on a phrase without them.
// Bad values answer invalid_parameter naming the field; a field left out
// of an update is not handed on as a change.
func TestPhraseFilterFields(t *testing.T) {
	f := &fakeFilteredPhrases{}
	srv := phraseAPI(t, f)

	// A phrase without filters answers the spec's fields alone.
	status, body := send(t, srv, "POST", "/api/v1/keywords", "svc_api_w", `{"phrase":"acme","platform":"x"}`)
	if status != 201 || len(body["data"].(map[string]any)) != 8 || !reflect.DeepEqual(*f.added, core.PhraseFilters{}) {
		t.Fatalf("a phrase without filters: %d %v (service got %+v)", status, body, f.added)
	}
	for _, k := range []string{"id", "phrase", "platform", "community", "status", "matches", "lastCheckedAt", "lastSource"} {
		if _, ok := body["data"].(map[string]any)[k]; !ok {
			t.Fatalf("the spec's field %s is missing: %v", k, body)
		}
	}

	status, body = send(t, srv, "POST", "/api/v1/keywords", "svc_api_w", `{"phrase":"acme","platform":"x",
		"exclude":["Hiring","hiring"," free  trial"],"require":["price"],"excludeAuthors":["@Bot"],"excludeCommunities":["r/Jobs"],
		"minLikes":3,"minComments":1,"titleOnly":true}`)
	want := map[string]any{"exclude": []any{"Hiring", "free trial"}, "require": []any{"price"}, "excludeAuthors": []any{"Bot"},
		"excludeCommunities": []any{"jobs"}, "minLikes": 3.0, "minComments": 1.0, "titleOnly": true}
	if status != 201 || !hasAll(body["data"], want) {
		t.Fatalf("a phrase with filters: %d %v", status, body)
	}

	// An update of one field keeps the rest; status may come with it.
	// Each filter field is there only while it filters something.
	status, body = send(t, srv, "PATCH", "/api/v1/keywords/p1", "svc_api_w", `{"require":[],"minLikes":null,"status":"paused"}`)
	want["require"] = nil
	if status != 200 || !hasAll(body["data"], want) || body["data"].(map[string]any)["status"] != "paused" {
		t.Fatalf("PATCH require: %d %v", status, body)
	}
	if f.changed.Require == nil || f.changed.MinLikes != nil || f.changed.Exclude != nil || *f.status != "paused" {
		t.Fatalf("the service was handed %+v, status %v", f.changed, f.status)
	}
	status, body = send(t, srv, "PATCH", "/api/v1/keywords/p1", "svc_api_w", `{"titleOnly":false}`)
	want["titleOnly"] = nil
	if status != 200 || !hasAll(body["data"], want) || f.status != nil {
		t.Fatalf("PATCH titleOnly alone: %d %v", status, body)
	}

	before := f.p
	for _, c := range []struct{ method, path, body, message string }{
		{"PATCH", "/api/v1/keywords/p1", `{}`, "status is required: listening or paused (or, to change the filters, one of exclude, require, excludeAuthors, excludeCommunities, minLikes, minComments, titleOnly)"},
		{"PATCH", "/api/v1/keywords/p1", `{"exclude":null}`, "status is required: listening or paused (or, to change the filters, one of exclude, require, excludeAuthors, excludeCommunities, minLikes, minComments, titleOnly)"},
		{"PATCH", "/api/v1/keywords/p1", `{"exclude":"jobs"}`, "exclude must be of type array of strings"},
		{"PATCH", "/api/v1/keywords/p1", `{"exclude":[1]}`, "exclude must be of type array of strings"},
		{"PATCH", "/api/v1/keywords/p1", `{"minLikes":1.5}`, "minLikes must be of type integer"},
		{"PATCH", "/api/v1/keywords/p1", `{"titleOnly":"yes"}`, "titleOnly must be of type boolean"},
		{"PATCH", "/api/v1/keywords/p1", `{"excludeAuthor":["x"]}`, "unknown field excludeAuthor"},
		{"PATCH", "/api/v1/keywords/p1", `{"status":"paused","minComments":-1}`, "minComments must be a whole number from 0 to 1000000"},
		{"PATCH", "/api/v1/keywords/p1", `{"require":["ok",""]}`, "require entry 2 must not be empty"},
		{"PATCH", "/api/v1/keywords/p1", `{"excludeCommunities":["no spaces"]}`, "excludeCommunities entry 1 must be a subreddit name of 3 to 21 letters, digits or underscores"},
		{"POST", "/api/v1/keywords", `{"phrase":"b","platform":"x","exclude":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "exclude holds at most 20 entries, got 21"},
		{"POST", "/api/v1/keywords", `{"phrase":"b","platform":"x","minLikes":1000001}`, "minLikes must be a whole number from 0 to 1000000"},
	} {
		status, body := send(t, srv, c.method, c.path, "svc_api_w", c.body)
		e, _ := body["error"].(map[string]any)
		if status != 400 || e["code"] != "invalid_parameter" || e["message"] != c.message {
			t.Errorf("%s %s: %d %v; want 400 invalid_parameter %q", c.method, c.body, status, body, c.message)
		}
	}
	if !reflect.DeepEqual(f.p, before) {
		t.Fatalf("refused requests changed the phrase: %+v, was %+v", f.p, before)
	}
	if status, body := send(t, srv, "PATCH", "/api/v1/keywords/nope", "svc_api_w", `{"minLikes":1}`); status != 404 || errorCode(body) != "not_found" {
		t.Fatalf("PATCH of an unknown phrase: %d %v", status, body)
	}
}

// hasAll reports whether the record holds every key of want with its
// value, and none whose value in want is nil.
func hasAll(record any, want map[string]any) bool {
	m, ok := record.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range want {
		got, there := m[k]
		if v == nil && there || v != nil && !reflect.DeepEqual(got, v) {
			return false
		}
	}
	return true
}

// FuzzDecodePhraseFilters throws arbitrary bodies at the phrase update
// decoder and checks what it hands on as core checks it: a body either
// fails with a 4xx kind, or its filters are refused as invalid_parameter,
// or they come out within the bounds (at most 20 entries a list, each
// 1 to 100 characters of UTF-8 without control characters, minimums 0
// to 1,000,000) and pass the check again unchanged.
func FuzzDecodePhraseFilters(f *testing.F) {
	for _, s := range []string{
		`{"exclude":["jobs"]}`, `{"require":["a","A"," a "]}`, `{"excludeAuthors":["u/","@x","/u/Y"]}`, `{"excludeCommunities":["r/ab","/r/saas/"]}`,
		`{"minLikes":1000000,"minComments":0,"titleOnly":true}`, `{"minLikes":-1}`, `{"exclude":[null]}`, `{"exclude":["\u0000"]}`,
		`{"exclude":["a\tb\u00a0c"],"status":"paused"}`, `{"require":[1,2]}`, `{"titleOnly":null,"exclude":null}`, "{\"exclude\":[\"\xff\"]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("PATCH", "/api/v1/keywords/x", strings.NewReader(body))
		v, err := decodePatchPhrase(context.Background(), r)
		if err != nil {
			if s := Status(err); s < 400 || s >= 500 {
				t.Fatalf("body %q: status %d for %v", body, s, err)
			}
			return
		}
		ch, err := v.(patchPhraseRequest).change().Check()
		if err != nil {
			if !core.IsKind(err, core.KindInvalid) {
				t.Fatalf("body %q: %v", body, err)
			}
			return
		}
		got := core.PhraseFilters{}.With(ch)
		for _, l := range [][]string{got.Exclude, got.Require, got.ExcludeAuthors, got.ExcludeCommunities} {
			if len(l) > core.MaxFilterEntries {
				t.Fatalf("body %q: %d entries", body, len(l))
			}
			for _, e := range l {
				if n, err := core.NormalizePhrase(e); err != nil || n != e {
					t.Fatalf("body %q: entry %q passed, not as a phrase would (%q, %v)", body, e, n, err)
				}
			}
		}
		if got.MinLikes < 0 || got.MinLikes > core.MaxFilterCount || got.MinComments < 0 || got.MinComments > core.MaxFilterCount {
			t.Fatalf("body %q: minimums %d, %d", body, got.MinLikes, got.MinComments)
		}
		if again, err := core.NewPhraseFilters(got); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("body %q: checked again %+v, %v; was %+v", body, again, err, got)
		}
	})
}
