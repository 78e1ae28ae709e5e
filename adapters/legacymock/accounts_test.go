package legacymock

import (
	"net/http"
	"regexp"
	"testing"
)

func TestAccountCreate(t *testing.T) {
	c := newClient(t, Config{})
	idFormat := regexp.MustCompile(`^account-\d{13}-[0-9a-z]{6}$`)
	for _, tt := range []struct{ platform, label string }{{"facebook", "Facebook"}, {"x", "X"}, {"reddit", "Reddit"}} {
		r := c.must(201, "POST", "/accounts", map[string]any{"platform": tt.platform})
		a := r.obj("account")
		if !idFormat.MatchString(a["id"].(string)) {
			t.Errorf("id %q does not match account-<timestamp>-<rand>", a["id"])
		}
		if a["label"] != tt.label || a["platform"] != tt.platform {
			t.Errorf("account %v, want label %s", a, tt.label)
		}
		for _, k := range []string{"connectedAt", "lastIssue", "rawSignal", "lastCheckedAt", "retryAfter"} {
			if v, set := a[k]; !set || v != nil {
				t.Errorf("%s = %v, want null", k, v)
			}
		}
		if find(r.list("accounts"), "id", a["id"].(string)) == nil {
			t.Error("new account missing from the list")
		}
	}
}

func TestAccountCreateRejectsOtherPlatforms(t *testing.T) {
	c := newClient(t, Config{})
	for _, body := range []any{map[string]any{"platform": "tiktok"}, map[string]any{}, map[string]any{"platform": "Facebook"}} {
		c.fails(400, "platform must be facebook, x, or reddit", "POST", "/accounts", body)
	}
}

func TestAccountPatchMergesAndPathIDWins(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "PATCH", "/accounts/"+redditAccount, map[string]any{
		"id": "account-hijack", "label": "Brand reddit", "lastIssue": "Rate-Limit", "retryAfter": 90,
	})
	if _, has := r.body["account"]; has || len(r.body) != 1 {
		t.Errorf("PATCH answers {accounts} only, got %s", r.raw)
	}
	a := find(r.list("accounts"), "id", redditAccount)
	if a == nil || find(r.list("accounts"), "id", "account-hijack") != nil {
		t.Fatalf("path id must win: %s", r.raw)
	}
	want := map[string]any{
		"label": "Brand reddit", "lastIssue": "rate_limited", "platform": "reddit",
		"lastCheckedAt": "2024-07-01T12:00:00.000Z", "retryAfter": "2024-07-01T12:01:30.000Z",
		"connectedAt": "2024-05-01T11:00:00.000Z",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("%s = %v, want %v", k, a[k], v)
		}
	}
}

func TestAccountPatchRawSignalNormalisesToIssue(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"rawSignal": map[string]any{"code": 190, "subcode": 459}})
	a := find(r.list("accounts"), "id", fbAccount)
	if a["lastIssue"] != "checkpointed" || a["lastCheckedAt"] != "2024-07-01T12:00:00.000Z" {
		t.Errorf("account %v", a)
	}
	sig := a["rawSignal"].(map[string]any)
	if sig["code"] != 190.0 || sig["subcode"] != 459.0 {
		t.Errorf("rawSignal %v", sig)
	}
	// A given lastIssue wins over the signal, and null clears.
	r = c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"rawSignal": map[string]any{"code": 17}, "lastIssue": nil, "lastCheckedAt": "2024-06-30T10:00:00+02:00"})
	a = find(r.list("accounts"), "id", fbAccount)
	if a["lastIssue"] != nil || a["lastCheckedAt"] != "2024-06-30T08:00:00.000Z" {
		t.Errorf("account %v", a)
	}
}

func TestAccountPatchValidation(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"platform", map[string]any{"platform": "myspace"}, "platform must be facebook, x, or reddit"},
		{"blank label", map[string]any{"label": "  "}, ""},
		{"connectedAt not a time", map[string]any{"connectedAt": "yesterday"}, "connectedAt must be an RFC 3339 timestamp or null"},
		{"retryAfter negative", map[string]any{"retryAfter": -5}, ""},
		{"retryAfter object", map[string]any{"retryAfter": map[string]any{}}, ""},
		{"rawSignal not an object", map[string]any{"rawSignal": "459"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, tt.msg, "PATCH", "/accounts/"+redditAccount, tt.body)
		})
	}
	r := c.must(200, "GET", "/accounts", nil)
	if a := find(r.list("accounts"), "id", redditAccount); a["label"] != "Reddit" {
		t.Errorf("a refused PATCH changed the record: %v", a)
	}
	c.fails(404, "Account not found", "PATCH", "/accounts/account-0-nope", map[string]any{"label": "x"})
}

func TestAccountDelete(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(200, "DELETE", "/accounts/"+redditAccount, nil)
	if len(r.list("accounts")) != 1 {
		t.Errorf("accounts after delete: %s", r.raw)
	}
	c.fails(404, "Account not found", "DELETE", "/accounts/"+redditAccount, nil)
}

func TestDeletedAccountLeavesCommunityJoins(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "DELETE", "/accounts/"+fbAccount, nil)
	r := c.must(200, "GET", "/communities?platform=facebook", nil)
	for _, id := range []string{fbJoined, fbPending} {
		cm := find(r.list("communities"), "id", id)
		if cm["joinState"] != "none" || cm["accountId"] != nil || cm["accountLabel"] != nil || len(cm["answers"].([]any)) != 0 {
			t.Errorf("%s still joined after its account left: %v", id, cm)
		}
	}
}

func TestAccountResolveClearsChallenges(t *testing.T) {
	for _, issue := range []string{"checkpointed", "challenge_interstitial", "captcha_html"} {
		t.Run(issue, func(t *testing.T) {
			c := newClient(t, Config{})
			r := c.must(201, "POST", "/accounts", map[string]any{"platform": "x"})
			id := r.obj("account")["id"].(string)
			c.must(200, "PATCH", "/accounts/"+id, map[string]any{"lastIssue": issue, "rawSignal": map[string]any{"code": 326}, "retryAfter": 60})
			r = c.must(200, "POST", "/accounts/"+id+"/resolve", nil)
			a := r.obj("account")
			now := "2024-07-01T12:00:00.000Z"
			if a["lastIssue"] != nil || a["rawSignal"] != nil || a["retryAfter"] != nil || a["lastCheckedAt"] != now || a["connectedAt"] != now {
				t.Errorf("resolved account %v", a)
			}
			if find(r.list("accounts"), "id", id)["lastIssue"] != nil {
				t.Error("list not updated")
			}
		})
	}
}

func TestAccountResolveKeepsConnectedAt(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"lastIssue": "captcha_html"})
	r := c.must(200, "POST", "/accounts/"+fbAccount+"/resolve", nil)
	if r.obj("account")["connectedAt"] != "2024-05-01T10:00:00.000Z" {
		t.Errorf("connectedAt changed: %v", r.obj("account"))
	}
}

func TestAccountResolveRefusesOtherIssues(t *testing.T) {
	c := newClient(t, Config{})
	c.fails(409, "No resolvable challenge on this account", "POST", "/accounts/"+fbAccount+"/resolve", nil)
	for _, issue := range []string{"rate_limited", "session_expired", "account_locked"} {
		c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"lastIssue": issue})
		c.fails(409, "No resolvable challenge on this account", "POST", "/accounts/"+fbAccount+"/resolve", nil)
		r := c.must(200, "GET", "/accounts", nil)
		if find(r.list("accounts"), "id", fbAccount)["lastIssue"] != issue {
			t.Errorf("%s: a refused resolve changed the issue", issue)
		}
	}
	c.fails(404, "Account not found", "POST", "/accounts/account-0-nope/resolve", nil)
}

func TestAccountResolveRefusesAPIKeys(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"lastIssue": "checkpointed"})
	key := c.must(201, "POST", "/api-keys", map[string]any{"name": "bot", "scopes": validScopes()}).body["key"].(string)
	for _, h := range [][2]string{{"Authorization", "Bearer " + key}, {"X-API-Key", key}} {
		req, _ := http.NewRequest("POST", c.base+"/accounts/"+fbAccount+"/resolve", nil)
		req.Header.Set(h[0], h[1])
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Errorf("%s: status %d, want 403", h[0], res.StatusCode)
		}
	}
	c.must(200, "POST", "/accounts/"+fbAccount+"/resolve", nil)
}

// A time whose offset carries it past year 9999 in UTC would be stored as
// "10000-01-01T...", which is not RFC 3339: the record could no longer be
// sent back as it was read. Such times are refused like any bad time.
func TestAccountPatchRefusesTimesOutsideRFC3339Years(t *testing.T) {
	c := newClient(t, Config{})
	for _, tt := range []struct {
		field, value, msg string
	}{
		{"connectedAt", "9999-12-31T23:59:59-23:59", "connectedAt must be an RFC 3339 timestamp or null"},
		{"lastCheckedAt", "0000-01-01T00:00:00+01:00", "lastCheckedAt must be an RFC 3339 timestamp or null"},
		{"retryAfter", "9999-12-31T23:00:00-02:00", "retryAfter must be null, a number of seconds or an RFC 3339 timestamp"},
	} {
		c.fails(400, tt.msg, "PATCH", "/accounts/"+redditAccount, map[string]any{tt.field: tt.value})
	}
	// The ends of the range still fit.
	r := c.must(200, "PATCH", "/accounts/"+redditAccount, map[string]any{"connectedAt": "9999-12-31T23:00:00-00:59", "lastCheckedAt": "0000-01-01T01:00:00+01:00"})
	a := find(r.list("accounts"), "id", redditAccount)
	if a["connectedAt"] != "9999-12-31T23:59:00.000Z" || a["lastCheckedAt"] != "0000-01-01T00:00:00.000Z" {
		t.Errorf("account %v", a)
	}
	// What was stored can be sent back as it is.
	c.must(200, "PATCH", "/accounts/"+redditAccount, a)
}

// Only the resolve route clears a challenge (spec section 3, challenge
// flow): a raw signal of another kind reported later, as the detector's
// path (health.Record.Apply) has it, leaves the challenge stored, so the
// dashboard still offers open_challenge and the resolve still answers.
func TestAccountRawSignalKeepsAStoredChallenge(t *testing.T) {
	c := newClient(t, Config{})
	c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"rawSignal": map[string]any{"code": 190, "subcode": 459}})
	r := c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"rawSignal": map[string]any{"code": 4}})
	if a := find(r.list("accounts"), "id", fbAccount); a["lastIssue"] != "checkpointed" {
		t.Fatalf("a rate-limit signal replaced the stored challenge: %v", a)
	}
	// A newer challenge does replace it, and a given lastIssue still wins.
	r = c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"lastIssue": "captcha_html"})
	if a := find(r.list("accounts"), "id", fbAccount); a["lastIssue"] != "captcha_html" {
		t.Fatalf("account %v", a)
	}
	r = c.must(200, "PATCH", "/accounts/"+fbAccount, map[string]any{"rawSignal": map[string]any{"code": 1, "subcode": 459}})
	if a := find(r.list("accounts"), "id", fbAccount); a["lastIssue"] != "checkpointed" {
		t.Fatalf("account %v", a)
	}
	c.must(200, "POST", "/accounts/"+fbAccount+"/resolve", nil)
}
