package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// outmockCall is mockCall that decodes the answer, and fails the test
// unless it is a JSON object with the status want.
func outmockCall(t *testing.T, want int, method, url, body string) map[string]any {
	t.Helper()
	status, raw := mockCall(t, method, url, body)
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil || status != want {
		t.Fatalf("%s %s: %d %.300s, want %d and a JSON object", method, url, status, raw, want)
	}
	if status >= 400 {
		if msg, isStr := v["error"].(string); !isStr || msg == "" || len(v) != 1 {
			t.Fatalf("%s %s: not the error envelope: %.300s", method, url, raw)
		}
	}
	return v
}

// The legacy mock as a client outside the process sees it
// (spec/legacy-mock.md, section 4): the walk of docs/legacy-mock.md on
// the real binary, every answer JSON with its status and keys, the
// spec's messages word for word, then the whole state again after a
// restart on the same --state file.
func TestOutmockWalkAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := filepath.Join(dir, "mock.json")
	base, stop := startMock(t, baseEnv(dir), "--state", state)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	const acc = "account-1714557600000-p4k9zq"

	res, err := http.Get(base + "/accounts")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}

	// Accounts.
	a := outmockCall(t, 201, "POST", base+"/accounts", `{"platform":"x"}`)
	xAcc := a["account"].(map[string]any)["id"].(string)
	if _, has := a["accounts"].([]any); !has {
		t.Errorf("POST /accounts: %v", a)
	}
	if e := outmockCall(t, 400, "POST", base+"/accounts", `{"platform":"tiktok"}`); e["error"] != "platform must be facebook, x, or reddit" {
		t.Errorf("error %v", e["error"])
	}
	outmockCall(t, 200, "PATCH", base+"/accounts/"+xAcc, `{"rawSignal":{"code":190,"subcode":459}}`)
	outmockCall(t, 200, "POST", base+"/accounts/"+xAcc+"/resolve", "")
	if e := outmockCall(t, 409, "POST", base+"/accounts/"+xAcc+"/resolve", ""); e["error"] != "No resolvable challenge on this account" {
		t.Errorf("error %v", e["error"])
	}
	if e := outmockCall(t, 404, "PATCH", base+"/accounts/account-0-nope", `{"label":"x"}`); e["error"] != "Account not found" {
		t.Errorf("error %v", e["error"])
	}

	// Communities.
	if c := outmockCall(t, 200, "POST", base+"/communities/fb-yogastudioowners/join", `{"accountId":"`+acc+`","answers":["Flow Room, Austin"]}`); c["community"].(map[string]any)["joinState"] != "pending" {
		t.Errorf("join %v", c["community"])
	}
	outmockCall(t, 200, "POST", base+"/communities/fb-yogastudioowners/accept", "")
	if e := outmockCall(t, 400, "POST", base+"/communities/fb-remoteworkcommunity/accept", ""); e["error"] != "No join request to accept" {
		t.Errorf("error %v", e["error"])
	}
	outmockCall(t, 201, "POST", base+"/communities/join-by-url", `{"url":"https://www.facebook.com/groups/austinfoodtrucks/","accountId":"`+acc+`"}`)
	outmockCall(t, 200, "POST", base+"/communities/join-by-url", `{"url":"https://www.facebook.com/groups/austinfoodtrucks/"}`)
	outmockCall(t, 201, "POST", base+"/communities/resolve-reddit", `{"name":"r/Coffee"}`)

	// Keywords: a field spelled in another case is not the field.
	outmockCall(t, 201, "POST", base+"/keywords", `{"phrase":"studio software","platform":"facebook","groupId":"fb-yogastudioowners"}`)
	outmockCall(t, 409, "POST", base+"/keywords", `{"phrase":"STUDIO software","platform":"facebook","groupId":"fb-yogastudioowners"}`)
	outmockCall(t, 400, "POST", base+"/keywords", `{"Phrase":"walk-in queue","platform":"x"}`)
	k := outmockCall(t, 201, "POST", base+"/keywords", `{"phrase":"walk-in queue","platform":"x"}`)["keyword"].(map[string]any)
	if g, set := k["groupId"]; !set || g != nil || k["status"] != "listening" {
		t.Errorf("keyword %v", k)
	}

	// Listings.
	l := outmockCall(t, 201, "POST", base+"/listings", `{"title":"Salon chair","price":"$120","location":"Austin, TX","images":["https://img.example/chair.jpg"],"locationPoint":{"lat":30.27,"lng":-97.74,"radiusKm":500}}`)["listing"].(map[string]any)
	lid := l["listingId"].(string)
	if len(lid) != 17 || l["status"] != "under-review" || l["locationPoint"].(map[string]any)["radiusKm"] != 200.0 {
		t.Errorf("listing %v", l)
	}
	outmockCall(t, 200, "PATCH", base+"/listings/"+lid+"/status", `{"status":"active"}`)
	if st := outmockCall(t, 200, "GET", base+"/listings/"+lid+"/status", ""); len(st) != 3 || st["status"] != "active" {
		t.Errorf("status %v", st)
	}
	outmockCall(t, 400, "PATCH", base+"/listings/"+lid+"/status", `{"Status":"sold"}`)
	outmockCall(t, 404, "DELETE", base+"/listings/10000000000000000", "")

	// Brand.
	if e := outmockCall(t, 404, "POST", base+"/brand/intelligence", `{"competitors":["Calendly"]}`); e["error"] != "No brand yet" {
		t.Errorf("error %v", e["error"])
	}
	if e := outmockCall(t, 400, "PUT", base+"/brand", `{"identity":{"website":"https://slotwise.example"}}`); e["error"] != "Invalid brand payload" {
		t.Errorf("error %v", e["error"])
	}
	outmockCall(t, 200, "PUT", base+"/brand", `{"identity":{"name":"Slotwise","website":"https://slotwise.example"}}`)
	outmockCall(t, 200, "POST", base+"/brand/intelligence", `{"competitors":["Calendly"],"targetCommunities":[{"id":"r-saas"}]}`)
	if src := outmockCall(t, 200, "POST", base+"/brand/index", "")["sources"].([]any); len(src) != 4 {
		t.Errorf("sources %v", src)
	}
	outmockCall(t, 200, "DELETE", base+"/brand/sources", `{"url":"https://slotwise.example/contact"}`)

	// API keys.
	key := outmockCall(t, 201, "POST", base+"/api-keys", `{"name":"Zapier","scopes":{"accountId":"`+acc+`","groupIds":["r-saas"],"canSendMessages":true}}`)
	if s, _ := key["key"].(string); !strings.HasPrefix(s, "svc_mock_") || key["apiKey"] == nil || key["apiKeys"] == nil {
		t.Errorf("key %v", key)
	}
	outmockCall(t, 409, "POST", base+"/api-keys", `{"name":"ZAPIER","scopes":{"accountId":"`+acc+`"}}`)
	outmockCall(t, 200, "DELETE", base+"/api-keys/key-0-nope", "")

	// Feed: case is folded, so a long s is an s; a bad platform is refused.
	if items := outmockCall(t, 200, "GET", base+"/feed?search="+url.QueryEscape("ſALON"), "")["items"].([]any); len(items) == 0 {
		t.Error("search ſALON found nothing")
	}
	outmockCall(t, 400, "GET", base+"/feed/myspace", "")
	outmockCall(t, 405, "PUT", base+"/feed", "")
	outmockCall(t, 404, "GET", base+"/nope", "")

	reads := []string{"/accounts", "/communities", "/keywords", "/listings", "/brand", "/brand/sources", "/api-keys", "/feed"}
	before := map[string]string{}
	for _, p := range reads {
		before[p] = string(mustGet(t, base+p))
	}
	stop()
	stopped = true

	base, stop = startMock(t, baseEnv(dir), "--state", state)
	defer stop()
	for _, p := range reads {
		if got := string(mustGet(t, base+p)); got != before[p] {
			t.Errorf("%s after a restart:\n got %.300s\nwant %.300s", p, got, before[p])
		}
	}
}
