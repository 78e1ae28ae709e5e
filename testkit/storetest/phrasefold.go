package storetest

import (
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testPhraseDuplicateTyped: a phrase is a duplicate of one the matcher
// reads the same (core.FoldKey): a typographic apostrophe is ', a
// full-width ASCII character its ASCII one, but for the low line.
func testPhraseDuplicateTyped(t *testing.T, s Stores) {
	o := newOwner(t, s)
	newPhrase(t, s, o.ID, "Joe's Pizza", "reddit", "food")
	newPhrase(t, s, o.ID, "acme", "x", "")
	newPhrase(t, s, o.ID, "a_b", "x", "")
	for _, tc := range []struct {
		text, platform, community string
		conflict                  bool
	}{
		{"joe\u2019s pizza", "reddit", "food", true},
		{"JOE\u2018S PIZZA", "reddit", "Food", true},
		{"Joe\u201bs pizza", "reddit", "food", true},
		{"Joe\u201cs pizza", "reddit", "food", false}, // a quotation mark, not an apostrophe
		{"joe\u2019s pizza", "reddit", "pizza", false},
		{"ＡＣＭＥ", "x", "", true},
		{"ａｃｍｅ", "x", "", true},
		{"ＡＣＭＥ", "facebook", "", false},
		{"a＿b", "x", "", false}, // the full-width low line is no word character
	} {
		if !tc.conflict {
			newPhrase(t, s, o.ID, tc.text, tc.platform, tc.community)
			continue
		}
		p, err := core.NewPhrase(o.ID, tc.text, tc.platform, tc.community)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Phrases.CreatePhrase(ctx, &p, roomy, ports.Idempotency{})
		wantKind(t, err, core.KindConflict)
	}
}

// testPhraseDuplicateTypedConcurrent: spellings of one phrase created at
// once leave one phrase, the others refused as duplicates.
func testPhraseDuplicateTypedConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	spellings := []string{"Joe's", "joe\u2019s", "JOE\u2018S", "Joe\u201bs", "ＪＯＥ＇Ｓ", "ｊｏｅ\u2019ｓ"}
	var wg sync.WaitGroup
	for _, text := range spellings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := core.NewPhrase(o.ID, text, "x", "")
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := s.Phrases.CreatePhrase(ctx, &p, roomy, ports.Idempotency{}); err != nil && !core.IsKind(err, core.KindConflict) {
				t.Errorf("CreatePhrase(%q): %v", text, err)
			}
		}()
	}
	wg.Wait()
	if xs, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{}); len(xs) != 1 {
		t.Fatalf("%d phrases after %d spellings of one were created at once, want 1", len(xs), len(spellings))
	}
}
