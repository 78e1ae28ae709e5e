package core_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

func TestCut(t *testing.T) {
	cases := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"shorter", "hello", 10, "hello"},
		{"exact", "hello", 5, "hello"},
		{"cut", "hello", 3, "hel"},
		{"empty", "", 3, ""},
		{"zero", "hello", 0, ""},
		{"two-byte kept whole", "héllo", 2, "hé"},
		{"three-byte", "日本語テキスト", 3, "日本語"},
		// 9 bytes but 3 characters: byte length alone must not cut it.
		{"bytes exceed n, characters do not", "日本語", 3, "日本語"},
		{"n above characters", "日本語", 5, "日本語"},
		{"four-byte", "😀😁😂", 2, "😀😁"},
		{"mixed", "a😀b日c", 4, "a😀b日"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := core.Cut(c.in, c.n)
			if got != c.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Cut split a character: %q", got)
			}
		})
	}

	// The spec's post text limit, on text of multi-byte characters.
	long := strings.Repeat("é", core.MaxPostText+500)
	got := core.Cut(long, core.MaxPostText)
	if n := utf8.RuneCountInString(got); n != core.MaxPostText || !strings.HasPrefix(long, got) {
		t.Errorf("Cut to %d gave %d characters", core.MaxPostText, n)
	}
	if core.MaxPostText != 2000 || core.MaxReasonLen != 160 {
		t.Errorf("MaxPostText = %d, MaxReasonLen = %d; want 2000 and 160", core.MaxPostText, core.MaxReasonLen)
	}
}

func TestIntents(t *testing.T) {
	// The labels ARCHITECTURE.md fixes, in its order.
	want := []core.Intent{"buying", "recommendation", "complaint", "question", "praise", "discussion", "promotion"}
	if !reflect.DeepEqual(core.Intents, want) {
		t.Fatalf("Intents = %v, want %v", core.Intents, want)
	}
	cases := []struct {
		in core.Intent
		ok bool
	}{
		{"buying", true},
		{"recommendation", true},
		{"complaint", true},
		{"question", true},
		{"praise", true},
		{"discussion", true},
		{"promotion", true},
		{"", false},
		{"Buying", false},
		{"spam", false},
		{"other", false},
		{"buying ", false},
	}
	for _, c := range cases {
		if got := c.in.Valid(); got != c.ok {
			t.Errorf("Intent(%q).Valid() = %v, want %v", c.in, got, c.ok)
		}
	}
}

func TestCheckPage(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		name    string
		f       core.PageFilter
		limit   int
		min     int
		wantErr string
	}{
		{"defaults", core.PageFilter{}, core.DefaultPageLimit, -1, ""},
		{"bounds", core.PageFilter{Limit: core.MaxPageLimit, MinScore: n(0)}, core.MaxPageLimit, 0, ""},
		{"limit over", core.PageFilter{Limit: core.MaxPageLimit + 1}, 0, 0, "limit must be a whole number from 1 to 100"},
		{"limit negative", core.PageFilter{Limit: -1}, 0, 0, "limit must be a whole number from 1 to 100"},
		{"min score over", core.PageFilter{MinScore: n(101)}, 0, 0, "min_score must be a whole number from 0 to 100"},
		{"min score under", core.PageFilter{MinScore: n(-1)}, 0, 0, "min_score must be a whole number from 0 to 100"},
		{"platform", core.PageFilter{Platform: "myspace"}, 0, 0, "platform must be one of reddit, x, facebook"},
		{"cursor", core.PageFilter{Before: -5}, 0, 0, "before must be a positive number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limit, min, _, err := core.CheckPage(c.f)
			if c.wantErr != "" {
				if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), c.wantErr) {
					t.Fatalf("err = %v, want core.KindInvalid %q", err, c.wantErr)
				}
				return
			}
			if err != nil || limit != c.limit || min != c.min {
				t.Fatalf("core.CheckPage = %d, %d, %v; want %d, %d", limit, min, err, c.limit, c.min)
			}
		})
	}
	if _, _, before, err := core.CheckPage(core.PageFilter{Before: 1700000000000.5}); err != nil || before.UnixMicro() != 1700000000000500 {
		t.Fatalf("cursor = %v, %v", before, err)
	}
}
