package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// BenchmarkIngest measures POST /ingest over HTTP in batches of 100 posts
// (key check, validation, matching, one transaction per batch, each post
// kept in the owner's window of recent posts as serve keeps it) beside a
// raw batched insert of the same rows with the same driver, in the same
// run, and reports posts per second for each and their ratio; and beside
// a raw insert of the rows without the window's (ratio-unkept), the
// baseline before posts were kept. peak-heap-MB and peak-RSS-MB are
// this process's while the API ingests (the server and its client; on
// Postgres the database's memory is the server's, not counted).
//
//	EARSHOT_TEST_POSTGRES_URL=postgres://... go test -run '^$' -bench Ingest -benchtime 1x ./app
func BenchmarkIngest(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchIngest(b, "sqlite://"+filepath.Join(b.TempDir(), "ingest.db")) })
	b.Run("postgres", func(b *testing.B) { benchIngest(b, pgtest.URL(b)) })
}

const benchBatches = 200

func benchIngest(b *testing.B, url string) {
	ctx := context.Background()
	db := dbtest.Open(b, url)
	owners, keyStore := gormstore.NewOwnerStore(db), gormstore.NewKeyStore(db)
	keys := NewKeys(keyStore, owners, ports.SystemClock{})
	limits := core.Limits{PhrasesPerPlatform: 10, AccountsPerPlatform: 1}
	phraseStore := gormstore.NewPhraseStore(db)
	phrases := NewPhrases(phraseStore, limits, ports.SystemClock{})
	matchStore := gormstore.NewMatchStore(db)
	window := NewWindow(WindowDeps{Recent: gormstore.NewRecentStore(db)}, WindowConfig{Days: DefaultRecentDays, Posts: DefaultRecentPosts})
	ingest := NewIngest(IngestDeps{Matches: matchStore, Accounts: gormstore.NewAccountStore(db), Matchers: NewMatchers(phraseStore), Log: quiet,
		Window: window}, limits)
	helper := httpapi.NewHelper(httpapi.HelperConfig{Logger: quiet}, keys, ingest, nil)
	srv := httptest.NewServer(helper)
	defer srv.Close()

	batch := func(owner string, n int) []map[string]any {
		posts := make([]map[string]any, 100)
		for i := range posts {
			text := fmt.Sprintf("post %d of batch %d: we compared three tools last week and wrote up what we found", i, n)
			if i%10 == 0 {
				text += " — acme crm was the cheapest"
			}
			posts[i] = map[string]any{"externalId": fmt.Sprintf("%s-%d-%d", owner, n, i), "authorName": "author",
				"body": []string{text}, "url": fmt.Sprintf("https://x.com/a/status/%d%d", n, i), "likes": i, "comments": 1}
		}
		return posts
	}
	owner := func(email string) (string, string) {
		o, err := NewOwners(owners, keys).Create(ctx, email, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := phrases.Add(ctx, o.ID, "acme crm", "x", "", ""); err != nil {
			b.Fatal(err)
		}
		secret, _, err := keys.CreateIngestKey(ctx, o.ID, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return o.ID, secret
	}

	viaHTTP, secret := owner("http@example.com")
	bodies := make([][]byte, benchBatches)
	for n := range bodies {
		bodies[n], _ = json.Marshal(map[string]any{"platform": "x", "posts": batch(viaHTTP, n)})
	}
	stop := peakmem.Measure(b)
	start := time.Now()
	for _, body := range bodies {
		req, _ := http.NewRequest("POST", srv.URL+"/ingest", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	apiRate := float64(benchBatches*100) / time.Since(start).Seconds()
	stop()

	// The same rows, inserted as plainly as the driver allows: one
	// transaction and a multi-row INSERT per table per batch. With kept,
	// the posts go into the window of recent posts too, as the API keeps
	// them (migration 26: the post's fields as one JSON value); without,
	// the rows the API wrote before the window.
	sqlDB := db.SQL()
	ph := func(i int) string {
		if db.Postgres() {
			return fmt.Sprintf("$%d", i)
		}
		return "?"
	}
	rawRun := func(email string, kept bool) float64 {
		raw, _ := owner(email)
		p, _ := phraseStore.Phrases(ctx, raw, ports.PhraseFilter{})
		// The rows are made before the clock starts, as the API's bodies
		// are: making them is not inserting them.
		rawBatches := make([][]map[string]any, benchBatches)
		keptPosts := make([][]string, benchBatches)
		for n := range rawBatches {
			rawBatches[n] = batch(raw, n)
			for _, post := range rawBatches[n] {
				doc, _ := json.Marshal(map[string]any{"id": post["externalId"], "author": "author", "title": "",
					"text": post["body"].([]string)[0], "url": post["url"], "likes": post["likes"], "comments": 1, "posted": 0})
				keptPosts[n] = append(keptPosts[n], string(doc))
			}
		}
		start := time.Now()
		var us int64 = time.Now().UnixMicro()
		for n := 0; n < benchBatches; n++ {
			tx, err := sqlDB.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			var postSQL, keptSQL, matchSQL strings.Builder
			var postArgs, keptArgs, matchArgs []any
			postSQL.WriteString("INSERT INTO posts (owner_id, platform, external_id, created_at) VALUES ")
			if db.Postgres() {
				keptSQL.WriteString("INSERT INTO recent_posts (owner_id, platform, community, seen_at, post) VALUES ")
			} else {
				keptSQL.WriteString("INSERT INTO recent_posts (owner_id, lid, platform, community, seen_at, post) VALUES ")
			}
			matchSQL.WriteString("INSERT INTO matches (id, owner_id, phrase_id, phrase, platform, created_us, external_id, author, body, url, likes, comments) VALUES ")
			for i, post := range rawBatches[n] {
				if i > 0 {
					postSQL.WriteString(",")
					keptSQL.WriteString(",")
				}
				k := len(postArgs)
				fmt.Fprintf(&postSQL, "(%s,%s,%s,%s)", ph(k+1), ph(k+2), ph(k+3), ph(k+4))
				postArgs = append(postArgs, raw, "x", post["externalId"], us)
				k = len(keptArgs)
				if db.Postgres() {
					fmt.Fprintf(&keptSQL, "(%s,%s,%s,%s,%s)", ph(k+1), ph(k+2), ph(k+3), ph(k+4), ph(k+5))
					keptArgs = append(keptArgs, raw, "x", "", us, keptPosts[n][i])
				} else {
					keptSQL.WriteString("(?,?,?,?,?,?)")
					keptArgs = append(keptArgs, raw, 1, "x", "", us, keptPosts[n][i])
				}
				if i%10 == 0 {
					if len(matchArgs) > 0 {
						matchSQL.WriteString(",")
					}
					k := len(matchArgs)
					fmt.Fprintf(&matchSQL, "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", ph(k+1), ph(k+2), ph(k+3), ph(k+4), ph(k+5), ph(k+6),
						ph(k+7), ph(k+8), ph(k+9), ph(k+10), ph(k+11), ph(k+12))
					us++
					row := []any{fmt.Sprintf("%s-%d-%d", email, n, i), raw, p[0].ID, "acme crm", "x", us,
						post["externalId"], "author", post["body"].([]string)[0], post["url"], post["likes"], 1}
					matchArgs = append(matchArgs, row...)
				}
			}
			if _, err := tx.ExecContext(ctx, postSQL.String(), postArgs...); err != nil {
				b.Fatal(err)
			}
			if kept {
				if _, err := tx.ExecContext(ctx, keptSQL.String(), keptArgs...); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := tx.ExecContext(ctx, matchSQL.String(), matchArgs...); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		return float64(benchBatches*100) / time.Since(start).Seconds()
	}
	rawRate := rawRun("raw@example.com", true)
	unkeptRate := rawRun("unkept@example.com", false)

	got, _ := phraseStore.Phrases(ctx, viaHTTP, ports.PhraseFilter{})
	if got[0].Matches != benchBatches*10 {
		b.Fatalf("%d matches stored through the API, want %d", got[0].Matches, benchBatches*10)
	}
	b.ReportMetric(apiRate, "api-posts/s")
	b.ReportMetric(rawRate, "raw-posts/s")
	b.ReportMetric(apiRate/rawRate, "ratio")
	b.ReportMetric(unkeptRate, "raw-unkept-posts/s")
	b.ReportMetric(apiRate/unkeptRate, "ratio-unkept")
}
