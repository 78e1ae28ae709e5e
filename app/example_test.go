package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
	"github.com/earshothq/earshot/ports"
)

// scoreAtOnce is the smallest bus an embedder can bring: news of new
// matches makes the scoring service score them at once, in the caller's
// goroutine. (A long-running service runs Scoring.Run instead, which
// such news wakes.)
type scoreAtOnce struct{ scoring *app.Scoring }

func (p scoreAtOnce) Publish(ctx context.Context, events ...ports.Event) error {
	_, err := p.scoring.Sweep(ctx)
	return err
}

// Example embeds the phrase, ingest and scoring services over SQLite in
// memory, without fx or any server: a post that contains a tracked phrase
// becomes a match, and the match is scored.
func Example() {
	ctx := context.Background()
	db, err := gormstore.Open("sqlite://:memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		panic(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	phraseStore, matchStore := gormstore.NewPhraseStore(db), gormstore.NewMatchStore(db)

	owners := app.NewOwners(gormstore.NewOwnerStore(db), app.NewKeys(gormstore.NewKeyStore(db), gormstore.NewOwnerStore(db), ports.SystemClock{}))
	phrases := app.NewPhrases(phraseStore, core.FreeLimits, ports.SystemClock{})
	scoring := app.NewScoring(app.ScoringDeps{Matches: matchStore, Scorer: score.Rules{}, Log: quiet}, app.ScoringConfig{})
	ingest := app.NewIngest(app.IngestDeps{Matches: matchStore, Accounts: gormstore.NewAccountStore(db),
		Matchers: app.NewMatchers(phraseStore), Publisher: scoreAtOnce{scoring}, Log: quiet}, core.FreeLimits)

	owner, err := owners.Create(ctx, "ada@example.com", "Ada")
	if err != nil {
		panic(err)
	}
	if _, _, err := phrases.Add(ctx, owner.ID, "acme crm", "x", "", ""); err != nil {
		panic(err)
	}
	_, ingested, skipped, err := ingest.Ingest(ctx, owner.ID, "x", []core.IngestPost{{
		ExternalID: "1790",
		AuthorName: "ada",
		Body:       []string{"Can anyone recommend an alternative to Acme CRM? We are ready to buy."},
		URL:        "https://x.com/ada/status/1790",
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println("ingested", ingested, "skipped", skipped)

	page, err := app.NewMatches(matchStore).List(ctx, owner.ID, ports.MatchQuery{Limit: 10})
	if err != nil {
		panic(err)
	}
	for _, m := range page.Matches {
		if m.Score == nil {
			fmt.Println(m.Phrase, "not scored")
			continue
		}
		fmt.Println(m.Phrase, m.Score.Intent, m.Score.Value >= 50)
	}
	// Output:
	// ingested 1 skipped 0
	// acme crm recommendation true
}
