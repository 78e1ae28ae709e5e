package helper_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// routes are a fake deployment's answers to its helper endpoints, by
// path. The shapes are adapters/httpapi's (spec/live-service.md, "Helper
// Ingest API").
type routes map[string]http.HandlerFunc

// plainDeployment answers as a deployment whose owner has one phrase,
// acme, and no session, that needs no proxy and that ingests every post
// of a batch.
var plainDeployment = routes{
	"/proxy": func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"required":false,"proxy":{"server":"http://127.0.0.1:9"}}`)
	},
	"/phrases": func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"phrases":["acme"]}`)
	},
	"/session": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"code":"not_found","message":"no session"}}`)
	},
	"/ingest": func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Posts []json.RawMessage `json:"posts"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		ingested(w, len(b.Posts))
	},
}

// fakeDeployment serves the routes a test names and, for the paths it
// leaves out, plainDeployment's; any other path is 404. It is closed
// when the test ends.
func fakeDeployment(t *testing.T, own routes) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := own[r.URL.Path]
		if !ok {
			h, ok = plainDeployment[r.URL.Path]
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// ingested is POST /ingest's answer to a batch whose n posts were all
// taken.
func ingested(w http.ResponseWriter, n int) {
	fmt.Fprintf(w, `{"accountId":"a1","ingested":%d,"skipped":0}`, n)
}

// newClient is a client of srv with an ingest key.
func newClient(t *testing.T, srv *httptest.Server) *helper.Client {
	t.Helper()
	c, err := helper.NewClient(srv.URL, "svc_ingest_test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newRunner runs readers against srv, with its checkpoints in a fresh
// state file, and reads directly, as plainDeployment's GET /proxy
// allows.
func newRunner(t *testing.T, srv *httptest.Server, readers ...helper.Reader) *helper.Runner {
	t.Helper()
	st, err := helper.OpenState(filepath.Join(t.TempDir(), "state.json"), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &helper.Runner{Client: newClient(t, srv), State: st, Direct: true, Readers: readers}
}
