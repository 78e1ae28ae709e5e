package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// FuzzDecodeOtherBodies throws arbitrary bodies at the decoders
// FuzzDecodeBodies leaves out (channels, a secret's rotation, a replay
// and its instants, the window's previews, the trends query), seeded
// with the spec's examples (docs/api.md's shapes, as in their route
// tests) and hostile ones. Whatever the body, a decoder takes it or
// refuses it with a 4xx kind, never an internal one; chat_id and the
// replay's instants read the same way.
func FuzzDecodeOtherBodies(f *testing.F) {
	for _, s := range []string{
		`{"kind":"telegram","token":"123:abc","chat_id":-1001234567890,"name":"alerts"}`,
		`{"kind":"slack","url":"https://hooks.slack.com/services/T/B/x","min_score":70,"platforms":["reddit"]}`,
		`{"chat_id":"@channel"}`, `{"chat_id":1e3}`, `{"chat_id":99999999999999999999}`, `{"chat_id":[1]}`,
		`{"from":1767225600000,"to":"2026-11-26T10:00:00Z"}`, `{"from":1e400}`, `{"from":"9999-12-31T23:59:59.999999999+14:00"}`,
		`{"from":-1,"to":null}`, `{"phrase":"acme","platform":"reddit","community":"r/x","exclude":["b"]}`,
		`{"minLikes":-1}`, ``, `null`, `[]`, `{"a":1} {}`,
	} {
		f.Add(s, "")
		f.Add(s, "days=30&keywordId=k")
	}
	f.Add(``, "days=0&days=7")
	f.Add(``, "keywordId=&days=%zz")
	f.Fuzz(func(t *testing.T, body, rawQuery string) {
		for _, v := range decodeOrRefuse(t, body, rawQuery,
			decodeAddChannel, decodePatchChannel, decodeRotate, decodeReplay, decodePreviewPhrase, decodePreviewChange, decodeTrends) {
			if rp, ok := v.(replayRequest); ok {
				for _, raw := range []json.RawMessage{rp.From, rp.To} {
					if _, err := instant("from", raw); err != nil && core.KindOf(err) != core.KindInvalid {
						t.Fatalf("instant %q: %v", raw, err)
					}
				}
			}
		}
		var raw struct {
			ChatID json.RawMessage `json:"chat_id"`
		}
		if json.Unmarshal([]byte(body), &raw) == nil {
			if _, err := chatID(raw.ChatID); err != nil && core.KindOf(err) != core.KindInvalid {
				t.Fatalf("chat_id %q: %v", raw.ChatID, err)
			}
		}
	})
}

// decodeOrRefuse hands each decoder a POST of body with rawQuery and the
// path's id, and fails t unless it takes it or refuses it with a 4xx
// kind, never an internal one; the values taken.
func decodeOrRefuse(t *testing.T, body, rawQuery string, decoders ...func(context.Context, *http.Request) (any, error)) []any {
	t.Helper()
	var taken []any
	for i, dec := range decoders {
		r := httptest.NewRequest("POST", "/api/v1/x", strings.NewReader(body))
		r.URL.RawQuery = rawQuery
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxBody)
		r.SetPathValue("id", "x")
		v, err := dec(context.Background(), r)
		if err != nil {
			if s := Status(err); s < 400 || s >= 500 || core.KindOf(err) == core.KindInternal {
				t.Fatalf("decoder %d, body %q, query %q: status %d for %v", i, body, rawQuery, s, err)
			}
			continue
		}
		taken = append(taken, v)
	}
	return taken
}
