package gormstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// oldFoldKey is core.FoldKey as the builds before migration 33 had it,
// simple case folding alone: the fold they stored with each phrase.
func oldFoldKey(s string) string { return strings.Map(core.FoldRune, s) }

// Migration 33 gives every stored phrase the fold core.FoldKey now gives
// it, for each character the matcher reads as another (the typographic
// apostrophes, all 94 full-width forms, the low line among them, and
// every character of their case orbits) and for characters it leaves;
// phrases that become duplicates by it stay, and a third spelling of
// them is refused.
func TestMigrationFoldsPhrasesAsTheMatcherReads(t *testing.T) {
	// The characters of the step: each in a phrase of its own.
	var runes []rune
	seen := map[rune]bool{}
	add := func(r rune) {
		for f := r; !seen[f]; f = unicode.SimpleFold(f) {
			seen[f] = true
			runes = append(runes, f)
		}
	}
	for r := rune(0xff01); r <= 0xff5e; r++ {
		add(r)
	}
	for _, r := range []rune{'\u2018', '\u2019', '\u201b', // the apostrophes
		'\u201c', '\u02bc', '\uff00', '\uff5f', '\'', 'A', 'z', '_', 'é', 'ß', '\u212a', 'Σ', '東'} { // and others
		add(r)
	}
	if len(runes) < 3+94 {
		t.Fatalf("%d characters", len(runes))
	}
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openAt(t, url, 32)
			for _, o := range []string{"o1", "o2", "o3"} {
				if err := db.plain.Exec(`INSERT INTO owners (id, email, created_at) VALUES (?, ?, 0)`, o, o+"@example.com").Error; err != nil {
					t.Fatal(err)
				}
			}
			insert := func(id, owner, phrase, community string) {
				t.Helper()
				// A row as the build before stored it (its phraseRow).
				if err := db.plain.Exec(`INSERT INTO phrases (id, owner_id, phrase, fold, platform, community, status, last_checked_at, last_source, created_at)
					VALUES (?, ?, ?, ?, 'reddit', ?, 'active', 0, 'helper', 0)`, id, owner, phrase, oldFoldKey(phrase), community).Error; err != nil {
					t.Fatalf("%s %q: %v", id, phrase, err)
				}
			}
			phrases := map[string]string{}
			for i, r := range runes {
				id := fmt.Sprintf("r%d", i)
				phrases[id] = "Joe" + string(r) + "s " + string(r)
				insert(id, "o1", phrases[id], fmt.Sprintf("c%d", i)) // a community each: 'Ａ' and 'ａ' had one fold
			}
			for id, p := range map[string]string{"w1": "Joe\u2019s Pizza", "w2": "ＡＣＭＥ ｃｒｍ", "w3": "Straße Bikes"} {
				phrases[id] = p
				insert(id, "o1", p, "whole")
			}
			// Duplicates by the new fold, accepted as two phrases before: o2
			// has the ASCII spelling of each, o3 two others of one phrase.
			dups := map[string]string{"d1": "Joe's", "d2": "Joe\u2019s", "d3": "acme", "d4": "ＡＣＭＥ", "d5": "joe\u2018s", "d6": "JOE\u201bS"}
			for id, p := range dups {
				owner := "o2"
				if id == "d5" || id == "d6" {
					owner = "o3"
				}
				phrases[id] = p
				insert(id, owner, p, "food")
			}

			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var n int64
			if err := db.plain.Raw(`SELECT COUNT(*) FROM phrases`).Scan(&n).Error; err != nil || n != int64(len(phrases)) {
				t.Fatalf("%d phrases after the step (%v), want the %d before", n, err, len(phrases))
			}
			for id, p := range phrases {
				var got string
				if err := db.plain.Raw(`SELECT fold FROM phrases WHERE id = ?`, id).Scan(&got).Error; err != nil {
					t.Fatal(err)
				}
				if want := core.FoldKey(p); got != want {
					t.Errorf("%s %q: the step made the fold %q (%+q), core.FoldKey gives %q (%+q)", id, p, got, got, want, want)
				}
			}
			if !db.gorm.Migrator().HasIndex("phrases", "phrases_fold") || db.gorm.Migrator().HasIndex("phrases", "phrases_unique") {
				t.Error("phrases_unique is not replaced by phrases_fold")
			}

			// A third spelling is refused; another phrase is not.
			store := NewPhraseStore(db)
			for _, c := range []struct {
				owner, text string
				conflict    bool
			}{
				{"o2", "JOE'S", true}, {"o2", "joe\u201bs", true}, {"o2", "Ａcme", true},
				{"o3", "Joe's", true}, {"o3", "ｊｏｅ＇ｓ", true},
				{"o1", "acme", false}, {"o3", "acme", false},
			} {
				p, err := core.NewPhrase(c.owner, c.text, "reddit", "food")
				if err != nil {
					t.Fatal(err)
				}
				_, err = store.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1000}, ports.Idempotency{})
				if c.conflict && !core.IsKind(err, core.KindConflict) || !c.conflict && err != nil {
					t.Errorf("%s adds %q: %v, want conflict %v", c.owner, c.text, err, c.conflict)
				}
			}
		})
	}
}
