package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A query parameter given twice is refused 400 invalid_parameter naming
// it, on every route that reads parameters, rather than read as its first
// value: `limit=5&limit=50` answered a page of 5.
func TestRepeatedParameterRefused(t *testing.T) {
	decoders := map[string]func(context.Context, *http.Request) (any, error){
		"/api/v1/matches": decodeListMatches, "/api/v1/matches/export": decodeExport, "/api/v1/trends": decodeTrends,
	}
	for _, c := range []struct{ path, query, name string }{
		{"/api/v1/matches", "limit=5&limit=50", "limit"},
		{"/api/v1/matches", "platform=x&platform=reddit", "platform"},
		{"/api/v1/matches", "min_score=10&min_score=90", "min_score"},
		{"/api/v1/matches", "before=1763737465123.456&before=1763737465123.457", "before"},
		{"/api/v1/matches", "q=a&q=b", "q"},
		{"/api/v1/matches/export", "format=csv&format=jsonl", "format"},
		{"/api/v1/matches/export", "format=csv&before=5&before=6", "before"},
		{"/api/v1/trends", "days=30&days=90", "days"},
		{"/api/v1/trends", "keywordId=a&keywordId=b", "keywordId"},
	} {
		_, err := decoders[c.path](context.Background(), httptest.NewRequest("GET", c.path+"?"+c.query, nil))
		want := c.name + " is given 2 times: send it once"
		if Status(err) != 400 || core.KindOf(err).Code() != "invalid_parameter" || core.Message(err) != want {
			t.Errorf("%s?%s: %v, want invalid_parameter %q", c.path, c.query, err, want)
		}
	}
	// Once each, the same parameters are read as before.
	if _, err := decodeListMatches(context.Background(), httptest.NewRequest("GET", "/api/v1/matches?limit=5&platform=x&min_score=10&before=5&q=a", nil)); err != nil {
		t.Errorf("each parameter once: %v", err)
	}
}
