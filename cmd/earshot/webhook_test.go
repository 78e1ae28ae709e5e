package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/webhooktest"
)

// hook creates a webhook of the key's owner behind a relay and returns
// its create answer and the receiver that checks its messages.
func hook(t *testing.T, s *instance, key string, body map[string]any) (map[string]any, *webhooktest.Receiver) {
	t.Helper()
	r := webhooktest.NewRelay(t)
	body["url"] = r.URL() + "/hooks/earshot"
	created := dataOf(t, s.call("POST", "/api/v1/webhooks", key, body).want(t, 201, ""))
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("create answer without a whsec_ secret: %v", created)
	}
	rcv := webhooktest.NewReceiver(t, secret)
	r.Connect(rcv)
	return created, rcv
}

func listOf(t *testing.T, r response) []any {
	t.Helper()
	l, ok := r.JSON(t)["data"].([]any)
	if !ok {
		t.Fatalf("no data list: %s", r.Body)
	}
	return l
}

// waitDeliveries polls the delivery log until ok holds.
func waitDeliveries(t *testing.T, s *instance, key, id string, ok func([]any) bool) []any {
	t.Helper()
	var l []any
	waitUntil(t, 5*time.Second, 50*time.Millisecond, func() bool {
		l = listOf(t, s.call("GET", "/api/v1/webhooks/"+id+"/deliveries", key, nil).want(t, 200, ""))
		return ok(l)
	}, func() string { return fmt.Sprintf("delivery log: %v", l) })
	return l
}

// waitQueued polls the delivery queue's gauge until it reads n.
func waitQueued(t *testing.T, s *instance, n int) {
	t.Helper()
	got := 0
	waitUntil(t, 5*time.Second, 50*time.Millisecond, func() bool { got = metric(t, s, "earshot_queued_deliveries"); return got == n },
		func() string { return fmt.Sprintf("%d deliveries queued, want %d", got, n) })
}

// On the default plan every webhook route answers plan_limit; with
// webhooks in the plan, the production address rules refuse http and
// loopback.
func TestWebhooksPlanAndAddressRules(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a := newTenant(t, s, "a@example.com")
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/v1/webhooks"}, {"GET", "/api/v1/webhooks"}, {"PATCH", "/api/v1/webhooks/x"},
		{"DELETE", "/api/v1/webhooks/x"}, {"POST", "/api/v1/webhooks/x/test"}, {"GET", "/api/v1/webhooks/x/deliveries"},
		{"POST", "/api/v1/webhooks/x/deliveries/y/retry"},
	} {
		var body any
		switch r.method {
		case "POST":
			body = map[string]any{"url": "https://hooks.example.com/in"}
		case "PATCH":
			body = map[string]any{"active": true}
		}
		s.call(r.method, r.path, a.full, body).want(t, 403, "plan_limit")
		s.call(r.method, r.path, a.readOnly, body).want(t, 403, "forbidden")
	}

	s.env = append(s.env, "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	s.restart()
	for raw, rule := range map[string]string{
		"http://127.0.0.1:9/hook":     "https",
		"https://127.0.0.1/hook":      "IP address",
		"https://localhost/hook":      "localhost",
		"https://hooks.internal/hook": ".internal",
		"https://10.0.0.1.nip.io/x":   "wildcard-DNS",
		"https://u:p@example.com/x":   "username or password",
		"https://example.com:8443/x":  "port",
	} {
		r := s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": raw}).want(t, 400, "invalid_parameter")
		if _, msg := r.errorCode(t); !strings.Contains(msg, rule) {
			t.Errorf("%s refused with %q; want the rule about %s", raw, msg, rule)
		}
	}
	created := dataOf(t, s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": "https://Hooks.Example.com/in"}).want(t, 201, ""))
	if created["url"] != "https://hooks.example.com/in" {
		t.Fatalf("stored url %v", created["url"])
	}
	for name, body := range hostileBodies() {
		for _, r := range []struct{ method, path string }{{"POST", "/api/v1/webhooks"}, {"PATCH", "/api/v1/webhooks/" + created["id"].(string)}} {
			resp := s.call(r.method, r.path, a.full, body)
			if resp.Status < 400 || resp.Status > 499 {
				t.Fatalf("%s %s with %s: status %d, body %.200s", r.method, r.path, name, resp.Status, resp.Body)
			}
			resp.errorCode(t)
		}
	}
	if l := listOf(t, s.call("GET", "/api/v1/webhooks", a.full, nil)); len(l) != 1 || !reflect.DeepEqual(l[0], withoutSecret(created)) {
		t.Fatalf("hostile input changed the webhooks: %v", l)
	}
}

func withoutSecret(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "secret" {
			out[k] = v
		}
	}
	return out
}

// The whole life of webhooks over the real binary: create, a signed
// match.created carrying GET /matches/{id}, retries to a failing
// receiver, the log, a test ping, a manual retry, update and delete.
func TestWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2",
		"EARSHOT_WEBHOOK_RETRY_SCHEDULE=200ms,200ms,200ms")
	a, b := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	if !strings.Contains(s.logs.String(), "EARSHOT_WEBHOOK_ALLOW_PRIVATE is on") {
		t.Error("no warning about EARSHOT_WEBHOOK_ALLOW_PRIVATE in the log")
	}
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")

	good, goodRcv := hook(t, s, a.full, map[string]any{})
	goodID, goodSecret := good["id"].(string), good["secret"].(string)
	if good["min_score"] != 70.0 || fmt.Sprint(good["platforms"]) != "[reddit x facebook]" || good["active"] != true ||
		good["disabledReason"] != nil || good["createdAt"] == nil || len(good) != 8 {
		t.Fatalf("create answer: %v", good)
	}
	s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": good["url"]}).want(t, 409, "conflict")
	bad, badRcv := hook(t, s, a.full, map[string]any{"min_score": 0, "platforms": []string{"x"}})
	badID, badSecret := bad["id"].(string), bad["secret"].(string)
	s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": "http://127.0.0.1:9/third"}).want(t, 403, "plan_limit")
	badRcv.SetStatus(500)
	// Slow answers spread the four tries over more than a second, so
	// their signing timestamps, in whole seconds, differ.
	badRcv.SetDelay(400 * time.Millisecond)

	list := s.call("GET", "/api/v1/webhooks", a.full, nil).want(t, 200, "")
	if strings.Contains(string(list.Body), goodSecret) || strings.Contains(string(list.Body), `"secret"`) {
		t.Fatalf("GET /webhooks shows a secret: %s", list.Body)
	}
	if l := listOf(t, list); len(l) != 2 || !reflect.DeepEqual(l[0], withoutSecret(good)) {
		t.Fatalf("GET /webhooks: %v", l)
	}
	if l := listOf(t, s.call("GET", "/api/v1/webhooks", b.full, nil)); len(l) != 0 {
		t.Fatalf("another owner lists %v", l)
	}
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/api/v1/webhooks/" + goodID, map[string]any{"active": false}},
		{"DELETE", "/api/v1/webhooks/" + goodID, nil},
		{"POST", "/api/v1/webhooks/" + goodID + "/test", nil},
		{"GET", "/api/v1/webhooks/" + goodID + "/deliveries", nil},
		{"POST", "/api/v1/webhooks/" + goodID + "/deliveries/x/retry", nil},
	} {
		s.call(r.method, r.path, b.full, r.body).want(t, 404, "not_found")
		s.call(r.method, r.path, a.writer, r.body).want(t, 403, "forbidden")
	}
	me := dataOf(t, s.call("GET", "/api/v1/me", a.readOnly, nil))
	if fmt.Sprint(me["limits"].(map[string]any)["webhooksPerPerson"], me["usage"].(map[string]any)["webhooks"]) != "2 2" {
		t.Fatalf("GET /me: %v", me)
	}

	// A post that scores high reaches both receivers.
	s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": []any{
		ingestPost("1", "Can anyone recommend an alternative to Acme CRM? Looking to buy this week, budget approved."),
	}}).want(t, 200, "")
	msg := goodRcv.WaitFor(1, 5*time.Second)[0]
	var body struct {
		ID, Type, CreatedAt string
		Data                map[string]any
	}
	if err := json.Unmarshal(msg.Body, &body); err != nil {
		t.Fatal(err)
	}
	matchID, _ := body.Data["id"].(string)
	record := dataOf(t, s.call("GET", "/api/v1/matches/"+matchID, a.readOnly, nil).want(t, 200, ""))
	if msg.Event != "match.created" || body.Type != "match.created" || body.ID != msg.DeliveryID || !reflect.DeepEqual(body.Data, record) {
		t.Fatalf("message %s %s:\n%s\nGET /matches/{id}: %v", msg.Event, msg.DeliveryID, msg.Body, record)
	}
	if score, _ := record["score"].(float64); score < 70 {
		t.Fatalf("the post scored %v; the test needs one at or above 70", record["score"])
	}
	if _, err := time.Parse(time.RFC3339, body.CreatedAt); err != nil {
		t.Fatalf("createdAt %q: %v", body.CreatedAt, err)
	}

	// The failing receiver gets four tries of one delivery, then it fails.
	tries := badRcv.WaitFor(4, 10*time.Second)
	for i, m := range tries {
		if m.DeliveryID != tries[0].DeliveryID || string(m.Body) != string(tries[0].Body) {
			t.Fatalf("try %d: delivery %s, first %s", i+1, m.DeliveryID, tries[0].DeliveryID)
		}
	}
	if !tries[3].Timestamp.After(tries[0].Timestamp) || tries[3].Signature == tries[0].Signature {
		t.Fatalf("the tries were not signed afresh: timestamps %v and %v", tries[0].Timestamp, tries[3].Timestamp)
	}
	log := waitDeliveries(t, s, a.full, badID, func(l []any) bool {
		return len(l) == 1 && l[0].(map[string]any)["status"] == "failed"
	})
	entry := log[0].(map[string]any)
	if entry["id"] != tries[0].DeliveryID || entry["event"] != "match.created" || entry["trigger"] != "scheduled" ||
		entry["tries"] != 4.0 || entry["responseStatus"] != 500.0 || entry["error"] != "http 500" ||
		entry["nextAttemptAt"] != nil || entry["lastAttemptAt"] == nil || entry["createdAt"] == nil || len(entry) != 10 {
		t.Fatalf("failed entry: %v", entry)
	}
	// Nothing is queued any more: no fifth try can come.
	waitQueued(t, s, 0)
	if n := len(badRcv.Messages()); n != 4 {
		t.Fatalf("%d tries, want 4", n)
	}
	goodLog := waitDeliveries(t, s, a.full, goodID, func(l []any) bool {
		return len(l) == 1 && l[0].(map[string]any)["status"] == "delivered"
	})
	if e := goodLog[0].(map[string]any); e["tries"] != 1.0 || e["responseStatus"] != 200.0 || e["error"] != nil || e["id"] != msg.DeliveryID {
		t.Fatalf("delivered entry: %v", e)
	}

	// A test ping.
	ping := dataOf(t, s.call("POST", "/api/v1/webhooks/"+goodID+"/test", a.full, nil).want(t, 200, ""))
	if ping["delivered"] != true || ping["responseStatus"] != 200.0 || ping["error"] != nil || ping["durationMs"] == nil {
		t.Fatalf("test answer: %v", ping)
	}
	pm := goodRcv.WaitFor(2, 2*time.Second)[1]
	var pingBody struct {
		Type string
		Data map[string]any
	}
	_ = json.Unmarshal(pm.Body, &pingBody)
	if pm.Event != "ping" || pingBody.Data["webhookId"] != goodID || pingBody.Data["message"] == "" {
		t.Fatalf("ping message: %s", pm.Body)
	}
	if e := listOf(t, s.call("GET", "/api/v1/webhooks/"+goodID+"/deliveries", a.full, nil))[0].(map[string]any); e["trigger"] != "ping" || e["event"] != "ping" || e["status"] != "delivered" {
		t.Fatalf("ping in the log: %v", e)
	}
	failedPing := dataOf(t, s.call("POST", "/api/v1/webhooks/"+badID+"/test", a.full, nil).want(t, 200, ""))
	if failedPing["delivered"] != false || failedPing["responseStatus"] != 500.0 || failedPing["error"] != "http 500" {
		t.Fatalf("failed test answer: %v", failedPing)
	}

	// A manual retry of the failed delivery, now that the receiver works.
	badRcv.SetStatus(204)
	badRcv.SetDelay(0)
	retry := s.call("POST", "/api/v1/webhooks/"+badID+"/deliveries/"+tries[0].DeliveryID+"/retry", a.full, nil).want(t, 202, "")
	if d := dataOf(t, retry); d["status"] != "queued" || d["trigger"] != "manual" || d["id"] != tries[0].DeliveryID {
		t.Fatalf("retry answer: %v", d)
	}
	again := badRcv.WaitFor(6, 3*time.Second)[5] // four tries, the failed ping, the retry
	if again.DeliveryID != tries[0].DeliveryID || string(again.Body) != string(tries[0].Body) {
		t.Fatalf("the retry sent %s %s", again.DeliveryID, again.Body)
	}
	waitDeliveries(t, s, a.full, badID, func(l []any) bool {
		for _, e := range l {
			if e := e.(map[string]any); e["id"] == tries[0].DeliveryID {
				return e["status"] == "delivered" && e["trigger"] == "manual" && e["tries"] == 1.0
			}
		}
		return false
	})
	pingID := listOf(t, s.call("GET", "/api/v1/webhooks/"+goodID+"/deliveries", a.full, nil))[0].(map[string]any)["id"].(string)
	s.call("POST", "/api/v1/webhooks/"+goodID+"/deliveries/"+pingID+"/retry", a.full, nil).want(t, 400, "invalid_request")
	s.call("POST", "/api/v1/webhooks/"+goodID+"/deliveries/nope/retry", a.full, nil).want(t, 404, "not_found")

	// Update and delete.
	s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{"min_score": 101}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{"platforms": []string{}}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{"url": "https://elsewhere.example.com"}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{}).want(t, 400, "invalid_parameter")
	up := dataOf(t, s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{"active": false, "min_score": 80, "platforms": []string{"facebook", "x"}}).want(t, 200, ""))
	if up["active"] != false || up["min_score"] != 80.0 || fmt.Sprint(up["platforms"]) != "[x facebook]" || up["secret"] != nil {
		t.Fatalf("PATCH answer: %v", up)
	}
	up = dataOf(t, s.call("PATCH", "/api/v1/webhooks/"+goodID, a.full, map[string]any{"active": true}).want(t, 200, ""))
	if up["active"] != true || up["disabledReason"] != nil {
		t.Fatalf("switched on: %v", up)
	}
	del := dataOf(t, s.call("DELETE", "/api/v1/webhooks/"+goodID, a.full, nil).want(t, 200, ""))
	if del["id"] != goodID || del["deleted"] != true {
		t.Fatalf("DELETE answer: %v", del)
	}
	s.call("GET", "/api/v1/webhooks/"+goodID+"/deliveries", a.full, nil).want(t, 404, "not_found")
	s.call("DELETE", "/api/v1/webhooks/"+goodID, a.full, nil).want(t, 404, "not_found")
	if u := dataOf(t, s.call("GET", "/api/v1/me", a.readOnly, nil))["usage"].(map[string]any)["webhooks"]; u != 1.0 {
		t.Fatalf("usage after delete: %v", u)
	}

	logs := s.logs.String()
	for _, secret := range []string{goodSecret, badSecret} {
		if strings.Contains(logs, secret) || strings.Contains(logs, strings.TrimPrefix(secret, "whsec_")) {
			t.Fatal("a webhook secret is in the server log")
		}
	}
}
