package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/earshothq/earshot/core"
)

// quietLog is the log of tests that look at answers only.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// readKeys knows one API key, svc_api_read, with the default scope
// (read).
var readKeys = keyOf{"svc_api_read": {ID: "k1", OwnerID: "o1", Kind: core.APIKey}}

// respond is h's answer to one request: auth is its Authorization header
// (none when empty) and body, when not nil, is sent as JSON.
func respond(h http.Handler, method, target, auth string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
