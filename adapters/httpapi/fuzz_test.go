package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// FuzzDecodeBodies throws arbitrary bodies at the JSON decoders of the
// write routes: each either decodes or fails with a 4xx kind, never
// panics, and never reports an internal error; and decodeJSON answers
// every body into every route's request as it did when it read the name
// of an unknown field from encoding/json's error text
// (checkDecodeJSON).
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range []string{
		`{"phrase":"acme","platform":"x"}`, `{"phrase":"acme","platform":"reddit","community":"r/saas"}`,
		`{"status":"paused"}`, `{"phrase":5}`, `{"phrase":null,"platform":null}`, `[]`, `{`, ``, `null`,
		`{"phrase":"a","platform":"x","extra":{"deep":[[[[]]]]}}`, "{\"phrase\":\"\x00\"}", `{"phrase":"a"} {}`,
		`{"read":true}`, `{"ids":["a","b"],"archived":false}`, `{"ids":null,"starred":"yes"}`, `{"ids":[1]}`,
		`{"x":1,"phrase":5}`, `{"phrase":5,"x":1}`, `{"PHRASE":"a","Platform":"x"}`, `{"ph\u0072ase":1}`, "{\"\xff\":1}",
		`{"url":"https://x.com","min_score":1e400,"platforms":["x"]}`, `{"active":true,"min_score":50.5}`,
		`{"platform":"x","status":429,"retryAfter":"30","viaProxy":true}`, `{"platform":"x","READ":"yes"}`,
		`{"phrase":"a","platform":"x","exclude":["b"],"minLikes":2,"titleOnly":true}`, `{"exclude":[1],"status":"paused"}`,
		`{"excludeAuthors":"x","require":null}`, `{"minComments":1e3,"excludeCommunities":[]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkDecodeJSON(t, []byte(body))
		for _, dec := range []func(context.Context, *http.Request) (any, error){decodeAddPhrase, decodePatchPhrase, decodePatchTriage, decodeBulkTriage} {
			r := httptest.NewRequest("POST", "/api/v1/keywords/x", strings.NewReader(body))
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxBody)
			r.SetPathValue("id", "x")
			_, err := dec(context.Background(), r)
			if err == nil {
				continue
			}
			if s := Status(err); s < 400 || s >= 500 {
				t.Fatalf("body %q: status %d for %v", body, s, err)
			}
			if core.KindOf(err) == core.KindInternal {
				t.Fatalf("body %q: internal error %v", body, err)
			}
		}
	})
}

// requestTypes make an empty request of each type decodeJSON reads.
var requestTypes = []func() any{
	func() any { return new(addPhraseRequest) },
	func() any { return new(patchPhraseRequest) },
	func() any { return new(triageBody) },
	func() any {
		return new(struct {
			IDs *[]string `json:"ids"`
			triageBody
		})
	},
	func() any { return new(addWebhookRequest) },
	func() any { return new(patchWebhookRequest) },
	func() any { return new(accountStatusJSON) },
}

// checkDecodeJSON fails t unless decodeJSON reads body into each request
// type as referenceDecodeJSON does: the same error, or the same value.
func checkDecodeJSON(t *testing.T, body []byte) {
	t.Helper()
	for _, newRequest := range requestTypes {
		got, want := newRequest(), newRequest()
		r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		err, wantErr := decodeJSON(r, got, maxBody), referenceDecodeJSON(body, want, maxBody)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("body %q into %T: %v, want %v", body, got, err, wantErr)
		case err != nil:
			if core.KindOf(err) != core.KindOf(wantErr) || core.Message(err) != core.Message(wantErr) {
				t.Fatalf("body %q into %T: %v, want %v", body, got, err, wantErr)
			}
		case !reflect.DeepEqual(got, want):
			t.Fatalf("body %q: %+v, want %+v", body, got, want)
		}
	}
}

// referenceDecodeJSON is decodeJSON as it was when it took the name of an
// unknown field from encoding/json's error text.
func referenceDecodeJSON(body []byte, v any, limit int) error {
	if len(body) > limit {
		return core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", limit)
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	if !json.Valid(t) {
		return core.Errorf(core.KindInvalidJSON, "request body is not valid JSON")
	}
	if t[0] != '{' {
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return typeError(te, v)
		}
		var field string
		if _, scanErr := fmt.Sscanf(err.Error(), "json: unknown field %q", &field); scanErr == nil {
			return core.Errorf(core.KindInvalid, "unknown field %s", field)
		}
		return core.Errorf(core.KindInvalidJSON, "request body is not valid JSON")
	}
	return nil
}

// The table of bodies every request type is read from, as encoding/json
// read them before.
func TestDecodeJSONAsBefore(t *testing.T) {
	for _, body := range []string{
		`{"phrase":"acme","platform":"x"}`, `{"x":1,"phrase":5}`, `{"phrase":5,"x":1}`, `{"PHRASE":"a","Platform":"x","xx":null}`,
		`{"ph\u0072ase":"a","\u00e9":1}`, "{\"\xff\":1}", `{"ſtatus":"paused","Status":"listening"}`, `{"status":1,"status":"paused"}`,
		`{"ids":[1]}`, `{"ids":"a","read":"yes"}`, `{"READ":"yes"}`, `{"ids":["a"],"read":true,"extra":[]}`,
		`{"url":"https://x.com","min_score":1e400,"platforms":["x"]}`, `{"active":true,"min_score":50.5}`, `{"platforms":[null,"x"],"min_score":-0}`,
		`{"platform":"x","status":429,"retryAfter":"30","viaProxy":true}`, `{"platform":"x","status":429,"code":1,"subcode":2,"location":"l","body":"b","noResponse":false,"retryAfter":5}`,
		`{"a":1,"b":2}`, `{}`, `{"phrase":"a"} {}`, `[]`, ` `, strings.Repeat(" ", maxBody+1),
	} {
		checkDecodeJSON(t, []byte(body))
	}
}

// FuzzDecodeQuery throws arbitrary query strings at GET /matches.
func FuzzDecodeQuery(f *testing.F) {
	for _, s := range []string{"limit=5", "limit=0", "before=1763737465123.456", "min_score=50&platform=x", "before=1e308", "limit=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/api/v1/matches", nil)
		r.URL.RawQuery = q
		v, err := decodeListMatches(context.Background(), r)
		if err != nil {
			if Status(err) != 400 {
				t.Fatalf("query %q: %v", q, err)
			}
			return
		}
		_ = v
	})
}

// FuzzDecodeIngest throws arbitrary bodies at the ingest decoder: a body
// either decodes to at most 100 posts or fails with a 4xx kind; a body
// whose posts array encoding/json reads as more than 100 posts fails;
// and the streaming reader answers every body exactly as encoding/json
// reading it whole does (referenceIngest).
func FuzzDecodeIngest(f *testing.F) {
	for _, s := range []string{
		`{"platform":"x","posts":[{"externalId":"1","body":["a"],"url":"https://x.com/1"}]}`,
		`{"platform":"x","posts":[{"externalId":1,"body":"a"},"no",null,{}]}`, `{"platform":null}`, `{"posts":{}}`, `[]`, `{`, ``,
		floodBody(400, "", `"platform":"x",`), floodBody(400, `{"likes":1.5},`, `"platform":"x",`),
		floodBody(400, `"no",`, `"platform":"x","poſts":{"posts":[]},`), floodBody(400, "[],", `"POSTS":null,`),
		`{"platform":"x","posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}],"posts":[]}`,
		`{"platform":"x","posts":[{"likes":1e2,"comments":2.0},{"likes":1.5}],"posts":[{"likes":null,"comments":-1e1}]}`,
		`{"platform":"x","posts":[],"unreadPhrases":["acme","Acme  CRM",""],"UNREADPHRASES":null}`,
		`{"platform":"facebook","unreadPhrases":["a",7,["b"]],"unreadPhrases":["c"]}`,
		`{"platform":"reddit","unreadCommunities":["golang"],"unreadPhrases":{"a":1},"unreadCommunities":"sales"}`,
		`{"platform":"x","unreadPhrases":[` + strings.Repeat(`"a",`, core.MaxUnreadPhrases) + `"a"]}`,
	} {
		f.Add(s)
	}
	for _, tc := range ingestBodies {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkReadIngest(t, []byte(body))
		checkBatchLimit(t, []byte(body))
		r := httptest.NewRequest("POST", "/ingest", strings.NewReader(body))
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxHelperBody)
		v, err := decodeIngest(context.Background(), r)
		if err != nil {
			if s := Status(err); s < 400 || s >= 500 {
				t.Fatalf("body %q: status %d for %v", body, s, err)
			}
			return
		}
		if n := len(v.(ingestRequest).posts); n > core.MaxIngestBatch {
			t.Fatalf("decoded %d posts", n)
		}
		got := v.(ingestRequest)
		checkNames(t, []byte(body), "unreadCommunities", core.MaxUnreadCommunities, got.unread.Names, got.unread.Invalid, got.unread.Over)
		checkNames(t, []byte(body), "unreadPhrases", core.MaxUnreadPhrases, got.unreadPhrases.Texts, got.unreadPhrases.Invalid, got.unreadPhrases.Over)
	})
}

// checkNames fails t unless a list of names (unreadCommunities,
// unreadPhrases) decoded from body is what encoding/json reads there,
// whole: the last member of that name whatever its case; null or absent
// is none; an array of at most limit strings is those strings; a longer
// one is over, with no names kept; anything else is invalid.
func checkNames(t *testing.T, body []byte, field string, limit int, names []string, invalid, over bool) {
	t.Helper()
	if len(names) > limit {
		t.Fatalf("body %.300q: %d %s kept, over the limit of %d", body, len(names), field, limit)
	}
	var whole map[string]json.RawMessage
	if json.Unmarshal(body, &whole) != nil {
		return
	}
	// encoding/json keeps the last member whose name folds to the field's.
	var raw json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		dec.Decode(&v)
		if k, _ := tok.(string); strings.EqualFold(k, field) {
			raw = v
		}
	}
	var want []string
	wantInvalid, wantOver := false, false
	var list []any
	switch err := json.Unmarshal(raw, &list); {
	case raw == nil:
	case err != nil:
		wantInvalid = true
	default:
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				wantInvalid = true
			}
			want = append(want, s)
		}
		if wantInvalid {
			want = nil
		} else if len(want) > limit {
			want, wantOver = nil, true
		}
	}
	// Past an element that is not a string, what was kept is not read.
	if invalid != wantInvalid || (!invalid && (over != wantOver || !slices.Equal(names, want))) {
		t.Fatalf("body %.300q: %s = %q invalid %t over %t; encoding/json reads %q invalid %t over %t", body, field, names, invalid, over, want, wantInvalid, wantOver)
	}
}

// checkBatchLimit fails t if encoding/json finds more than 100 posts in
// the posts field of body and decodeIngest does not refuse the batch.
func checkBatchLimit(t *testing.T, body []byte) {
	t.Helper()
	var whole struct{ Posts []json.RawMessage }
	if json.Unmarshal(body, &whole) != nil {
		return
	}
	if len(whole.Posts) > core.MaxIngestBatch {
		r := httptest.NewRequest("POST", "/ingest", bytes.NewReader(body))
		if _, err := decodeIngest(context.Background(), r); !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("body %q of %d posts: %v, want the batch limit", body, len(whole.Posts), err)
		}
	}
}
