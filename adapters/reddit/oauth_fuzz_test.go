package reddit

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"
)

type tokenAnswer struct {
	status int
	body   string
}

func (a tokenAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

// FuzzTokenAnswer hands the token fetch any answer of reddit's token
// endpoint, seeded with testdata/token.json (reddit's client_credentials
// answer, as documented at github.com/reddit-archive/reddit/wiki/OAuth2)
// and hostile variants, and checks what fetch promises: a token taken
// is one a request can carry in its Authorization header, with a life
// from 0 to 30 days; a refusal's reason never holds the answer, whose
// token or error text could be a secret.
func FuzzTokenAnswer(f *testing.F) {
	good, err := os.ReadFile("testdata/token.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(200), string(good))
	for _, b := range []string{
		`{"error": "invalid_grant"}`,
		`{"access_token": "abc", "token_type": "mac", "expires_in": 3600}`,
		`{"access_token": "abc", "expires_in": 1e300}`,
		`{"access_token": "abc", "expires_in": "-5"}`,
		`{"access_token": "abc", "expires_in": 61}`,
		`{"access_token": "a\nb", "expires_in": 3600}`,
		`{"access_token": "a b\u007f", "expires_in": 3600}`,
	} {
		f.Add(uint16(200), b)
	}
	f.Add(uint16(401), `{"access_token": "secret-in-error"}`)
	f.Fuzz(func(t *testing.T, status uint16, body string) {
		code := int(status)
		if code < 200 || code > 599 {
			code = 200 + code%400
		}
		tk := &tokens{url: "http://127.0.0.1:1/api/v1/access_token", id: "id", secret: "shh", ua: "t", now: time.Now,
			client: &http.Client{Transport: tokenAnswer{code, body}}}
		token, life, err := tk.fetch(context.Background())
		if err != nil {
			if len(body) >= 8 && strings.Contains(err.Error(), body) {
				t.Errorf("the refusal %q repeats the answer", err)
			}
			return
		}
		if token == "" || !httpguts.ValidHeaderFieldValue("Bearer "+token) {
			t.Errorf("token %q cannot be sent", token)
		}
		if life <= 0 || life > 30*24*time.Hour {
			t.Errorf("life %v", life)
		}
	})
}
