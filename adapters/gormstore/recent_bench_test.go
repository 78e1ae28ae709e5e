package gormstore

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/bench/matchbench"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// phraseOnly reads the index on Postgres as RecentPosts did before it
// passed posts whose phrase lies past a word's 255th place: the phrase
// query alone. The benchmark compares a preview through it and through
// RecentPosts in one run; every post of its window is indexed, so the
// posts not indexed yet, which both read alike, are left out.
type phraseOnly struct{ *RecentStore }

func (s phraseOnly) RecentPosts(ctx context.Context, q ports.RecentQuery, each func(core.RecentPost) bool) (bool, error) {
	db, phrase := s.db.with(ctx), strings.Join(q.Words, " ")
	var lexemes int
	if err := db.Raw("SELECT numnode(phraseto_tsquery('simple', ?))", phrase).Scan(&lexemes).Error; err != nil || lexemes == 0 {
		if err != nil {
			return false, err
		}
		return s.RecentStore.RecentPosts(ctx, q, each)
	}
	rows, err := db.Raw("SELECT "+recentColumns+` FROM recent_posts r WHERE r.owner_id = ? AND r.platform = ? AND r.community = ?
		AND r.words @@ phraseto_tsquery('simple', ?) ORDER BY r.id DESC LIMIT ?`,
		q.OwnerID, string(q.Platform), q.Community, phrase, q.Limit+1).Rows()
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var r recentRow
	dest, left := r.fields(), q.Limit
	for rows.Next() {
		if left == 0 {
			return true, nil
		}
		if err := rows.Scan(dest...); err != nil {
			return false, err
		}
		p, err := r.post()
		if err != nil {
			return false, err
		}
		left--
		if !each(p) {
			return false, nil
		}
	}
	return false, rows.Err()
}

// BenchmarkPreviewPostgres measures app.Window.Preview on Postgres with
// one owner's window of 200,000 indexed posts, reading the index as
// before (phrase-only) and as now (pass-long), for the phrases of the
// SQLite preview benchmark (app/window_bench_test.go) and a Thai one.
// Posts are as there: 5 to 60 words of matchbench's vocabulary drawn by
// frequency, a brand name in one in 200; besides, one in 200 repeats the
// commonest word 300 times and one in 200 is 4,000 Thai characters of a
// dozen, each of them more than 255 times:
//
//	EARSHOT_TEST_POSTGRES_URL=... go test -run '^$' -bench PreviewPostgres -benchtime 3x ./adapters/gormstore
//
// EARSHOT_BENCH_WINDOW_POSTS sets another size.
func BenchmarkPreviewPostgres(b *testing.B) {
	size := 200_000
	if v, err := strconv.Atoi(os.Getenv("EARSHOT_BENCH_WINDOW_POSTS")); err == nil && v > 0 {
		size = v
	}
	db, err := Open(pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	owner, _ := core.NewOwner("preview-pg@example.com", "")
	if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
		b.Fatal(err)
	}
	recent := NewRecentStore(db)
	deps := app.WindowDeps{Recent: recent, Archives: NewFilterArchiveStore(db), Phrases: NewPhraseStore(db)}
	cfg := app.WindowConfig{Days: app.DefaultRecentDays, Posts: app.DefaultRecentPosts}
	window := app.NewWindow(deps, cfg)
	deps.Recent = phraseOnly{recent}
	before := app.NewWindow(deps, cfg)

	vocab := matchbench.Vocabulary()
	thai := []rune("กขคงจฉชซญดตถ")
	rng := rand.New(rand.NewPCG(11, 12))
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	matches := NewMatchStore(db)
	start, seen := time.Now(), time.Now()
	for done := 0; done < size; {
		batch := make([]ports.PostMatches, 0, 1000)
		for len(batch) < cap(batch) && done < size {
			var w strings.Builder
			switch rng.IntN(200) {
			case 0:
				w.WriteString(strings.Repeat(vocab[0]+" ", 300))
			case 1:
				for range 4000 {
					w.WriteRune(thai[rng.IntN(len(thai))])
				}
			}
			for i := range 5 + rng.IntN(56) {
				if i > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(vocab[zipf.Uint64()])
			}
			if rng.IntN(200) == 0 {
				w.WriteString(", Acme CRM is")
				w.WriteString([]string{" cheap", " hiring", " down", " great"}[rng.IntN(4)])
			}
			text := w.String()
			p := core.Post{ExternalID: strconv.Itoa(done), Author: "a" + strconv.Itoa(rng.IntN(500)),
				Text: core.Cut(text, core.MaxPostText), URL: "https://x.com/p/" + strconv.Itoa(done), Likes: rng.IntN(50)}
			if r := []rune(text); len(r) > core.MaxPostText { // a Thai post: its first half its title
				p.Title, p.Text = string(r[:core.MaxPostText]), string(r[core.MaxPostText:])
			}
			batch = append(batch, ports.PostMatches{Post: p, Keep: &ports.RecentKeep{SeenAt: seen}})
			done++
		}
		if _, err := matches.SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
			b.Fatal(err)
		}
	}
	fill := time.Since(start)
	start = time.Now()
	for {
		n, err := window.Index(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	index := time.Since(start)
	if _, err := db.SQL().Exec("ANALYZE recent_posts"); err != nil {
		b.Fatal(err)
	}

	for _, c := range []struct {
		name, phrase string
		filters      core.PhraseFilters
	}{
		{"brand", "acme crm", core.PhraseFilters{}},
		{"brand-filtered", "acme crm", core.PhraseFilters{Exclude: []string{"hiring"}, MinLikes: 10}},
		{"rare-word", vocab[len(vocab)-7], core.PhraseFilters{}},
		{"common-pair", vocab[0] + " " + vocab[1], core.PhraseFilters{}},
		{"commonest-word", vocab[0], core.PhraseFilters{}},
		{"thai", "กขค", core.PhraseFilters{}},
	} {
		for _, v := range []struct {
			name string
			w    *app.Window
		}{{"phrase-only", before}, {"pass-long", window}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				var pv ports.Preview
				var err error
				for b.Loop() {
					if pv, err = v.w.Preview(ctx, owner.ID, c.phrase, "x", "", c.filters); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(pv.Window.Read), "read/op")
				b.ReportMetric(float64(pv.Window.Count), "found/op")
				b.ReportMetric(fill.Seconds(), "fill-s")
				b.ReportMetric(index.Seconds(), "index-s")
			})
		}
	}
}
