package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// fakeSessions stores jars as app.Accounts does: parsed with
// core.ParseCookieJar, kept in the canonical form.
type fakeSessions struct{ jars map[string][]byte }

func (f *fakeSessions) Session(_ context.Context, ownerID, platform string) (json.RawMessage, error) {
	jar, ok := f.jars[ownerID+"/"+platform]
	if !ok {
		return nil, core.Errorf(core.KindNotFound, "no session")
	}
	return jar, nil
}

func (f *fakeSessions) SetSession(_ context.Context, ownerID, platform string, jar []byte) (core.Account, int, error) {
	p, err := core.ParsePlatform("platform", platform)
	if err != nil {
		return core.Account{}, 0, err
	}
	cookies, err := core.ParseCookieJar(p, jar)
	if err != nil {
		return core.Account{}, 0, err
	}
	f.jars[ownerID+"/"+platform] = core.EncodeCookieJar(cookies)
	return core.Account{ID: "acc-" + ownerID, Platform: p}, len(cookies), nil
}

// An x jar in the canonical shape core.EncodeCookieJar writes.
const freshXJar = `[{"domain":".x.com","name":"auth_token","value":"sekret-auth","path":"/","secure":true,"httpOnly":true},` +
	`{"domain":".x.com","name":"ct0","value":"sekret-ct0","path":"/","secure":true}]`

// PUT /session stores the owner's refreshed jar (the key names the
// owner), answers what it kept without any cookie value, and GET
// /session hands it back; a jar without the session cookies, one over
// the upload bound, and an unknown key are refused in the error body.
func TestHelperPutSession(t *testing.T) {
	sessions := &fakeSessions{jars: map[string][]byte{}}
	srv := httptest.NewServer(NewHelper(HelperConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, helperKeys, &fakeIngest{}, sessions))
	t.Cleanup(srv.Close)

	resp, out := helperCall(t, srv, "PUT", "/session?platform=x", "svc_ingest_one", freshXJar)
	if resp.StatusCode != 200 || out["accountId"] != "acc-o1" || out["platform"] != "x" || out["cookies"] != float64(2) {
		t.Fatalf("PUT /session: %d %v", resp.StatusCode, out)
	}
	if b, _ := json.Marshal(out); strings.Contains(string(b), "sekret") {
		t.Fatalf("the answer echoes a cookie value: %s", b)
	}
	if !strings.Contains(string(sessions.jars["o1/x"]), "sekret-auth") {
		t.Fatalf("stored: %s", sessions.jars["o1/x"])
	}

	resp, out = helperCall(t, srv, "PUT", "/session?platform=x", "svc_ingest_one", `[{"domain":".x.com","name":"ct0","value":"sekret-ct0"}]`)
	e, _ := out["error"].(map[string]any)
	if resp.StatusCode != 400 || e == nil || strings.Contains(e["message"].(string), "sekret") || !strings.Contains(e["message"].(string), "auth_token") {
		t.Fatalf("a jar without auth_token: %d %v", resp.StatusCode, out)
	}
	resp, out = helperCall(t, srv, "PUT", "/session?platform=x", "svc_ingest_one", "["+strings.Repeat(" ", core.MaxCookieJar)+"]")
	if e, _ := out["error"].(map[string]any); resp.StatusCode != 413 || e == nil {
		t.Fatalf("a jar over the bound: %d %v", resp.StatusCode, out)
	}
	// The key's kind is checked by the key store (an API key is refused
	// end to end in cmd/earshot); here, an unknown key.
	if resp, _ := helperCall(t, srv, "PUT", "/session?platform=x", "svc_ingest_nope", freshXJar); resp.StatusCode != 401 {
		t.Fatalf("an unknown key: %d", resp.StatusCode)
	}
	if resp, out := helperCall(t, srv, "PUT", "/session?platform=myspace", "svc_ingest_one", freshXJar); resp.StatusCode != 400 {
		t.Fatalf("an unknown platform: %d %v", resp.StatusCode, out)
	}
}
