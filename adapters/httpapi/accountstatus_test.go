package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// FuzzDecodeAccountStatus throws arbitrary bodies at the decoder of POST
// /account-status: a body either decodes to a signal of a known platform
// whose fields are the body's, or fails with a 4xx kind; it never panics
// and never reads past its bound.
func FuzzDecodeAccountStatus(f *testing.F) {
	for _, s := range []string{
		`{"platform":"facebook","status":400,"code":190,"subcode":459}`,
		`{"platform":"x","noResponse":true,"viaProxy":true}`,
		`{"platform":"reddit","status":302,"location":"https://www.reddit.com/login","body":"<html>"}`,
		`{"platform":"facebook","status":"200"}`, `{"platform":null}`, `{"platform":"x","extra":1}`,
		`{"platform":"x","status":1e99}`, `{"platform":"x","status":200.5}`, `[]`, `{`, ``, `null`,
		`{"platform":"x"} {"platform":"facebook"}`, "{\"platform\":\"x\",\"body\":\"\\u0000\\ud800\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/account-status", strings.NewReader(body))
		v, err := decodeAccountStatus(context.Background(), r)
		if err != nil {
			if s := Status(err); s < 400 || s >= 500 {
				t.Fatalf("body %q: status %d for %v", body, s, err)
			}
			return
		}
		sig := v.(health.Signal)
		if !sig.Platform.Valid() {
			t.Fatalf("body %q decoded to platform %q", body, sig.Platform)
		}
		if len(body) > maxAccountStatusBody {
			t.Fatalf("a body of %d bytes was decoded", len(body))
		}
		// What was decoded is what the body says: encoding/json agrees.
		var want accountStatusJSON
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("body %q decoded but encoding/json refuses it: %v", body, err)
		}
		if sig.Status != want.Status || sig.Code != want.Code || sig.Subcode != want.Subcode ||
			sig.Location != want.Location || sig.Body != want.Body || sig.NoResponse != want.NoResponse || sig.ViaProxy != want.ViaProxy {
			t.Fatalf("body %q decoded to %+v", body, sig)
		}
		if !utf8.ValidString(sig.Body) || !utf8.ValidString(sig.Location) {
			t.Fatalf("body %q left invalid UTF-8 in a string", body)
		}
		// The service's check decides the rest, never with a panic.
		if err := health.CheckSignal(sig); err != nil && Status(err) != 400 {
			t.Fatalf("body %q: CheckSignal %v", body, err)
		}
		_ = health.Classify(sig)
	})
}

type reportFunc func(ctx context.Context, ownerID string, s health.Signal) (health.Status, error)

func (f reportFunc) Report(ctx context.Context, ownerID string, s health.Signal) (health.Status, error) {
	return f(ctx, ownerID, s)
}

// The route takes the owner from the ingest key only, and renders the
// view with issue and accountId null when there is none.
func TestAccountStatusRoute(t *testing.T) {
	var gotOwner string
	var gotSig health.Signal
	svc := reportFunc(func(_ context.Context, owner string, s health.Signal) (health.Status, error) {
		gotOwner, gotSig = owner, s
		if s.Status == 418 {
			return health.Status{}, core.Errorf(core.KindPlanLimit, "no room")
		}
		return health.StatusOf("acc-1", s.Platform, true, health.Record{}), nil
	})
	h := NewHelper(HelperConfig{}, keyOf{"svc_ingest_a": {ID: "k", OwnerID: "owner-a", Kind: core.IngestKey}}, nil, nil)
	h.HandleAccountStatus(svc)
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(key, body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/account-status", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(b))
	}
	code, body := post("svc_ingest_a", `{"platform":"x","status":200,"viaProxy":true,"location":"/home","body":"ok"}`)
	if code != 200 || body != `{"accountId":"acc-1","platform":"x","state":"healthy","issue":null,"action":"none","requiresAction":false}` {
		t.Fatalf("%d %s", code, body)
	}
	if gotOwner != "owner-a" || gotSig != (health.Signal{Platform: core.X, Status: 200, ViaProxy: true, Location: "/home", Body: "ok"}) {
		t.Fatalf("service got %q %+v", gotOwner, gotSig)
	}
	if code, body = post("svc_ingest_a", `{"platform":"x","status":418}`); code != 403 || !strings.Contains(body, "plan_limit") {
		t.Fatalf("a service error: %d %s", code, body)
	}
	if code, _ = post("svc_ingest_unknown", `{"platform":"x","status":200}`); code != 401 {
		t.Fatalf("unknown key: %d", code)
	}
	st := health.StatusOf("", core.Reddit, false, health.Record{})
	if v := AccountView(st); v.AccountID != nil || v.State != "not_connected" || v.Action != "connect" || !v.RequiresAction {
		t.Fatalf("AccountView(not connected) = %+v", v)
	}
}

// The helper endpoints documented in the OpenAPI document are extensions
// the helper routes, each with the ingest key; TestOpenAPIMatchesRoutes
// checks the /api/v1 part.
func TestOpenAPIHelperExtensions(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Components.SecuritySchemes["ingestKey"] == nil {
		t.Fatal("no ingestKey security scheme")
	}
	h := NewHelper(HelperConfig{}, nil, nil, nil)
	h.HandleAccountStatus(nil)
	documented := 0
	for path, ops := range doc.Paths {
		if strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		for method, raw := range ops {
			if method == "parameters" {
				continue
			}
			var op struct {
				Extension bool                  `json:"x-extension"`
				Security  []map[string][]string `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			documented++
			m := strings.ToUpper(method)
			if _, pattern := h.mux.Handler(httptest.NewRequest(m, path, nil)); pattern != m+" "+path {
				t.Errorf("%s %s is documented but the helper routes it to %q", m, path, pattern)
			}
			if !strings.Contains(strings.Join(h.Paths(), " "), path) {
				t.Errorf("%s is not among the helper's paths", path)
			}
			// The spec's helper endpoints are no extension; account-status
			// and PUT /session are.
			if op.Extension != (path == "/account-status" || m+" "+path == "PUT /session") || len(op.Security) != 1 || op.Security[0]["ingestKey"] == nil {
				t.Errorf("%s %s: x-extension %v, security %v; want the ingest key, and an extension only beyond the spec", m, path, op.Extension, op.Security)
			}
		}
	}
	if documented == 0 {
		t.Fatal("no helper extension documented")
	}
}
