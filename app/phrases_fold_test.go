package app

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A phrase the matcher reads as one the owner has is a duplicate: 409
// conflict, as an equal one but for case is. A phone types "Joe’s" for
// "Joe's", a Japanese input method "ＡＣＭＥ" for "ACME"; both found in
// the same posts, two such phrases would match every post twice.
func TestAddPhraseDuplicateAsMatcherReads(t *testing.T) {
	t.Parallel()
	databases(t, testAddPhraseDuplicateAsMatcherReads)
}

func testAddPhraseDuplicateAsMatcherReads(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "typed@example.com")
	phrases := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 10}, ports.SystemClock{})
	for _, c := range []struct{ first, again string }{
		{"Joe's", "Joe\u2019s"},
		{"Joe's pizza", "JOE\u2018S PIZZA"},
		{"acme", "ＡＣＭＥ"},
		{"ｃ＋＋ jobs", "C++ Jobs"},
	} {
		if _, _, err := phrases.Add(ctx, o.ID, c.first, "x", "", ""); err != nil {
			t.Fatalf("Add(%q) = %v", c.first, err)
		}
		_, _, err := phrases.Add(ctx, o.ID, c.again, "x", "", "")
		if !core.IsKind(err, core.KindConflict) || httpapi.Status(err) != 409 {
			t.Errorf("Add(%q) after %q = %v, want 409 conflict", c.again, c.first, err)
		}
	}
	// The full-width low line is no word character where '_' is one: the
	// matcher reads them apart, so these are two phrases.
	for _, text := range []string{"a_b", "a＿b"} {
		if _, _, err := phrases.Add(ctx, o.ID, text, "x", "", ""); err != nil {
			t.Errorf("Add(%q) = %v", text, err)
		}
	}
}
