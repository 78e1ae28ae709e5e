package score_test

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// TestRateReadsNegation checks that a word of praise or complaint reads
// as a person reads it: turned by a negator a few words before it in the
// same clause, left alone by the idioms that negate nothing, turned by a
// cheap sarcasm marker, and not counted as praise inside a question. The
// reason names what decided it, the negator or marker included, and
// never says "praises" for a negated praise.
func TestRateReadsNegation(t *testing.T) {
	tests := []struct {
		text   string
		intent core.Intent
		reason string // the reason starts with it
	}{
		// A negated praise complains.
		{"support took three days to answer. Not great.", core.IntentComplaint, `complains: "Not great"`},
		{"acme isn't that great for teams", core.IntentComplaint, `complains: "isn't that great"`},
		{"not very happy with acme lately", core.IntentComplaint, `complains: "not very happy with"`},
		{"bought acme last year. wouldn't recommend it", core.IntentComplaint, `complains: "wouldn't recommend"`},
		{"Would not recommend acme.", core.IntentComplaint, `complains: "not recommend"`},
		{"acme? never again.", core.IntentComplaint, `swears off: "never again"`},
		{"never buying acme again", core.IntentComplaint, `swears off: "never buying acme again"`},
		{"acme doesnt impress me and the docs are not amazing", core.IntentComplaint, `complains: "not amazing"`},
		// A negated complaint praises.
		{"two years on acme, no complaints", core.IntentPraise, `praises: "no complaints"`},
		{"acme isn't bad at all", core.IntentPraise, `praises: "isn't bad"`},
		{"never had an issue with acme", core.IntentPraise, `praises: "never had an issue"`},
		{"acme has been zero problems", core.IntentPraise, `praises: "zero problems"`},
		// A negated match after a plain one of the same word counts too.
		{"acme: great camera, not great battery", core.IntentComplaint, `complains: "not great"`},
		{"acme sound is amazing. call quality is not amazing", core.IntentComplaint, `complains: "not amazing"`},
		{"happy with the acme screen. not happy with the price", core.IntentComplaint, `complains: "not happy with"`},
		// "don't think" negates the clause it leads, however far.
		{"I don't think acme is great for teams", core.IntentComplaint, `complains: "don't think acme is great"`},
		{"i dont believe the new acme app is worth every penny", core.IntentComplaint, `complains: "dont believe the new acme app is worth every penny"`},
		{"I don't know why the acme app is so great", core.IntentPraise, `praises: "great"`},
		// The negation ends with its clause.
		{"not cheap, but acme is great", core.IntentPraise, `praises: "great"`},
		{"acme is not cheap. great support though", core.IntentPraise, `praises: "great"`},
		{"the old one was not fast and the new acme is great", core.IntentPraise, `praises: "great"`},
		// Idioms whose negator negates nothing.
		{"can't recommend acme enough", core.IntentPraise, `praises: "recommend"`},
		{"acme is not only great for notes", core.IntentPraise, `praises: "great"`},
		{"no doubt the best tool i have ever used", core.IntentPraise, `praises: "best tool i have ever used"`},
		{"acme couldn't be happier with", core.IntentPraise, `praises: "couldn't be happier"`},
		{"I can't thank acme enough", core.IntentPraise, `praises: "can't thank acme enough"`},
		{"cant thank the acme folks enough", core.IntentPraise, `praises: "cant thank the acme folks enough"`},
		{"Can't say enough good things about acme", core.IntentPraise, `praises: "Can't say enough good things"`},
		// A cue written with its negation reads it once.
		{"I can't believe acme doesn't work offline", core.IntentComplaint, `reports it broken: "doesn't work"`},
		{"support never answers", core.IntentComplaint, `complains about support: "never answers"`},
		// Cheap sarcasm markers.
		{"Oh great, acme restarted for updates mid-call", core.IntentComplaint, `is sarcastic: "Oh great"`},
		{"awesome, another acme price email", core.IntentComplaint, `is sarcastic: "awesome"`},
		{"gotta love paying for acme and still waiting", core.IntentComplaint, `is sarcastic: "gotta love"`},
		{"love how acme forgets my settings /s", core.IntentComplaint, `is sarcastic: "love how"`},
		{"wow thanks acme 🙄", core.IntentComplaint, `complains: "🙄"`},
		// Praise asked about praises nothing.
		{"is acme great for a small team?", core.IntentQuestion, `asks a question: "?"`},
		{"acme is great for a small team. anyone tried the api?", core.IntentPraise, `praises: "great"`},
	}
	for _, tt := range tests {
		got := rateReads(t, "acme", tt.text, tt.intent, tt.reason)
		if got.Intent != core.IntentPraise && strings.HasPrefix(got.Reason, "praises") {
			t.Errorf("%s: a %s post says %q", tt.text, got.Intent, got.Reason)
		}
	}
}

// TestRateNegatedPraiseSaysSo checks that wherever praise is negated, the
// reason quotes the negator with the word, so it never reads as praise.
func TestRateNegatedPraiseSaysSo(t *testing.T) {
	for _, word := range []string{"great", "amazing", "happy with", "worth every penny", "impressed", "loving"} {
		for _, neg := range []string{"not", "isn't", "never", "wasn't really"} {
			text := "acme " + neg + " " + word
			got := score.Rate("acme", core.Post{Text: text})
			checkScore(t, got)
			if got.Intent == core.IntentPraise || !strings.Contains(got.Reason, neg) {
				t.Errorf("%q: %s (%s)", text, got.Intent, got.Reason)
			}
		}
	}
}

// TestRateReadsWithdrawnPlans checks that a plan to buy, leave or switch
// with a negator before it ("not looking to buy", "not planning to
// switch") reads as the author staying where they are, and that the
// reason says so; a question about what to buy stays a purchase.
func TestRateReadsWithdrawnPlans(t *testing.T) {
	tests := []struct {
		text   string
		intent core.Intent
		reason string // the reason starts with it
	}{
		{"tried acme at the store. not looking to buy one yet", core.IntentDiscussion, `is not buying: "not looking to buy"`},
		{"we are no longer interested in acme, thanks", core.IntentDiscussion, `is not buying: "no longer interested"`},
		{"not planning to switch from acme anytime soon", core.IntentDiscussion, `is staying: "not planning to switch"`},
		{"Not going to buy an acme membership this year.", core.IntentDiscussion, `is not buying: "Not going to buy"`},
		// The plan itself, and questions about what to buy, still count.
		{"ready to buy acme this quarter", core.IntentBuying, `weighs a purchase: "ready to buy"`},
		{"planning to switch from acme, it keeps logging me out", core.IntentComplaint, `is ready to leave: "planning to switch"`},
		{"don't know which one to buy, acme or the other one?", core.IntentBuying, `weighs a purchase: "which one to buy"`},
		// Swearing off is a complaint, not a withdrawn plan.
		{"never buying from acme again", core.IntentComplaint, `swears off`},
	}
	for _, tt := range tests {
		rateReads(t, "acme", tt.text, tt.intent, tt.reason)
	}
}

// TestRateWeighsTheTurn checks that in a post that praises and
// complains at once, the words after "but", "however" or "although" (or
// a claim after "is it just me or") weigh more, since that is where the
// writer's point is; a clause that opens the sentence with "although" is
// the concession, and what follows its comma is the point.
func TestRateWeighsTheTurn(t *testing.T) {
	tests := []struct {
		text   string
		intent core.Intent
		reason string // the reason starts with it
	}{
		{"Love the sound of my acme, but the app update broke grouping and support hasn't replied in a week.", core.IntentComplaint, `complains about support: "hasn't replied"`},
		{"acme camera is amazing, love it. but the battery is terrible", core.IntentComplaint, `complains: "terrible"`},
		{"I love my acme, although the lid started leaking and support never responded.", core.IntentComplaint, `complains about support: "never responded"`},
		{"I love my acme. However, the app is frustrating to use.", core.IntentComplaint, `complains: "frustrating"`},
		{"Although the acme app is buggy at times, the sound is amazing.", core.IntentPraise, `praises: "amazing"`},
		{"is it just me or is acme not great at writing tests? keeps making things up", core.IntentComplaint, `complains: "not great"`},
		{"is it just me or is acme amazing lately?", core.IntentPraise, `praises: "amazing"`},
		// The turn weighs praise against complaint, not a mood against an ask.
		{"How do I stop acme from marking every newsletter as junk? Not a huge deal but annoying.", core.IntentQuestion, `asks a question`},
		// Without a turn, the words count as they stand.
		{"acme is amazing and i love it, the battery is terrible", core.IntentPraise, `praises: "amazing"`},
	}
	for _, tt := range tests {
		rateReads(t, "acme", tt.text, tt.intent, tt.reason)
	}
}

// rateReads rates text for phrase in a subtest and checks that it reads
// as intent, with a reason that starts with reason; it returns the score.
func rateReads(t *testing.T, phrase, text string, intent core.Intent, reason string) core.Score {
	t.Helper()
	var got core.Score
	t.Run(phrase+": "+text, func(t *testing.T) {
		got = score.Rate(phrase, core.Post{Text: text})
		checkScore(t, got)
		if got.Intent != intent || !strings.HasPrefix(got.Reason, reason) {
			t.Errorf("got %s (%s), want %s (%s…)", got.Intent, got.Reason, intent, reason)
		}
	})
	return got
}

// TestRateSincereLove checks that "oh" and "gotta" mark sarcasm only
// where they do in speech: "oh" before a bare word of praise ("oh
// great"), "gotta love" before something that happens ("gotta love
// paying twice", "gotta love how it logs me out"). "Oh, I love acme" and
// "you gotta love acme" are sincere.
func TestRateSincereLove(t *testing.T) {
	tests := []struct {
		text   string
		intent core.Intent
		reason string // the reason starts with it
	}{
		{"Oh, I love acme", core.IntentPraise, `praises`},
		{"oh i love acme so much", core.IntentPraise, `praises`},
		{"you gotta love acme", core.IntentPraise, `praises`},
		{"gotta love the acme dashboard", core.IntentPraise, `praises`},
		{"gotta love everything about acme", core.IntentPraise, `praises`},
		// Still sarcasm.
		{"oh great, acme crashed again", core.IntentComplaint, ``},
		{"oh great, acme restarted for updates mid-call", core.IntentComplaint, `is sarcastic`},
		{"Oh, amazing. acme logged me out again", core.IntentComplaint, ``},
		{"gotta love paying for acme and still waiting", core.IntentComplaint, `is sarcastic`},
		{"gotta love how acme logs me out every hour", core.IntentComplaint, `is sarcastic`},
		{"you gotta love it when acme eats your draft", core.IntentComplaint, `is sarcastic`},
		{"gotta love when acme eats your draft", core.IntentComplaint, `is sarcastic`},
	}
	for _, tt := range tests {
		rateReads(t, "acme", tt.text, tt.intent, tt.reason)
	}
}
