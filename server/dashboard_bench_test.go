package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/dashboard"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkInboxPage measures the dashboard's inbox page (session check,
// the phrase menu, 25 matches of 100,000 with their triage, HTML) beside
// GET /api/v1/matches?limit=25 on the same SQLite store, both through
// their whole stack over loopback HTTP with the same clients for the
// same time, and reports both rates and their ratio. Every page is
// rendered afresh. peak-heap-MB and peak-RSS-MB are this process's over
// the rounds: both servers, their clients and SQLite alike.
//
//	go test -run '^$' -bench InboxPage -benchtime 1x ./server
func BenchmarkInboxPage(b *testing.B) {
	ctx := context.Background()
	db := dbtest.File(b)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := benchtest.Seed(b, db, 100_000)
	o, secret, phrases, matches := f.Owner, f.APIKey, f.Phrases, f.Matches
	inbox := app.NewInbox(gormstore.NewTriageStore(db))
	// The newest ten matches read, three of them archived, as an owner's
	// inbox has.
	page, err := matches.List(ctx, o.ID, ports.MatchQuery{Limit: 10})
	if err != nil {
		b.Fatal(err)
	}
	yes := true
	for i, m := range page.Matches {
		c := core.TriageChange{Read: &yes}
		if i%3 == 1 {
			c.Archived = &yes // three of the newest ten archived: the page reads past them
		}
		if _, err := inbox.Set(ctx, o.ID, m.ID, c); err != nil {
			b.Fatal(err)
		}
	}
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Mailer: smtpmail.NewLogMailer(quiet),
		Limiter: ratelimit.NewMemory(nil), Log: quiet}, app.SessionConfig{})
	link, err := sessions.LoginLink(ctx, o.ID)
	if err != nil {
		b.Fatal(err)
	}
	cookie, _, err := sessions.SignIn(ctx, link[len(link)-43:])
	if err != nil {
		b.Fatal(err)
	}
	api := httpapi.New(httpapi.Config{RateLimit: 1 << 30, Logger: quiet},
		httpapi.Deps{Keys: f.Keys, Phrases: phrases, Matches: matches, Limiter: ratelimit.NewMemory(nil)})
	dash, err := dashboard.New(dashboard.Config{Logger: quiet}, dashboard.Deps{Sessions: sessions, Inbox: inbox, Matches: matches, Phrases: phrases,
		// Every signed-in page counts the owner's unread notifications.
		Notifications: dashNotifications{app.NewNotifications(app.NotificationDeps{Store: gormstore.NewNotificationStore(db),
			Owners: gormstore.NewOwnerStore(db), Mailer: smtpmail.NewLogMailer(quiet), Log: quiet}, func() string { return "" })}})
	if err != nil {
		b.Fatal(err)
	}
	apiSrv, dashSrv := httptest.NewServer(api), httptest.NewServer(dash)
	defer apiSrv.Close()
	defer dashSrv.Close()

	get := f.Getter(b, &http.Cookie{Name: "earshot_session", Value: cookie})
	inboxURL, apiURL := dashSrv.URL+"/app/", apiSrv.URL+"/api/v1/matches?limit=25"
	if os.Getenv("EARSHOT_BENCH_PROFILE") != "" {
		for range 3000 {
			req := httptest.NewRequest("GET", "/app/", nil)
			req.AddCookie(&http.Cookie{Name: "earshot_session", Value: cookie})
			dash.ServeHTTP(httptest.NewRecorder(), req)
			req = httptest.NewRequest("GET", "/api/v1/matches?limit=25", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			api.ServeHTTP(httptest.NewRecorder(), req)
		}
		return
	}
	pageBytes := len(get(inboxURL))
	get(apiURL)

	// The two sides take turns in short rounds, in alternating order, with
	// the same number of concurrent clients, so that both meet the same
	// load from whatever else runs on the machine; b.N is ignored (run
	// with -benchtime 1x).
	run := func(url string, d time.Duration) (int64, time.Duration) {
		return benchtest.Load(16, d, func() { get(url) })
	}
	stop := peakmem.Measure(b)
	var apiN, inboxN int64
	var apiT, inboxT time.Duration
	for round := range 8 {
		for i := range 2 {
			if (round+i)%2 == 0 {
				n, t := run(apiURL, 500*time.Millisecond)
				apiN, apiT = apiN+n, apiT+t
			} else {
				n, t := run(inboxURL, 500*time.Millisecond)
				inboxN, inboxT = inboxN+n, inboxT+t
			}
		}
	}
	stop()
	full := float64(apiN) / apiT.Seconds()
	page25 := float64(inboxN) / inboxT.Seconds()
	b.ReportMetric(full, "api-req/s")
	b.ReportMetric(page25, "inbox-req/s")
	b.ReportMetric(page25/full, "ratio")
	b.ReportMetric(float64(pageBytes), "page-bytes")
}
