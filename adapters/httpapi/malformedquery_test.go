package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A query string net/url cannot read whole is refused 400, not read
// without the pairs it could not: `min_score=9%` dropped the floor (and
// answered unscored matches), `limit=1;x` the limit (a page of 25).
func TestMalformedQueryRefused(t *testing.T) {
	decoders := map[string]func(context.Context, *http.Request) (any, error){
		"/api/v1/matches": decodeListMatches, "/api/v1/matches/export": decodeExport, "/api/v1/trends": decodeTrends,
	}
	for _, c := range []struct{ path, query string }{
		{"/api/v1/matches", "limit=1&min_score=9%"},
		{"/api/v1/matches", "limit=%zz"},
		{"/api/v1/matches", "limit=1;x"},
		{"/api/v1/matches/export", "format=csv&platform=x%"},
		{"/api/v1/trends", "days=90;"},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		r.URL.RawQuery = c.query
		_, err := decoders[c.path](context.Background(), r)
		if Status(err) != 400 || core.KindOf(err).Code() != "invalid_request" {
			t.Errorf("%s?%s: %v, want 400 invalid_request", c.path, c.query, err)
		}
	}
}
