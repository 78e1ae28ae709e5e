package score_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// labelled is one hand-labelled post of testdata/labelled.json.
type labelled struct {
	ID       string      `json:"id"`
	Platform string      `json:"platform"`
	Phrase   string      `json:"phrase"`
	Title    string      `json:"title"`
	Text     string      `json:"text"`
	Intent   core.Intent `json:"intent"`
	Band     [2]int      `json:"band"`
}

// minAccuracy is the share of labelled posts the rules must get right
// (intent equal and score inside the band). The set was labelled before
// the rules were tuned and holds posts no keyword table can read (a café
// praised in a post about an espresso machine), so 100% is not the aim.
const minAccuracy = 0.85

// minHoldout is the bar for testdata/holdout.json, posts labelled after
// tuning and never tuned against: it shows how the table does on text it
// was not fitted to, so its bar is lower.
const minHoldout = 0.70

func TestRateLabelled(t *testing.T) {
	set := readLabelled(t, "testdata/labelled.json")
	if len(set) < 80 {
		t.Fatalf("labelled set has %d posts, want at least 80", len(set))
	}
	accuracy(t, set, minAccuracy)
}

// floorByIntent is, for each intent, how many posts of
// testdata/labelled.json labelled so the rules give that intent, and
// floorRight how many they get right in intent and band: the figures of
// the rules as they stand, so a change that reads fewer posts right
// fails here. Raise them when a change reads more right.
//
// The posts from neg-01 on are the hard shapes: praise and complaint
// words under a negation ("not great", "no complaints", "wouldn't
// recommend"), idioms whose negation is no negation ("can't recommend
// it enough", "not only", "no doubt"), cheap sarcasm markers ("great,
// another outage", "oh great", "/s", 🙄), praise words inside a question,
// a competitor named beside the phrase, and posts that praise and
// complain at once. The posts from cmp-20 on add, five or more each: a
// competitor's complaint beside praise of the phrase, a mixed post whose
// turn comes after "but", "however" or "although", "is it just me or"
// claims, thanks that "can't ... enough" leaves standing, a plan to buy
// or switch withdrawn ("not looking to buy", "no longer interested"),
// and a negated word after a plain one of the same word ("great camera,
// not great battery"). They are written in the shapes the platforms give
// the scorer: reddit's title and self text (the Listing JSON's title and
// selftext), X's single short text in lower case with emoji, and a
// facebook group post's longer text without a title. The posts att-01
// on are mixed posts whose complaint follows a capital that names no
// product (a line break, an emoji, a month, "Im") or an owner that is
// part of the phrase ("clickup support's"). The posts ngr-01 on negate
// a word of praise through "don't think", "don't believe" or "don't feel"
// more than three words before it. The posts sin-01 on say "oh, I love"
// and "gotta love" sincerely, beside the sarcastic "oh great" and "gotta
// love how"; the posts ppl-01 on are mixed posts with a person's name
// ("I asked Sarah", "Dave said") or title case ("Is Honestly Terrible")
// beside the words that decide them.
var floorByIntent = map[core.Intent]int{
	core.IntentBuying:         20,
	core.IntentRecommendation: 20,
	core.IntentComplaint:      63,
	core.IntentQuestion:       17,
	core.IntentPraise:         46,
	core.IntentDiscussion:     20,
	core.IntentPromotion:      14,
}

const floorRight = 200

// TestRateLabelledByIntent prints, for testdata/labelled.json, the share
// of each intent the rules read right and the confusion table (a row per
// label, a column per intent given), and fails when either falls below
// its floor.
func TestRateLabelledByIntent(t *testing.T) {
	set := readLabelled(t, "testdata/labelled.json")
	confusion := map[core.Intent]map[core.Intent]int{}
	right := 0
	for _, l := range set {
		got := score.Rate(l.Phrase, core.Post{Title: l.Title, Text: l.Text})
		if confusion[l.Intent] == nil {
			confusion[l.Intent] = map[core.Intent]int{}
		}
		confusion[l.Intent][got.Intent]++
		if got.Intent == l.Intent && got.Value >= l.Band[0] && got.Value <= l.Band[1] {
			right++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-15s", "label \\ given")
	for _, g := range core.Intents {
		fmt.Fprintf(&b, " %5.5s", g)
	}
	fmt.Fprintf(&b, "  %s", "intent right")
	for _, want := range core.Intents {
		row, total := confusion[want], 0
		fmt.Fprintf(&b, "\n%-15s", want)
		for _, g := range core.Intents {
			fmt.Fprintf(&b, " %5d", row[g])
			total += row[g]
		}
		if total == 0 {
			t.Errorf("no post labelled %s", want)
			continue
		}
		fmt.Fprintf(&b, "  %d/%d = %.0f%%", row[want], total, 100*float64(row[want])/float64(total))
		if row[want] < floorByIntent[want] {
			t.Errorf("%s: %d read right, floor %d", want, row[want], floorByIntent[want])
		}
	}
	t.Log(b.String())
	t.Logf("intent and band right: %d/%d", right, len(set))
	if right < floorRight {
		t.Errorf("%d right in intent and band, floor %d", right, floorRight)
	}
}

func TestRateHoldout(t *testing.T) {
	accuracy(t, readLabelled(t, "testdata/holdout.json"), minHoldout)
}

func readLabelled(t testing.TB, path string) []labelled {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set []labelled
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	return set
}

// accuracy scores every post, logs each miss and the share right, and
// fails under bar.
func accuracy(t *testing.T, set []labelled, bar float64) {
	t.Helper()
	right := 0
	for _, l := range set {
		if !l.Intent.Valid() || l.Band[0] > l.Band[1] {
			t.Fatalf("%s: bad label %q %v", l.ID, l.Intent, l.Band)
		}
		got := score.Rate(l.Phrase, core.Post{Title: l.Title, Text: l.Text})
		checkScore(t, got)
		if got.Intent == l.Intent && got.Value >= l.Band[0] && got.Value <= l.Band[1] {
			right++
			continue
		}
		t.Logf("miss %s: want %s %v, got %s %d (%s)", l.ID, l.Intent, l.Band, got.Intent, got.Value, got.Reason)
	}
	acc := float64(right) / float64(len(set))
	t.Logf("accuracy %d/%d = %.1f%%", right, len(set), 100*acc)
	if acc < bar {
		t.Errorf("accuracy %.1f%% below %.0f%%", 100*acc, 100*bar)
	}
}

func TestRateEdges(t *testing.T) {
	long := strings.Repeat("we keep talking about notion and nothing else. ", 5000) + "any alternatives to notion?"
	tests := []struct {
		name   string
		phrase string
		post   core.Post
		intent core.Intent // empty: any
		lo, hi int
	}{
		{"empty post", "notion", core.Post{}, core.IntentDiscussion, 0, 40},
		{"empty phrase", "", core.Post{Text: "any alternatives to mailchimp?"}, core.IntentRecommendation, 70, 95},
		{"only white space", "crm", core.Post{Title: " \t", Text: "\n\n  \r\n"}, core.IntentDiscussion, 0, 40},
		// The cue past the scan cap is not seen; the post stays a mention.
		{"very long text", "notion", core.Post{Text: long}, core.IntentDiscussion, 0, 40},
		{"title only", "roomba", core.Post{Title: "Should I buy a Roomba or a Roborock?"}, core.IntentBuying, 70, 95},
		{"upper case", "CRM", core.Post{Text: "ANY RECOMMENDATIONS FOR A CRM??"}, core.IntentRecommendation, 70, 95},
		{"curly apostrophe", "notion", core.Post{Text: "Notion doesn’t work offline at all"}, core.IntentComplaint, 45, 80},
		{"non-ASCII", "café crm", core.Post{Text: "Ünïcödé 日本語 café crm — looking for alternatives? 🤔"}, core.IntentRecommendation, 70, 95},
		{"invalid UTF-8", "x\xff", core.Post{Text: "\xff\xfe hate x\xff \xc3"}, core.IntentComplaint, 45, 80},
		{"job post", "figma", core.Post{Text: "We're hiring a Figma designer, apply at example.com/jobs"}, core.IntentPromotion, 0, 20},
		{"phrase with newline", "a\nb", core.Post{Text: "a b is the worst"}, core.IntentComplaint, 45, 80},
		{"buying near phrase beats far", "hubspot", core.Post{Text: "ready to buy hubspot"}, core.IntentBuying, 77, 95},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := score.Rate(tt.phrase, tt.post)
			checkScore(t, got)
			if tt.intent != "" && got.Intent != tt.intent {
				t.Errorf("intent %s, want %s (%s)", got.Intent, tt.intent, got.Reason)
			}
			if got.Value < tt.lo || got.Value > tt.hi {
				t.Errorf("score %d, want %d..%d (%s)", got.Value, tt.lo, tt.hi, got.Reason)
			}
		})
	}
}

func TestRateNearRaises(t *testing.T) {
	near := score.Rate("hubspot", core.Post{Text: "any alternatives to hubspot?"})
	far := score.Rate("hubspot", core.Post{Text: "any alternatives? " + strings.Repeat("we have used many tools for years. ", 5) + "hubspot"})
	if near.Value <= far.Value {
		t.Errorf("near %d (%s) not above far %d (%s)", near.Value, near.Reason, far.Value, far.Reason)
	}
	if !strings.Contains(near.Reason, `near "hubspot"`) {
		t.Errorf("reason %q does not name the phrase", near.Reason)
	}
}

// The phrase counts as near only where it would match: "ai" inside
// "again" is no occurrence of the phrase "ai", so it neither raises the
// score nor appears in the reason.
func TestRateNearNeedsWordBoundaries(t *testing.T) {
	far := " We have used many tools for years, none stuck with us, honestly. We use AI daily."
	inWord := score.Rate("ai", core.Post{Text: "Looking for alternatives, again." + far})
	plain := score.Rate("ai", core.Post{Text: "Looking for alternatives, truly." + far})
	if inWord != plain {
		t.Errorf("with \"again\" near the cue %+v, without %+v", inWord, plain)
	}
	if strings.Contains(inWord.Reason, "near") {
		t.Errorf("reason %q names a phrase that is not near", inWord.Reason)
	}
	// A phrase whose edge is no word character still needs no boundary
	// there, as in the matcher.
	if got := score.Rate("c++", core.Post{Text: "any alternatives to c++x?"}); !strings.Contains(got.Reason, `near "c++"`) {
		t.Errorf("reason %q does not name c++", got.Reason)
	}
}

func TestRateReasonNamesCue(t *testing.T) {
	got := score.Rate("mailchimp", core.Post{Text: "Any good alternatives to Mailchimp?"})
	want := `asks for alternatives: "alternatives" near "mailchimp"`
	if got.Reason != want {
		t.Errorf("reason %q, want %q", got.Reason, want)
	}
}

func TestRateLongPhraseReason(t *testing.T) {
	phrase := strings.Repeat("ü", 500)
	got := score.Rate(phrase, core.Post{Text: phrase + " is the worst, any alternatives to " + phrase + "?"})
	checkScore(t, got)
}

func TestRulesScore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the rules are instant and must work as a late fallback
	m := core.Match{Phrase: "notion", Post: core.Post{Text: "I hate notion"}}
	got, err := score.Rules{}.Score(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if want := score.Rate(m.Phrase, m.Post); got != want {
		t.Errorf("Score %+v, Rate %+v", got, want)
	}
}

func checkScore(t *testing.T, s core.Score) {
	t.Helper()
	if s.Value < 0 || s.Value > 100 {
		t.Errorf("score %d out of range", s.Value)
	}
	if !s.Intent.Valid() {
		t.Errorf("intent %q unknown", s.Intent)
	}
	checkReason(t, s.Reason)
}

func checkReason(t *testing.T, r string) {
	t.Helper()
	if r == "" {
		t.Error("empty reason")
	}
	if !utf8.ValidString(r) {
		t.Errorf("reason %q is not UTF-8", r)
	}
	if n := utf8.RuneCountInString(r); n > core.MaxReasonLen {
		t.Errorf("reason has %d characters, max %d", n, core.MaxReasonLen)
	}
	if strings.ContainsAny(r, "\n\r\u2028\u2029") {
		t.Errorf("reason %q spans lines", r)
	}
}
