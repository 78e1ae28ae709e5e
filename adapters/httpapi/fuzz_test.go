package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// FuzzDecodeBodies throws arbitrary bodies at the JSON decoders of the
// write routes: each either decodes or fails with a 4xx kind, never
// panics, and never reports an internal error.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range []string{
		`{"phrase":"acme","platform":"x"}`, `{"phrase":"acme","platform":"reddit","community":"r/saas"}`,
		`{"status":"paused"}`, `{"phrase":5}`, `{"phrase":null,"platform":null}`, `[]`, `{`, ``, `null`,
		`{"phrase":"a","platform":"x","extra":{"deep":[[[[]]]]}}`, "{\"phrase\":\"\x00\"}", `{"phrase":"a"} {}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, dec := range []func(context.Context, *http.Request) (any, error){decodeAddPhrase, decodePatchPhrase} {
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
// and the fast decoder, where it takes a body, agrees with encoding/json.
func FuzzDecodeIngest(f *testing.F) {
	for _, s := range []string{
		`{"platform":"x","posts":[{"externalId":"1","body":["a"],"url":"https://x.com/1"}]}`,
		`{"platform":"x","posts":[{"externalId":1,"body":"a"},"no",null,{}]}`, `{"platform":null}`, `{"posts":{}}`, `[]`, `{`, ``,
		floodBody(400, "", `"platform":"x",`), floodBody(400, `{"likes":1.0},`, `"platform":"x",`),
		floodBody(400, `"no",`, `"platform":"x","poſts":{"posts":[]},`), floodBody(400, "[],", `"POSTS":null,`),
		`{"platform":"x","posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}],"posts":[]}`,
	} {
		f.Add(s)
	}
	for _, tc := range ingestBodies {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkParseIngest(t, []byte(body))
		checkCountPosts(t, []byte(body))
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
	})
}

// checkCountPosts fails t if countPosts, capped at the limit, reads fewer
// posts than encoding/json finds in the posts field of body.
func checkCountPosts(t *testing.T, body []byte) {
	t.Helper()
	var whole struct{ Posts []json.RawMessage }
	if json.Unmarshal(body, &whole) != nil {
		return
	}
	want := min(len(whole.Posts), core.MaxIngestBatch+1)
	if got := countPosts(body); got < want {
		t.Fatalf("body %q: countPosts = %d, encoding/json finds %d posts", body, got, len(whole.Posts))
	}
	if len(whole.Posts) > core.MaxIngestBatch {
		r := httptest.NewRequest("POST", "/ingest", bytes.NewReader(body))
		if _, err := decodeIngest(context.Background(), r); !core.IsKind(err, core.KindInvalid) {
			t.Fatalf("body %q of %d posts: %v, want the batch limit", body, len(whole.Posts), err)
		}
	}
}
