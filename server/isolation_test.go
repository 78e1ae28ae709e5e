package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"go.uber.org/fx"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/logtest"
)

// isolationRig is the whole server on an in-memory SQLite with two
// owners, each with an API key, an ingest key and a dashboard session.
type isolationRig struct {
	t    *testing.T
	root http.Handler
	svc  *services
	db   *gormstore.DB
	logs *logtest.Buffer
}

type isolationOwner struct {
	id, api, ingest, cookie string
	keyID, ingestKeyID      string
}

func newIsolationRig(t *testing.T) *isolationRig {
	t.Helper()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_BOOTSTRAP": "false", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON": "5", "EARSHOT_WEBHOOK_ALLOW_PRIVATE": "true",
		"EARSHOT_SECRET_KEY": strings.Repeat("k", 32), "EARSHOT_RATE_LIMIT_PER_MINUTE": "100000"})
	rig := &isolationRig{t: t, logs: &logtest.Buffer{}}
	log := slog.New(slog.NewTextHandler(rig.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := Serve(cfg, log, io.Discard, fx.Populate(&rig.root, &rig.svc, &rig.db))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return rig
}

func (rig *isolationRig) owner(email string) isolationOwner {
	t, ctx := rig.t, context.Background()
	t.Helper()
	o, err := rig.svc.Owners.Create(ctx, email, email)
	if err != nil {
		t.Fatal(err)
	}
	api, k, err := rig.svc.Keys.CreateAPIKey(ctx, o.ID, "all", core.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	ingest, ik, err := rig.svc.Keys.CreateIngestKey(ctx, o.ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	link, err := rig.svc.Sessions.LoginLink(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(link, "/app/login/")
	cookie, _, err := rig.svc.Sessions.SignIn(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	return isolationOwner{id: o.ID, api: api, ingest: ingest, cookie: cookie, keyID: k.ID, ingestKeyID: ik.ID}
}

// api calls /api/v1 or the helper endpoints with key.
func (rig *isolationRig) api(key, method, path, body string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	rig.root.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// page calls the dashboard with the owner's session; a body is a form.
func (rig *isolationRig) page(o isolationOwner, method, path, form string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(form))
	req.AddCookie(&http.Cookie{Name: "earshot_session", Value: o.cookie})
	if method == "POST" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	rig.root.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("Location") + "\n" + rec.Body.String()
}

// data reads a string field of an answer's data.
func (rig *isolationRig) data(body, field string) string {
	rig.t.Helper()
	var v struct{ Data map[string]any }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		rig.t.Fatalf("%v: %s", err, body)
	}
	s, _ := v.Data[field].(string)
	if s == "" {
		rig.t.Fatalf("no %s in %s", field, body)
	}
	return s
}

// must checks a call's status: rig.must(201)(rig.api(...)).
func (rig *isolationRig) must(want int) func(int, string) string {
	return func(status int, body string) string {
		rig.t.Helper()
		if status != want {
			rig.t.Fatalf("%d %s, want %d", status, body, want)
		}
		return body
	}
}

// bIDs are owner B's rows, which owner A must not reach.
type bIDs struct {
	phrase, match, set, hook, hookDelivery, channel, channelDelivery, notification, key, ingestKey string
}

// seedB gives owner b a phrase with a match and an archived set, a
// webhook and a channel each with a delivery, and a notification.
func (rig *isolationRig) seedB(b isolationOwner, target string) bIDs {
	t := rig.t
	t.Helper()
	var ids bIDs
	ids.key, ids.ingestKey = b.keyID, b.ingestKeyID
	ids.phrase = rig.data(rig.must(201)(rig.api(b.api, "POST", "/api/v1/keywords", `{"phrase":"acme","platform":"x"}`)), "id")
	rig.must(200)(rig.api(b.ingest, "POST", "/ingest", `{"platform":"x","posts":[
		{"externalId":"1","authorName":"bob","body":["I love acme"],"url":"https://x.com/bob/status/1"},
		{"externalId":"2","authorName":"bob","body":["acme is fine"],"url":"https://x.com/bob/status/2"}]}`))
	_, list := rig.api(b.api, "GET", "/api/v1/matches", "")
	var page struct{ Data []struct{ ID, Text string } }
	if err := json.Unmarshal([]byte(list), &page); err != nil || len(page.Data) != 2 {
		t.Fatalf("B's matches: %v %s", err, list)
	}
	ids.match = page.Data[0].ID
	rig.must(200)(rig.api(b.api, "PATCH", "/api/v1/keywords/"+ids.phrase, `{"exclude":["love"]}`))
	ids.set = rig.data(rig.must(200)(rig.api(b.api, "POST", "/api/v1/keywords/"+ids.phrase+"/apply-filters", "")), "setId")
	ids.hook = rig.data(rig.must(201)(rig.api(b.api, "POST", "/api/v1/webhooks", `{"url":"`+target+`/hook"}`)), "id")
	rig.must(200)(rig.api(b.api, "POST", "/api/v1/webhooks/"+ids.hook+"/test", ""))
	ids.hookDelivery = rig.firstDelivery(b, "/api/v1/webhooks/"+ids.hook+"/deliveries")
	ids.channel = rig.data(rig.must(201)(rig.api(b.api, "POST", "/api/v1/channels",
		`{"kind":"ntfy","url":"`+target+`/topic","token":"tk_bsecrettoken"}`)), "id")
	rig.must(200)(rig.api(b.api, "POST", "/api/v1/channels/"+ids.channel+"/test", ""))
	ids.channelDelivery = rig.firstDelivery(b, "/api/v1/channels/"+ids.channel+"/deliveries")
	n := core.Notification{OwnerID: b.id, Kind: core.NotificationKind("webhook_disabled"), Title: "B's note", Message: "for B"}
	if err := gormstore.NewNotificationStore(rig.db).AddNotification(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	ids.notification = n.ID
	return ids
}

func (rig *isolationRig) firstDelivery(b isolationOwner, path string) string {
	rig.t.Helper()
	_, body := rig.api(b.api, "GET", path, "")
	var v struct{ Data []struct{ ID string } }
	if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.Data) == 0 {
		rig.t.Fatalf("deliveries %s: %v %s", path, err, body)
	}
	return v.Data[0].ID
}

// unknownOf is ids with each row replaced by an id no row has.
func unknownOf(ids bIDs) bIDs {
	u := func() string { return uuid.Must(uuid.NewV7()).String() }
	return bIDs{u(), u(), u(), u(), u(), u(), u(), u(), u(), u()}
}

// idPattern finds the ids an answer may echo back.
var idPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// scrub makes two answers comparable: ids and request ids differ.
func scrub(s string) string {
	s = idPattern.ReplaceAllString(s, "ID")
	s = regexp.MustCompile(`since=\d+`).ReplaceAllString(s, "since=")
	return regexp.MustCompile(`(?i)(request id|request_id|requestId)[^<"]*`).ReplaceAllString(s, "$1")
}

func fill(tmpl string, ids bIDs, mine isolationOwner, myPhrase, myHook, myChannel string) string {
	return strings.NewReplacer("{phrase}", ids.phrase, "{match}", ids.match, "{set}", ids.set, "{hook}", ids.hook,
		"{hookDelivery}", ids.hookDelivery, "{channel}", ids.channel, "{channelDelivery}", ids.channelDelivery,
		"{notification}", ids.notification, "{key}", ids.key, "{ingestKey}", ids.ingestKey,
		"{myPhrase}", myPhrase, "{myHook}", myHook, "{myChannel}", myChannel).Replace(tmpl)
}

// Owner A reaching owner B's rows by id, through every route of the API
// and the dashboard that takes one, gets the answer an id no row has
// gets, and B's rows are as they were.
func TestAnotherOwnersRowsAnswerAsUnknown(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer target.Close()
	rig := newIsolationRig(t)
	a, b := rig.owner("a@example.com"), rig.owner("b@example.com")
	theirs := rig.seedB(b, target.URL)
	// A has rows of each kind too, so a route pairing A's row with B's
	// (a delivery of B's under A's webhook) is tried.
	myPhrase := rig.data(rig.must(201)(rig.api(a.api, "POST", "/api/v1/keywords", `{"phrase":"acme","platform":"x"}`)), "id")
	myHook := rig.data(rig.must(201)(rig.api(a.api, "POST", "/api/v1/webhooks", `{"url":"`+target.URL+`/a"}`)), "id")
	myChannel := rig.data(rig.must(201)(rig.api(a.api, "POST", "/api/v1/channels", `{"kind":"ntfy","url":"`+target.URL+`/a"}`)), "id")
	unknown := unknownOf(theirs)

	apiCalls := [][3]string{
		{"GET", "/api/v1/keywords/{phrase}", ""},
		{"PATCH", "/api/v1/keywords/{phrase}", `{"status":"paused"}`},
		{"POST", "/api/v1/keywords/{phrase}/preview", `{"exclude":["fine"]}`},
		{"POST", "/api/v1/keywords/{phrase}/apply-filters", ""},
		{"POST", "/api/v1/keywords/{phrase}/apply-filters/{set}/undo", ""},
		{"POST", "/api/v1/keywords/{myPhrase}/apply-filters/{set}/undo", ""},
		{"GET", "/api/v1/matches/{match}", ""},
		{"GET", "/api/v1/matches/{match}/triage", ""},
		{"PATCH", "/api/v1/matches/{match}/triage", `{"read":true,"starred":true}`},
		{"POST", "/api/v1/triage", `{"ids":["{match}"],"read":true}`},
		{"GET", "/api/v1/trends?keywordId={phrase}", ""},
		{"GET", "/api/v1/matches?keywordId={phrase}", ""},
		{"GET", "/api/v1/matches/export?keywordId={phrase}", ""},
		{"PATCH", "/api/v1/webhooks/{hook}", `{"active":false}`},
		{"POST", "/api/v1/webhooks/{hook}/test", ""},
		{"GET", "/api/v1/webhooks/{hook}/deliveries", ""},
		{"POST", "/api/v1/webhooks/{hook}/deliveries/{hookDelivery}/retry", ""},
		{"POST", "/api/v1/webhooks/{myHook}/deliveries/{hookDelivery}/retry", ""},
		{"POST", "/api/v1/webhooks/{hook}/rotate-secret", ""},
		{"POST", "/api/v1/webhooks/{hook}/replay", `{"from":"2020-01-01T00:00:00Z"}`},
		{"GET", "/api/v1/channels/{channel}", ""},
		{"PATCH", "/api/v1/channels/{channel}", `{"active":false}`},
		{"POST", "/api/v1/channels/{channel}/test", ""},
		{"GET", "/api/v1/channels/{channel}/deliveries", ""},
		{"POST", "/api/v1/channels/{channel}/deliveries/{channelDelivery}/retry", ""},
		{"POST", "/api/v1/channels/{myChannel}/deliveries/{channelDelivery}/retry", ""},
		{"POST", "/api/v1/channels/{channel}/replay", `{"from":"2020-01-01T00:00:00Z"}`},
		{"DELETE", "/api/v1/webhooks/{hook}", ""},
		{"DELETE", "/api/v1/channels/{channel}", ""},
		{"DELETE", "/api/v1/keywords/{phrase}", ""},
	}
	for _, c := range apiCalls {
		path, body := fill(c[1], theirs, a, myPhrase, myHook, myChannel), fill(c[2], theirs, a, myPhrase, myHook, myChannel)
		st, got := rig.api(a.api, c[0], path, body)
		ust, want := rig.api(a.api, c[0], fill(c[1], unknown, a, myPhrase, myHook, myChannel), fill(c[2], unknown, a, myPhrase, myHook, myChannel))
		if st != ust || scrub(got) != scrub(want) {
			t.Errorf("%s %s as A: %d %s\nan unknown id: %d %s", c[0], c[1], st, got, ust, want)
		}
	}

	pageCalls := [][3]string{
		{"GET", "/app/phrases/{phrase}/filters", ""},
		{"POST", "/app/phrases/{phrase}/pause", ""},
		{"POST", "/app/phrases/{phrase}/resume", ""},
		{"POST", "/app/phrases/{phrase}/filters", "exclude=zzz"},
		{"POST", "/app/phrases/{phrase}/apply", ""},
		{"POST", "/app/phrases/{phrase}/apply/{set}/undo", ""},
		{"POST", "/app/phrases/{myPhrase}/apply/{set}/undo", ""},
		{"GET", "/app/phrases/{phrase}/delete", ""},
		{"POST", "/app/matches/{match}", "action=star"},
		{"POST", "/app/matches/bulk", "action=archive&id={match}"},
		{"GET", "/app/trends?phrase={phrase}", ""},
		{"GET", "/app/?phrase={phrase}", ""},
		{"GET", "/app/export?phrase={phrase}", ""},
		{"GET", "/app/webhooks/{hook}", ""},
		{"POST", "/app/webhooks/{hook}", "min_score=90"},
		{"POST", "/app/webhooks/{hook}/active", "active=off"},
		{"POST", "/app/webhooks/{hook}/test", ""},
		{"POST", "/app/webhooks/{hook}/deliveries/{hookDelivery}/redeliver", ""},
		{"POST", "/app/webhooks/{myHook}/deliveries/{hookDelivery}/redeliver", ""},
		{"GET", "/app/webhooks/{hook}/rotate", ""},
		{"POST", "/app/webhooks/{hook}/rotate", "overlap=0"},
		{"POST", "/app/webhooks/{hook}/replay", "from=2020-01-01T00:00"},
		{"GET", "/app/webhooks/{hook}/delete", ""},
		{"GET", "/app/channels/{channel}", ""},
		{"POST", "/app/channels/{channel}", "min_score=90&frequency=at+once"},
		{"POST", "/app/channels/{channel}/destination", "url=" + url.QueryEscape(target.URL+"/stolen")},
		{"POST", "/app/channels/{channel}/active", "active=off"},
		{"POST", "/app/channels/{channel}/test", ""},
		{"POST", "/app/channels/{channel}/deliveries/{channelDelivery}/redeliver", ""},
		{"POST", "/app/channels/{myChannel}/deliveries/{channelDelivery}/redeliver", ""},
		{"POST", "/app/channels/{channel}/replay", "from=2020-01-01T00:00"},
		{"GET", "/app/channels/{channel}/delete", ""},
		{"GET", "/app/webhooks/{channel}", ""},
		{"GET", "/app/channels/{hook}", ""},
		{"POST", "/app/keys/{key}/revoke", ""},
		{"POST", "/app/ingest-keys/{ingestKey}/revoke", ""},
		{"POST", "/app/notifications/{notification}/read", ""},
		{"GET", "/app/accounts/{phrase}/challenge", ""},
		{"POST", "/app/accounts/{phrase}/resolve", ""},
		{"POST", "/app/webhooks/{hook}/delete", ""},
		{"POST", "/app/channels/{channel}/delete", ""},
		{"POST", "/app/phrases/{phrase}/delete", ""},
	}
	for _, c := range pageCalls {
		path, form := fill(c[1], theirs, a, myPhrase, myHook, myChannel), fill(c[2], theirs, a, myPhrase, myHook, myChannel)
		st, got := rig.page(a, c[0], path, form)
		ust, want := rig.page(a, c[0], fill(c[1], unknown, a, myPhrase, myHook, myChannel), fill(c[2], unknown, a, myPhrase, myHook, myChannel))
		if st != ust || scrub(got) != scrub(want) {
			t.Errorf("%s %s as A: %d, an unknown id: %d; they part at %s", c[0], c[1], st, ust, parting(scrub(got), scrub(want)))
		}
	}

	// Nothing of B's shows among A's own: not B's posts in A's matches,
	// window or preview, not B's cookie jar, accounts or notifications.
	rig.must(200)(rig.api(b.ingest, "PUT", "/session?platform=x",
		`[{"domain":".x.com","name":"auth_token","value":"b-auth-cookie","path":"/","secure":true,"httpOnly":true},`+
			`{"domain":".x.com","name":"ct0","value":"b-ct0-cookie","path":"/","secure":true}]`))
	for _, c := range [][3]string{
		{"GET", "/api/v1/matches", ""},
		{"GET", "/api/v1/matches/export", ""},
		{"POST", "/api/v1/keywords/preview", `{"phrase":"acme","platform":"x"}`},
		{"POST", "/api/v1/keywords/" + myPhrase + "/preview", `{"exclude":["zzz"]}`},
		{"GET", "/api/v1/trends", ""},
		{"GET", "/session?platform=x", ""},
	} {
		key := a.api
		if c[1] == "/session?platform=x" {
			key = a.ingest
		}
		_, body := rig.api(key, c[0], c[1], c[2])
		for _, leak := range []string{theirs.match, "bob", "love", "b-auth-cookie", "\"total\":2", "\"matches\":2"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s %s as A holds B's %q: %s", c[0], c[1], leak, body)
			}
		}
	}
	if _, body := rig.page(b, "GET", "/app/?archived=any", ""); !strings.Contains(body, "bob") {
		t.Fatalf("B's inbox does not show B's matches, so A's is no proof: %.2000s", body)
	}
	for _, path := range []string{"/app/", "/app/accounts", "/app/notifications", "/app/webhooks", "/app/keys", "/app/trends", "/app/export"} {
		_, body := rig.page(a, "GET", path, "")
		for _, leak := range []string{"bob", "I love", "B&#39;s note", "b@example.com", theirs.hook, theirs.channel, theirs.key} {
			if strings.Contains(body, leak) {
				t.Errorf("GET %s as A holds B's %q", path, leak)
			}
		}
	}

	// An idempotency key is the owner's: A's request under the key B
	// used makes A's own phrase rather than replay B's.
	idem := func(o isolationOwner) (int, string) {
		req := httptest.NewRequest("POST", "/api/v1/keywords", strings.NewReader(`{"phrase":"zeta","platform":"facebook"}`))
		req.Header.Set("Authorization", "Bearer "+o.api)
		req.Header.Set("Idempotency-Key", "same-key")
		rec := httptest.NewRecorder()
		rig.root.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	bZeta := rig.data(rig.must(201)(idem(b)), "id")
	if aZeta := rig.data(rig.must(201)(idem(a)), "id"); aZeta == bZeta {
		t.Errorf("A's create under B's idempotency key replayed B's phrase %s", bZeta)
	}

	// B's rows are as B left them.
	_, body := rig.api(b.api, "GET", "/api/v1/keywords/"+theirs.phrase, "")
	if !strings.Contains(body, `"status":"listening"`) || !strings.Contains(body, `"exclude":["love"]`) {
		t.Errorf("B's phrase: %s", body)
	}
	_, body = rig.api(b.api, "GET", "/api/v1/matches/"+theirs.match+"/triage", "")
	if strings.Contains(body, "true") && !strings.Contains(body, `"archived":true`) {
		t.Errorf("B's match triage: %s", body)
	}
	_, body = rig.api(b.api, "GET", "/api/v1/webhooks", "")
	if !strings.Contains(body, theirs.hook) || !strings.Contains(body, `"active":true`) {
		t.Errorf("B's webhooks: %s", body)
	}
	_, body = rig.api(b.api, "GET", "/api/v1/channels/"+theirs.channel, "")
	if !strings.Contains(body, `"active":true`) || strings.Contains(body, "stolen") {
		t.Errorf("B's channel: %s", body)
	}
	if st, body := rig.api(b.api, "GET", "/api/v1/me", ""); st != 200 {
		t.Errorf("B's API key: %d %s", st, body)
	}
	if st, body := rig.api(b.ingest, "GET", "/phrases?platform=x", ""); st != 200 {
		t.Errorf("B's ingest key: %d %s", st, body)
	}
	if st, body := rig.api(b.api, "POST", "/api/v1/keywords/"+theirs.phrase+"/apply-filters/"+theirs.set+"/undo", ""); st != 200 {
		t.Errorf("B's archived set: %d %s", st, body)
	}
	if strings.Contains(rig.logs.String(), "tk_bsecrettoken") {
		t.Errorf("the channel's token is in the logs")
	}
}

// parting shows two answers from where they first differ.
func parting(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("\n%.300s\n----\n%.300s", a[max(0, i-100):], b[max(0, i-100):])
}
