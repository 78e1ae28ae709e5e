package score

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/earshothq/earshot/core"
)

// cue is one weighted signal. Patterns run over lower-cased text with
// white space collapsed, so they are written in lower case with single
// spaces. Each cue counts once per post however often it matches; the
// intent with the most weight wins.
type cue struct {
	intent core.Intent
	weight int
	why    string // how the reason names this kind of cue
	re     *regexp.Regexp
	need   []string // one of these occurs in every match; nil: no hint
	mood   bool     // a word of praise or complaint: see moods
	plan   bool     // a plan to buy, leave or switch: see plans
}

// find returns where the cue first matches text, or nil. Go's regexp has
// no literal prefix to skip ahead with on alternations, so each cue would
// walk the whole post; checking the needed literals first (a fast
// substring search) lets the regexp run only on posts that could match.
func (c cue) find(text string) []int {
	if c.need != nil && !containsAny(text, c.need) {
		return nil
	}
	return c.re.FindStringIndex(text)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// How the reason names each intent's cues, unless a cue says otherwise.
var whyOf = map[core.Intent]string{
	core.IntentBuying:         "weighs a purchase",
	core.IntentRecommendation: "asks for a recommendation",
	core.IntentComplaint:      "complains",
	core.IntentQuestion:       "asks a question",
	core.IntentPraise:         "praises",
	core.IntentDiscussion:     "discusses",
	core.IntentPromotion:      "promotes",
}

type spec struct {
	intent  core.Intent
	weight  int
	pattern string
	why     string // empty: whyOf[intent]
}

// Weights: 6 settles the intent on its own, 4-5 is a strong hint, 1-3
// only tips a balance. Word boundaries (\b) keep "hate" out of "whatever".
var specs = []spec{
	// Buying: money is about to change hands.
	{core.IntentBuying, 6, `\bshould (i|we) (buy|get|purchase|pay for|upgrade)\b`, ""},
	{core.IntentBuying, 6, `\bwhich (one )?(to|should (i|we)) (get|buy|choose|pick)\b`, ""},
	{core.IntentBuying, 6, `\b(where|best place) (to|can (i|we)|should (i|we)) (buy|get|order)\b`, ""},
	{core.IntentBuying, 5, `\bworth (it|the (money|price|cost|upgrade)|paying|upgrading|buying)\b`, ""},
	{core.IntentBuying, 5, `\b(willing to pay|anyone selling|take my money|budget (is|of|under|around))\b`, ""},
	{core.IntentBuying, 4, `\b(how much (does|do|is|are|for)|how much [\w.-]+ (costs?|charges?))\b`, ""},
	{core.IntentBuying, 4, `\b(pricing|price|quote) for\b|\bget a quote\b`, ""},
	{core.IntentBuying, 4, `\bvs\.? [^.!?]*\?`, "compares options"},
	{core.IntentBuying, 3, `\b(licen[cs]es|seats|annual plan|yearly plan|free trial|invoicing)\b`, ""},
	{core.IntentBuying, 2, `\bbudget\b`, ""},

	// Recommendation: the author asks what to use, often instead of
	// something they have.
	{core.IntentRecommendation, 6, `\balternatives?\b`, "asks for alternatives"},
	{core.IntentRecommendation, 6, `\b(can|could|would) (anyone|someone|you|y'all) (recommend|suggest)\b`, ""},
	{core.IntentRecommendation, 6, `\b(recommend|suggest) (me )?(a|an|some|any|something)\b`, ""},
	{core.IntentRecommendation, 6, `\bwhat [^.!?]{0,40}\b(do|does|would|should) (you|people|y'all|you all|everyone|i|we) (use|recommend|suggest|swear by|like|move to|switch to|go with|pick)\b`, ""},
	{core.IntentRecommendation, 6, `\bwhat('s| is| are) (everyone|people|you|y'all) using\b`, ""},
	{core.IntentRecommendation, 6, `\b(is there|are there|know of) (something|anything|any \w+|a \w+) (better|like|similar|cheaper|else)\b|\banything (like|similar to)\b`, ""},
	{core.IntentRecommendation, 6, `\b(has|have|did) (anyone|anybody|you) (switch|switched|moved|migrated) (from|away)\b`, "asks about switching"},
	{core.IntentRecommendation, 5, `\b(any|your|looking for|open to) (good )?(recommendations?|suggestions?|recs)\b|\b(recommendations?|suggestions?) (for|on|please)\b|\bsuggestions\?`, ""},
	{core.IntentRecommendation, 5, `\breplacement (for|that|to)\b|\breplace [\w.-]+ with\b`, "looks for a replacement"},
	{core.IntentRecommendation, 5, `\bbest [^.!?]{1,40}\bfor [^.!?]*\?`, ""},
	{core.IntentRecommendation, 5, `\b(looking for|in search of|searching for) (a|an|some)\b`, ""},
	{core.IntentRecommendation, 5, `\brecomi?end(a|as|an|aci[oó]n|aciones)\b|\bempfehl`, ""},
	{core.IntentRecommendation, 4, `\binstead of\b`, ""},
	{core.IntentRecommendation, 2, `\bneed (a|an|something)\b`, ""},

	// Complaint: unhappy with a product; a competitor's unhappy user is a lead.
	{core.IntentComplaint, 6, `\b(cancel|cancell?ing|cancell?ed) (my|our|the) ([\w.-]+ ){0,2}(subscription|account|plan|membership|order)\b`, "wants to cancel"},
	{core.IntentComplaint, 5, `\b(doesn't|does not|don't|won't|will not|can't|cannot) (work|sync|load|open|connect|log ?in|start|charge)\b|\bnot working\b`, "reports it broken"},
	{core.IntentComplaint, 4, `\bkeeps? (on )?(getting )?(crash|fail|freez|break|disconnect|stuck|dropp|logging|deleting|losing)\w*`, "reports it broken"},
	{core.IntentComplaint, 4, `\b(raised|hiked|doubled|increased) (our|the|their|my) (price|prices|pricing|rates?)\b|\bprice (hike|increase)\b`, "complains about price"},
	{core.IntentComplaint, 4, `\b(is|was|been|went|keeps going) down\b|\boutage\b|\bcrash(es|ed|ing)?\b|\bbreaks\b|\bbuggy\b`, "reports it broken"},
	{core.IntentComplaint, 4, `\b(nobody|no one|never|hasn't|haven't|didn't) (answers|responds|replied|responded|answered|got back|gotten back)\b|\bwaiting \d+ (days|weeks|months)\b|\b(no|zero) (explanation|response|reply)\b|\bout of warranty\b|\bdied after\b`, "complains about support"},
	{core.IntentComplaint, 3, `\b(froze|frozen|locked out|logged me out|so slow|too slow|is slow|way too (high|expensive)|too expensive|refund)\b`, ""},
	{core.IntentComplaint, 2, `\bwhat is going on\b|\bwhy is it so\b|\banyone else\b`, ""},
	{core.IntentComplaint, 4, `\bnever (\S+ ){0,3}again\b`, "swears off"},
	{core.IntentComplaint, 2, `🙄|😒|😡|🤬|👎`, ""},

	// Question: how-to and support questions.
	{core.IntentQuestion, 4, `\b(how (do|can|should|would) (i|we|you|one)|how to|is there a way|is it possible)\b`, ""},
	{core.IntentQuestion, 4, `\b(does|do|can|will|is) [\w.-]+( [\w.-]+)? (support|work with|work on|integrate|handle|read|sync|encrypt|export|import|allow|legal)\b`, ""},
	{core.IntentQuestion, 4, `\b(does anyone|anyone) know (if|whether|how|why|what|when)\b|\bwhat happens (to|if|when)\b|\bwhy (does|do|is|are|won't|can't)\b`, ""},
	{core.IntentQuestion, 3, `\b(question for|quick question|help me|need help|what's the|what is the)\b`, ""},
	{core.IntentQuestion, 1, `\?`, ""},

	// Praise: a satisfied user; useful for testimonials, seldom a lead.
	// Its words are all moods.

	// Discussion: news, opinions and chatter around the phrase.
	{core.IntentDiscussion, 3, `\b(not worth|sticking with|decided against|no need for)\b`, "decided against buying"},
	{core.IntentDiscussion, 3, `\bno longer interested\b|\bnot interested in (buying|getting|upgrading|switching|renewing)\b`, "is not buying"},
	{core.IntentDiscussion, 3, `\b(does anyone else|is it just me|unpopular opinion|hot take|fun fact|today i learned|til|the irony|not sponsored|wrote up|makes sense)\b`, ""},
	{core.IntentDiscussion, 2, `\b(interesting|curious how|announced|announces|layoffs|acquired|acquisition|article|report|news|lol|lmao|basically)\b|😂|🤣`, ""},

	// Promotion: sellers, spam, self-promotion and job posts, which a
	// listener wants out of the way.
	{core.IntentPromotion, 7, `\b(we're|we are|now|is) hiring\b|\bhiring:|\bjob (opening|opportunity)\b`, "job post"},
	{core.IntentPromotion, 7, `\b(discount|promo|coupon|referral|affiliate) (code|link)\b|\buse (my )?code\b|\[affiliate\]|#ad\b|\[ad\]|#sponsored\b`, "pushes a code or affiliate link"},
	{core.IntentPromotion, 5, `\b(apply (at|now|here|today)|apply:|send (your |a |me your )?(resume|cv)|careers\.|jobs@|jobs\.)`, "job post"},
	{core.IntentPromotion, 5, `\b\d+ ?% off\b|\blimited time\b|\bonly \d+ left\b|\bonly \$\d|\blink in (my )?bio\b|\bdm (me )?for\b|\bmessage me\b|\bbrand new sealed\b|\bshipping available\b`, "sells or advertises"},
	{core.IntentPromotion, 5, `\b(book a (free )?(call|demo|consultation)|free consultation|please upvote|upvote|product hunt|just launched|we launched|check it out|join my|our agency)\b`, "self-promotion"},
	{core.IntentPromotion, 4, `\b(i|we) (made|built|build|created|developed) (a|an|my|our|custom)\b|\bwould love (your )?feedback\b|\b\d+\+? years (of )?experience\b`, "self-promotion"},
	{core.IntentPromotion, 5, `\b(100% working|lifetime (warranty|access|deal|license)|telegram|whatsapp)\b`, "sells or advertises"},
	{core.IntentPromotion, 2, `https?://|\bbit\.ly/|\b[\w-]+\.(com|io|co|net|ly|shop|store)/`, "carries a link"},
	{core.IntentPromotion, 1, `!!+`, "sells or advertises"},
}

// plans are what an author says they will do: buy, leave, switch. A
// negator before one withdraws it ("not looking to buy", "not planning
// to switch"): the author stays where they are, which is chatter, not a
// lead (see readPlan in score.go). Weights as in specs.
var plans = []spec{
	{core.IntentBuying, 6, `\b(ready|looking|planning|about|going|want|need) to (buy|purchase|order|sign up|subscribe|get)\b`, ""},
	{core.IntentBuying, 6, `\b(gonna|wanna) (buy|get)\b`, ""},
	{core.IntentBuying, 5, `\b(thinking (about|of)|considering) (buying|purchasing|getting|upgrading)\b`, ""},
	{core.IntentBuying, 2, `\b(buy|buying|purchase|purchasing|upgrade to|sign up for)\b`, ""},
	{core.IntentRecommendation, 5, `\b(switching|moving|migrating) (away )?from\b`, "is switching"},
	{core.IntentComplaint, 6, `\b(trying|want|going) to cancel\b`, "wants to cancel"},
	{core.IntentComplaint, 5, `\b(considering|thinking (about|of)|about to|ready to|planning to) (leaving|moving|switching|cancel\w*|dropping|quitting|leave|switch|drop|quit)\b`, "is ready to leave"},
}

// withdrawn is how the reason names a plan a negator withdraws.
var withdrawn = map[core.Intent]string{
	core.IntentBuying:         "is not buying",
	core.IntentRecommendation: "is staying",
	core.IntentComplaint:      "is staying",
}

// moods are the words of praise and complaint: a negation before one
// turns its sense ("not great" complains, "no complaints" praises), and
// praise can be said in sarcasm or asked about (see readMood in
// score.go). Weights as in specs.
var moods = []spec{
	// Complaint: the words of an unhappy user.
	{core.IntentComplaint, 5, `\b(hate|hates|hated|worst|garbage|trash|terrible|awful|horrible|useless|unusable|nightmare|ridiculous|furious|fed up|sick of|waste of (money|time)|rip-?off|scammed)\b`, ""},
	{core.IntentComplaint, 4, `\b(disappointed|disappointing|frustrat\w*|annoy\w*|a joke|unacceptable|overpriced|insane|outrageous|pathetic)\b`, ""},
	{core.IntentComplaint, 3, `\bbad\b`, ""},
	{core.IntentComplaint, 2, `\b(complaints?|issues?|problems?)\b`, ""},

	// Praise: a satisfied user; useful for testimonials, seldom a lead.
	{core.IntentPraise, 6, `\b(highly recommend|couldn't be happier|could not be happier|worth every penny|game ?changer|best purchase|works perfectly|changed (my life|how i))\b`, ""},
	{core.IntentPraise, 5, `\bbest [\w ]{0,20}(i've|i have|i) (ever )?(used|use|bought|owned|had)\b`, ""},
	{core.IntentPraise, 5, `\b(can't|cannot|cant|couldn't) (thank|praise) ([\w.-]+ ){0,4}enough\b|\b(can't|cannot|cant) say enough good things\b`, ""},
	{core.IntentPraise, 4, `\b(i love|love (my|it|this|the|how)|loving|amazing|fantastic|awesome|excellent|brilliant|incredible|impressed|shout ?out|huge thanks|thank you|thanks to|saved me|chef's kiss|unreal)\b`, ""},
	{core.IntentPraise, 3, `\brecommend\b`, ""},
	{core.IntentPraise, 2, `\b(great|love|happy with|still works|solid)\b|❤️|❤|😍|🙌|🙏|💯`, ""},
}

// cues is plans, specs and moods compiled once. The patterns are
// constants, so a bad one fails every test in this package at once rather
// than at run time.
var cues = slices.Concat(compile(plans, false, true), compile(specs, false, false), compile(moods, true, false))

func compile(ss []spec, mood, plan bool) []cue {
	out := make([]cue, 0, len(ss))
	for _, s := range ss {
		why := s.why
		if why == "" {
			why = whyOf[s.intent]
		}
		// The text keeps the modifier letter apostrophe ʼ, which the
		// matcher reads as a letter, so a cue's apostrophe accepts it:
		// "donʼt" is "don't" to a reader.
		pattern := strings.ReplaceAll(s.pattern, "'", "['ʼ]")
		re := regexp.MustCompile(pattern)
		var need []string
		if t, err := syntax.Parse(pattern, syntax.Perl); err == nil {
			need = needed(t.Simplify())
		}
		out = append(out, cue{intent: s.intent, weight: s.weight, why: why, re: re, need: need, mood: mood, plan: plan})
	}
	return out
}

// needed returns literals of which at least one occurs in every match of
// t, or nil when it cannot tell. It must never be wrong, only unhelpful:
// a concatenation needs what any one part needs (the part with the
// longest shortest literal is the most selective), an alternation needs
// what one of its branches needs.
func needed(t *syntax.Regexp) []string {
	switch t.Op {
	case syntax.OpLiteral:
		if t.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(t.Rune)}
	case syntax.OpCharClass:
		// The parser folds alternatives of single characters ("😂|🤣")
		// into a class; a short class still names its members.
		var all []string
		for i := 0; i+1 < len(t.Rune); i += 2 {
			if t.Rune[i+1]-t.Rune[i] > 8 || len(all) > 8 {
				return nil
			}
			for r := t.Rune[i]; r <= t.Rune[i+1]; r++ {
				all = append(all, string(r))
			}
		}
		return all
	case syntax.OpCapture, syntax.OpPlus:
		return needed(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min == 0 {
			return nil
		}
		return needed(t.Sub[0])
	case syntax.OpConcat:
		var best []string
		for _, sub := range t.Sub {
			if n := needed(sub); n != nil && shortest(n) > shortest(best) {
				best = n
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range t.Sub {
			n := needed(sub)
			if n == nil {
				return nil
			}
			all = append(all, n...)
		}
		return all
	}
	return nil
}

func shortest(ss []string) int {
	if len(ss) == 0 {
		return 0
	}
	n := len(ss[0])
	for _, s := range ss[1:] {
		n = min(n, len(s))
	}
	return n
}
