package dashboard

import (
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
)

func TestHighlight(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		phrase string
		q      string
		want   template.HTML
	}{
		{"phrase", "We use Acme CRM daily", "acme crm", "", "We use <mark>Acme CRM</mark> daily"},
		{"every occurrence", "acme, ACME and acme!", "acme", "", "<mark>acme</mark>, <mark>ACME</mark> and <mark>acme</mark>!"},
		{"word boundaries", "acmes and preacme and acme_x and acme", "acme", "", "acmes and preacme and acme_x and <mark>acme</mark>"},
		{"any white space for a space", "acme\n\t crm", "acme  crm", "", "<mark>acme\n\t crm</mark>"},
		{"symbol edges need no boundary", "use c++x now", "c++", "", "use <mark>c++</mark>x now"},
		{"unicode folding", "ΣΟΦΊΑ and σοφία", "σοφία", "", "<mark>ΣΟΦΊΑ</mark> and <mark>σοφία</mark>"},
		{"search words", "Pricing of acme went up", "acme", "pricing up", "<mark>Pricing</mark> of <mark>acme</mark> went <mark>up</mark>"},
		{"search phrase across punctuation", "moved off acme-crm.", "zzz", `"acme crm"`, "moved off <mark>acme-crm</mark>."},
		{"search phrase needs its order", "crm acme", "zzz", `"acme crm"`, "crm acme"},
		{"excluded words are not marked", "acme spam", "zzz", "acme -spam", "<mark>acme</mark> spam"},
		{"overlaps merge", "acme crm pricing", "acme crm", `"crm pricing"`, "<mark>acme crm pricing</mark>"},
		{"search words whole", "pricings and pricing", "zzz", "pricing", "pricings and <mark>pricing</mark>"},
		{"nothing found", "plain text", "acme", "", "plain text"},
		{"empty phrase", "plain text", "", "", "plain text"},
		{"bad bytes", "acme\xff acme", "acme", "", "<mark>acme</mark>\ufffd <mark>acme</mark>"},
		{"typed variants, as the matcher reads them", "Joe\u2019s and \uff21\uff23\uff2d\uff25", "joe's", "", "<mark>Joe\u2019s</mark> and \uff21\uff23\uff2d\uff25"},
		{"full-width forms", "\uff21\uff23\uff2d\uff25 rocks", "acme", "", "<mark>\uff21\uff23\uff2d\uff25</mark> rocks"},
		// Scripts written without spaces: a phrase is marked inside a
		// run of text, as the matcher finds it there (sentences in the
		// shape of ordinary news posts: a name, then a particle and the
		// rest of the sentence with no space).
		{"japanese inside a run", "東京タワーで新しいイベント", "東京", "", "<mark>東京</mark>タワーで新しいイベント"},
		{"japanese brand before a particle", "ソニーの新製品、ソニー製", "ソニー", "", "<mark>ソニー</mark>の新製品、<mark>ソニー</mark>製"},
		{"chinese", "我爱苹果手机", "苹果", "", "我爱<mark>苹果</mark>手机"},
		{"korean particle", "삼성은 새로운 스마트폰을 발표했다", "삼성", "", "<mark>삼성</mark>은 새로운 스마트폰을 발표했다"},
		{"thai", "วันนี้ที่กรุงเทพมีฝนตกหนัก", "กรุงเทพ", "", "วันนี้ที่<mark>กรุงเทพ</mark>มีฝนตกหนัก"},
		{"latin against kana", "acmeの新製品 and acmes", "acme", "", "<mark>acme</mark>の新製品 and acmes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := core.ParseSearch(c.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := highlight(c.text, c.phrase, s); got != c.want {
				t.Fatalf("highlight(%q, %q, %q) =\n%q\nwant\n%q", c.text, c.phrase, c.q, got, c.want)
			}
		})
	}
}

// A stranger's markup stays text, inside a mark and around it, whatever
// the phrase or the search asks to mark.
func TestHighlightEscapes(t *testing.T) {
	text := `<script>alert("acme")</script> <img src=x onerror=alert(1)> acme & 'acme' <mark>acme</mark>`
	for _, q := range []string{"", "script", "img src", `"alert 1"`, "mark"} {
		s, _ := core.ParseSearch(q)
		for _, phrase := range []string{"acme", "<script>", "alert(", "<mark>"} {
			got := string(highlight(text, phrase, s))
			plain := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(got)
			if plain != template.HTMLEscapeString(text) {
				t.Fatalf("phrase %q, q %q: without its marks\n%s\nis not the text escaped\n%s", phrase, q, plain, template.HTMLEscapeString(text))
			}
			if strings.Count(got, "<") != 2*strings.Count(got, "<mark>") {
				t.Fatalf("phrase %q, q %q: markup other than marks:\n%s", phrase, q, got)
			}
		}
	}
}

// The highlight marks a phrase in a text exactly when the matcher finds
// it there, on random texts that mix scripts written with and without
// spaces, punctuation and white space.
func TestHighlightMarksWhatTheMatcherFinds(t *testing.T) {
	alphabet := []string{"a", "b", "A", "é", "\u0301", "_", "1", " ", "\t", "-", "+", "#", "。", "東", "京", "ー", "ｶ", "삼", "은", "ก", "\u0e48", "’", "'", "Ａ"}
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	found := 0
	for range 20000 {
		phrase := strings.TrimSpace(random(1 + rng.IntN(3)))
		if phrase == "" {
			continue
		}
		text := random(rng.IntN(5)) + phrase + random(rng.IntN(5))
		if rng.IntN(3) == 0 {
			text = random(1 + rng.IntN(8))
		}
		matched := len(match.Compile([]string{phrase}).Find(text)) > 0
		if matched {
			found++
		}
		if marked := len(phraseSpans(text, phrase)) > 0; marked != matched {
			t.Fatalf("phrase %q in %q: matched %v, marked %v", phrase, text, matched, marked)
		}
	}
	if found < 5000 {
		t.Fatalf("only %d matches checked", found)
	}
}
