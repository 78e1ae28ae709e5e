package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// secretSeen is an Authenticator that remembers the secret it was asked
// about and refuses it, as the store does an unknown key.
type secretSeen struct{ secret *string }

func (s secretSeen) Authenticate(_ context.Context, kind core.KeyKind, secret string) (core.Key, error) {
	*s.secret = secret
	return core.Key{}, core.Errorf(core.KindUnauthorized, "invalid %s key", kind)
}

// FuzzDecodeRemaining throws arbitrary bodies, query strings and header
// values at the decoders the other Fuzz functions leave out: webhooks
// (add, patch), the export, the helper's platform query and cookie jar,
// and the headers every route reads (Authorization, X-Request-Id). Seeds
// are docs/api.md's request shapes for those routes and hostile ones.
// Whatever comes, a decoder takes it or refuses it with a 4xx kind; a
// taken cookie jar is at most core.MaxCookieJar bytes; the key looked up
// is the header's secret trimmed, and a refusal never repeats it; a
// caller's request id is echoed only when it is short and plain, and a
// path is logged with no token in it.
func FuzzDecodeRemaining(f *testing.F) {
	for _, s := range [][3]string{
		{`{"url":"https://hooks.example.com/earshot","min_score":70,"platforms":["reddit","x"]}`, "", "Bearer ek_" + strings.Repeat("A", 43)},
		{`{"active":false,"min_score":null}`, "format=csv&platform=reddit", "bearer  ek_x "},
		{`{"url":1}`, "format=jsonl&limit=5", "Basic dTpw"},
		{`[{"name":"sid","value":"v","domain":".reddit.com"}]`, "platform=x&platform=x", "Bearer"},
		{`# Netscape HTTP Cookie File` + "\n.x.com\tTRUE\t/\tTRUE\t0\tauth_token\tv", "platform=facebook", "req-123"},
		{"", "format=csv&minScore=70&q=%22no+show%22", ""},
		{`{"platforms":[]}`, "format=%zz", "Bearer \x00"},
		{strings.Repeat("x", 1000), "platform=%E2%80%AE", strings.Repeat("a", 65)},
	} {
		f.Add(s[0], s[1], s[2])
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, body, rawQuery, header string) {
		for _, v := range decodeOrRefuse(t, body, rawQuery,
			decodeAddWebhook, decodePatchWebhook, decodeExport, decodePlatformQuery, decodeSessionJar, decodeRetry, decodeUndoApply, decodeID) {
			if j, ok := v.(sessionJar); ok && len(j.jar) > core.MaxCookieJar {
				t.Fatalf("cookie jar of %d bytes taken", len(j.jar))
			}
		}

		if strings.ContainsAny(header, "\r\n\x00") {
			return // net/http refuses such a header before any handler sees it
		}
		r := httptest.NewRequest("GET", "/api/v1/keywords", nil)
		r.Header.Set("Authorization", header)
		asked := "\x00unasked"
		_, err := bearerKey(context.Background(), r, secretSeen{&asked}, core.APIKey)
		if !core.IsKind(err, core.KindUnauthorized) {
			t.Fatalf("Authorization %q: %v", header, err)
		}
		scheme, secret, ok := strings.Cut(header, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			if asked != strings.TrimSpace(secret) {
				t.Fatalf("Authorization %q looked up %q", header, asked)
			}
		} else if asked != "\x00unasked" {
			t.Fatalf("Authorization %q looked up %q", header, asked)
		}
		if s := strings.TrimSpace(secret); len(s) > 3 && strings.Contains(err.Error(), s) && asked == "\x00unasked" && !inOwnWords(r.Context(), scheme, s) {
			t.Fatalf("refusal of %q repeats it: %v", header, err)
		}

		r = httptest.NewRequest("GET", "/app/confirm/"+strings.Repeat("A", 43), nil)
		r.Header.Set("X-Request-Id", header)
		w := httptest.NewRecorder()
		RequestLog(log, func(string, string, int, time.Duration) {}, http.NotFoundHandler()).ServeHTTP(w, r)
		id := w.Header().Get("X-Request-Id")
		if !validRequestID(id) || id != header && validRequestID(header) {
			t.Fatalf("X-Request-Id %q answered as %q", header, id)
		}
		if p := loggedPath("/app/confirm/" + header); strings.Contains(p, header) && core.WellFormedToken(header) {
			t.Fatalf("token path logged as %q", p)
		}
	})
}

// inOwnWords reports whether the refusal of another secret under the same
// scheme holds s too: then s is part of the refusal's own words ("arer"
// in "Bearer"), not repeated from the header.
func inOwnWords(ctx context.Context, scheme, s string) bool {
	r := httptest.NewRequest("GET", "/api/v1/keywords", nil)
	r.Header.Set("Authorization", scheme+" \x01")
	asked := ""
	_, err := bearerKey(ctx, r, secretSeen{&asked}, core.APIKey)
	return err != nil && strings.Contains(err.Error(), s)
}
