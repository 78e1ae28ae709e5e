package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/dashboard"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// BenchmarkTrendsPage measures the dashboard's trends page (session
// check, the phrase menu, the daily counts of 90 days, three SVG charts
// and their tables) for an owner whose counts are those of 1,000,000
// matches over the last 90 days: ten phrases, every intent and score
// band on every day, 6,300 rows of ten bands, written straight into the table as
// scoring would have left them. Beside it, a handler that writes the
// same bytes from memory, over loopback HTTP in the same run, one
// client at a time, in alternating rounds. It reports the milliseconds
// a page takes, all phrases and one, over 90 and 30 days, and the ratio
// to the same bytes. SQLite in a file; Postgres too when
// EARSHOT_TEST_POSTGRES_URL is set. peak-heap-MB and peak-RSS-MB are
// this process's over the three views (the Postgres server's memory is
// not counted).
//
//	go test -run '^$' -bench TrendsPage -benchtime 1x ./server
func BenchmarkTrendsPage(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchTrendsPage(b, dbtest.File(b)) })
	if os.Getenv(pgtest.Env) != "" {
		b.Run("postgres", func(b *testing.B) { benchTrendsPage(b, dbtest.Open(b, pgtest.URL(b))) })
	}
}

func benchTrendsPage(b *testing.B, db *gormstore.DB) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	clock := ports.SystemClock{}
	ownerStore := gormstore.NewOwnerStore(db)
	keys := app.NewKeys(gormstore.NewKeyStore(db), ownerStore, clock)
	o, err := app.NewOwners(ownerStore, keys).Create(ctx, "trends-bench@example.com", "")
	if err != nil {
		b.Fatal(err)
	}
	phrases := app.NewPhrases(gormstore.NewPhraseStore(db), core.Limits{PhrasesPerPlatform: 10}, clock)
	var ps []core.Phrase
	for i := range 10 {
		platform, community := []string{"x", "reddit", "facebook"}[i%3], ""
		if platform == "reddit" {
			community = "saas"
		}
		p, _, err := phrases.Add(ctx, o.ID, fmt.Sprintf("acme %d", i), platform, community, "")
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, p)
	}
	fillCounts(b, db, o.ID, ps, 1_000_000)

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
	dash, err := dashboard.New(dashboard.Config{Logger: quiet}, dashboard.Deps{Sessions: sessions, Phrases: phrases,
		Trends: app.NewTrends(gormstore.NewTrendStore(db), gormstore.NewPhraseStore(db), clock),
		// Every signed-in page counts the owner's unread notifications.
		Notifications: dashNotifications{app.NewNotifications(app.NotificationDeps{Store: gormstore.NewNotificationStore(db),
			Owners: ownerStore, Mailer: smtpmail.NewLogMailer(quiet), Log: quiet}, func() string { return "" })}})
	if err != nil {
		b.Fatal(err)
	}
	dashSrv := httptest.NewServer(dash)
	defer dashSrv.Close()
	get := benchtest.Fixture{}.Getter(b, &http.Cookie{Name: "earshot_session", Value: cookie})

	stop := peakmem.Measure(b)
	defer stop()
	for _, view := range []struct{ name, query string }{
		{"all-90d", "?days=90"}, {"all-30d", "?days=30"}, {"phrase-90d", "?days=90&phrase=" + ps[0].ID},
	} {
		page := get(dashSrv.URL + "/app/trends" + view.query)
		if !strings.Contains(string(page), "1,000,000 scored matches") && view.name == "all-90d" {
			b.Fatalf("the page does not count the million matches:\n%.2000s", page)
		}
		same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		}))
		get(same.URL)
		// One client: the time of a page is what an owner waits. The two
		// sides take turns in short rounds so both meet the same load
		// from whatever else runs on the machine; b.N is ignored.
		var pageN, sameN int64
		var pageT, sameT time.Duration
		for round := range 6 {
			for i := range 2 {
				if (round+i)%2 == 0 {
					n, t := benchtest.Load(1, 300*time.Millisecond, func() { get(dashSrv.URL + "/app/trends" + view.query) })
					pageN, pageT = pageN+n, pageT+t
				} else {
					n, t := benchtest.Load(1, 300*time.Millisecond, func() { get(same.URL) })
					sameN, sameT = sameN+n, sameT+t
				}
			}
		}
		same.Close()
		pageMs := pageT.Seconds() * 1000 / float64(pageN)
		sameMs := sameT.Seconds() * 1000 / float64(sameN)
		b.ReportMetric(pageMs, view.name+"-ms/page")
		b.ReportMetric(sameMs, view.name+"-same-bytes-ms")
		b.ReportMetric(pageMs/sameMs, view.name+"-ratio")
		b.ReportMetric(float64(len(page)), view.name+"-bytes")
	}
}

// fillCounts writes the daily counts of total matches of the owner's
// phrases over the last 90 days, as scoring leaves them: every phrase,
// intent and score band on every day, the counts uneven, summing to
// total exactly.
func fillCounts(b *testing.B, db *gormstore.DB, ownerID string, ps []core.Phrase, total int64) {
	today := core.DayOf(time.Now())
	type row struct {
		day    int64
		p      core.Phrase
		intent core.Intent
		bands  [core.ScoreBands]int64 // weights, then counts
	}
	var rows []row
	var weights int64
	for d := range int64(core.MaxTrendDays) {
		for pi, p := range ps {
			for ii, intent := range core.Intents {
				r := row{day: today - d, p: p, intent: intent}
				for band := range r.bands {
					r.bands[band] = 1 + (d*7+int64(pi)*3+int64(ii)*5+int64(band))%11
					weights += r.bands[band]
				}
				rows = append(rows, r)
			}
		}
	}
	var sum int64
	for i := range rows {
		for band, w := range rows[i].bands {
			rows[i].bands[band] = total * w / weights
			sum += rows[i].bands[band]
		}
	}
	rows[0].bands[0] += total - sum
	tx, err := db.SQL().Begin()
	if err != nil {
		b.Fatal(err)
	}
	const per = 200
	for len(rows) > 0 {
		n := min(per, len(rows))
		var args []any
		q := "INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, band0, band1, band2, band3, band4, band5, band6, band7, band8, band9) VALUES "
		for i, r := range rows[:n] {
			if i > 0 {
				q += ", "
			}
			q += "("
			for c := range 15 {
				if c > 0 {
					q += ", "
				}
				q += fmt.Sprintf("$%d", 15*i+c+1)
			}
			q += ")"
			args = append(args, ownerID, r.day, string(r.p.Platform), string(r.intent), r.p.ID)
			for _, n := range r.bands {
				args = append(args, n)
			}
		}
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	// As the database's own statistics would be after a day of scoring.
	if _, err := db.SQL().Exec("ANALYZE"); err != nil {
		b.Fatal(err)
	}
}
