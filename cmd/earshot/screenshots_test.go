package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/core"
)

// TestDashboardScreenshots writes a PNG of every dashboard page at
// desktop and phone width into $EARSHOT_SCREENSHOTS (`make
// screenshots`), so a reviewer can look without a browser. Without that
// variable it does nothing.
func TestDashboardScreenshots(t *testing.T) {
	dir := os.Getenv("EARSHOT_SCREENSHOTS")
	if dir == "" {
		t.Skip("EARSHOT_SCREENSHOTS is unset: run make screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=2")
	link := s.URL + "/app/login/" + linkRe.FindStringSubmatch(s.stdout.String())[1]
	for _, p := range []map[string]any{
		{"phrase": "acme crm", "platform": "x"},
		{"phrase": "acme", "platform": "reddit", "community": "r/SaaS"},
		{"phrase": "invoice tool", "platform": "facebook"},
	} {
		s.call("POST", "/api/v1/keywords", s.APIKey, p).want(t, 201, "")
	}
	s.ingest(s.IngestKey, "x",
		xPost("s1", "maya_builds", "We are switching from spreadsheets. Is acme crm worth it for a team of five? Looking to buy this month."),
		xPost("s2", "devon", "acme crm support took three days to answer a billing question. Not great."),
		xPost("s3", "priya.k", "Shoutout to acme crm, the pipeline view saved my week."),
		xPost("s4", "tom", "Anyone compared acme crm with the usual suspects? Recommendations welcome."),
		xPost("s5", `<script>alert("x")</script>`, `acme crm "><img src=x onerror=alert(1)> is shown as text, never run`),
	)
	s.ingest(s.IngestKey, "facebook", map[string]any{"externalId": "f1", "authorName": "Local Bakers Group", "body": []string{"Which invoice tool do you all use for wholesale orders?"}, "url": "https://facebook.com/groups/x/posts/1"})
	// The trends count the six matches once they are scored.
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool {
		return dataOf(t, s.call("GET", "/api/v1/trends", s.APIKey, nil).want(t, 200, ""))["total"] == 6.0
	}, func() string { return "the six matches were not scored" })
	ms := s.call("GET", "/api/v1/matches", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(ms) < 2 {
		t.Fatalf("%d matches", len(ms))
	}
	s.call("PATCH", "/api/v1/matches/"+ms[1].(map[string]any)["id"].(string)+"/triage", s.APIKey, map[string]any{"read": true, "starred": true}).want(t, 200, "")
	s.call("PATCH", "/api/v1/matches/"+ms[2].(map[string]any)["id"].(string)+"/triage", s.APIKey, map[string]any{"read": true}).want(t, 200, "")
	phraseID := dataOf(t, s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme pricing", "platform": "x"}).want(t, 201, ""))["id"].(string)

	fb := s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "").JSON(t)
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 429}).want(t, 200, "")

	// A second server on a plan with webhooks: one that works, with a
	// test ping and matches in its log, and one whose receiver failed
	// until it switched itself off.
	pro := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=5",
		"EARSHOT_WEBHOOK_RETRY_SCHEDULE=10ms")
	pro.call("POST", "/api/v1/keywords", pro.APIKey, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	good, _ := hook(t, pro, pro.APIKey, map[string]any{"min_score": 0})
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "receiver down", http.StatusBadGateway)
	}))
	defer broken.Close()
	bad := dataOf(t, pro.call("POST", "/api/v1/webhooks", pro.APIKey, map[string]any{"url": broken.URL + "/earshot", "min_score": 0, "platforms": []string{"x"}}).want(t, 201, ""))
	pro.call("POST", "/api/v1/webhooks/"+good["id"].(string)+"/test", pro.APIKey, nil).want(t, 200, "")
	for i := range core.MaxConsecutiveFailures {
		pro.ingest(pro.IngestKey, "x", xPost(fmt.Sprint("w", i), "maya_builds", fmt.Sprint("Is acme crm worth it for a team of ", i+3, "? Looking to buy this month.")))
	}
	waitDeliveries(t, pro, pro.APIKey, good["id"].(string), func(l []any) bool {
		n := 0
		for _, d := range l {
			if d.(map[string]any)["status"] == "delivered" {
				n++
			}
		}
		return n == core.MaxConsecutiveFailures+1
	})
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool { return webhookOf(t, pro, pro.APIKey, bad["id"].(string))["active"] == false },
		func() string { return "the broken webhook did not switch itself off" })
	// A channel whose service refuses: its test failed, shown in the list and on its page.
	chanID := dataOf(t, pro.call("POST", "/api/v1/channels", pro.APIKey, map[string]any{"kind": "ntfy", "url": broken.URL + "/" + browserNtfyTopic,
		"min_score": 0}).want(t, 201, ""))["id"].(string)
	pro.call("POST", "/api/v1/channels/"+chanID+"/test", pro.APIKey, nil).want(t, 200, "")

	type shot struct {
		name string
		load func()
	}
	open := func(path string) func() { return func() { b.open(s.URL + path) } }
	signedOut := []shot{
		{"login", open("/app/login")},
		{"login-sent", func() {
			b.open(s.URL + "/app/login")
			b.do(sendKeys("#email", "owner@localhost"))
			b.submitAndWait(`main form button[type="submit"]`)
		}},
		{"link-used", func() { b.signIn(s.URL + "/app/login/" + linkRe.FindStringSubmatch(s.stdout.String())[1]) }},
	}
	signedIn := []shot{
		{"inbox", open("/app/")},
		{"inbox-filtered", open("/app/?show=unread&platform=x&min_score=50")},
		{"inbox-search", open("/app/?q=%22acme+crm%22+-support&show=all")},
		{"inbox-empty-filter", open("/app/?platform=reddit")},
		{"phrases", open("/app/phrases")},
		{"phrases-error", func() {
			b.open(s.URL + "/app/phrases")
			b.do(setValue("#p-platform", "x"), sendKeys("#p-phrase", "one too many"))
			b.submitAndWait(`form.add button[type="submit"]`)
		}},
		{"phrase-delete", open("/app/phrases/" + phraseID + "/delete")},
		{"phrase-filters", open("/app/phrases/" + phraseID + "/filters")},
		{"phrase-preview", func() {
			b.open(s.URL + "/app/phrases")
			b.click("details.phrase-filters summary", `document.querySelector("details.phrase-filters").open`)
			b.do(setValue("#p-platform", "x"), setValue("#p-phrase", "acme crm"), setValue("#pf-exclude", "support"))
			b.submitAndWait(`form.add button[value="preview"]`)
		}},
		{"trends", open("/app/trends")},
		{"trends-90-days", open("/app/trends?days=90")},
		{"plan", open("/app/plan")},
		{"keys", open("/app/keys")},
		{"key-created", func() {
			b.open(s.URL + "/app/keys")
			b.do(setValue("#k-name", "reporting"))
			b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
		}},
		{"ingest-key-created", func() {
			b.open(s.URL + "/app/keys")
			b.do(setValue("#i-name", "laptop helper"))
			b.submitAndWait(`form[action="/app/ingest-keys"] button[type="submit"]`)
		}},
		{"keys-limit", func() {
			for i := eval[int](b, `document.querySelectorAll("#api-keys tbody tr:not(.revoked)").length`); i <= core.MaxAPIKeys; i++ {
				b.open(s.URL + "/app/keys")
				b.do(setValue("#k-name", fmt.Sprint("key ", i)))
				b.submitAndWait(`form[action="/app/keys"] button[type="submit"]`)
			}
		}},
		{"webhooks-free", open("/app/webhooks")},
		{"accounts", open("/app/accounts")},
		{"challenge", open("/app/accounts/" + fb["accountId"].(string) + "/challenge")},
		{"notifications", open("/app/notifications")},
		{"not-found", open("/app/nowhere")},
		{"phrase-paused", func() {
			// Listening again first, so each width pauses it and shows the notice.
			s.call("PATCH", "/api/v1/keywords/"+phraseID, s.APIKey, map[string]any{"status": "listening"}).want(t, 200, "")
			b.open(s.URL + "/app/phrases")
			b.submitAndWait(`form[action="/app/phrases/` + phraseID + `/pause"] button`)
		}},
		{"account", open("/app/account")},
		{"account-alerts-error", func() {
			b.open(s.URL + "/app/account")
			b.do(setValue("#frequency", "daily"), setValue("#zone", "Mars/Olympus"))
			b.submitAndWait(`form[action="/app/account/alerts"] button[type="submit"]`)
		}},
	}
	// An owner with nothing yet: the empty inbox and the empty lists.
	empty := []shot{
		{"inbox-empty", open("/app/")},
		{"phrases-empty", open("/app/phrases")},
		{"notifications-empty", open("/app/notifications")},
	}
	popen := func(path string) func() { return func() { b.open(pro.URL + path) } }
	pros := []shot{
		{"webhooks", popen("/app/webhooks")},
		{"webhooks-error", func() {
			b.open(pro.URL + "/app/webhooks")
			b.do(setValue("#w-url", "ftp://hooks.example.com/in"))
			b.submitAndWait(`form.add button[type="submit"]`)
		}},
		{"webhook-created", func() {
			b.open(pro.URL + "/app/webhooks")
			b.do(setValue("#w-url", fmt.Sprintf("https://hooks.example.com/in/%d", time.Now().UnixNano())))
			b.submitAndWait(`form.add button[type="submit"]`)
		}},
		{"webhook", popen("/app/webhooks/" + good["id"].(string))},
		{"webhook-test", func() {
			b.open(pro.URL + "/app/webhooks/" + good["id"].(string))
			b.submitAndWait(`#test`)
		}},
		{"webhook-off", popen("/app/webhooks/" + bad["id"].(string))},
		{"webhook-delete", popen("/app/webhooks/" + bad["id"].(string) + "/delete")},
		{"notifications-webhook-off", popen("/app/notifications")},
		{"channel-test-failed", func() {
			b.open(pro.URL + "/app/channels/" + chanID)
			b.submitAndWait(`#test`)
		}},
	}
	widths := []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}}
	take := func(shots []shot) {
		for _, sh := range shots {
			for _, w := range widths {
				opts := []chromedp.EmulateViewportOption{}
				if w.mobile {
					opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(2))
				}
				b.do(chromedp.EmulateViewport(w.width, w.height, opts...))
				sh.load()
				png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(dir, fmt.Sprintf("%s-%s.png", sh.name, w.name))
				if err := os.WriteFile(name, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s", name)
			}
		}
	}
	take(signedOut[:2])
	b.signIn(link)
	take(signedOut[2:])
	b.signIn(s.loginLink(s.OwnerID))
	take(signedIn)
	// Made only now: a second owner changes the plan's words at a limit.
	fresh := s.mustAdmin("owner", "create", "--email", "new@example.com")
	b.signIn(s.loginLink(fresh))
	take(empty)
	b.signIn(pro.loginLink(pro.OwnerID))
	take(pros)
}
