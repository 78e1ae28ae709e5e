// Package matchbench compares the phrase matcher of package match with
// the obvious alternatives on a synthetic corpus of posts: a loop of
// per-phrase searches and the github.com/petar-dambovaliev/aho-corasick
// module. It lives apart from match because it imports that module.
//
// The corpus and phrase sets are generated from fixed seeds, so every run
// measures the same work:
//
//	go test -run '^$' -bench . -benchtime 3x -cpu 1 ./bench/matchbench
//
// Two kinds of phrase set are measured: Phrases, dense, where most words
// of the text are phrase words, and Tracked, sparse, brand and product
// names as a listening service tracks them.
package matchbench

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// common are the head of the word distribution, so that text reads a
// little like English and the most frequent words are real ones.
var common = strings.Fields(`the be to of and a in that have it for not on
with he as you do at this but his by from they we say her she or an will my
one all would there their what so up out if about who get which go me when
make can like time no just him know take people into year your good some
could them see other than then now look only come its over think also back
after use two how our work first well way even new want because any these
give day most us is are was were been has had did said got made really very
much more still need best price buy review issue problem help great love hate
worth cheap fast slow broken app phone laptop game update release team`)

// products are names with symbols and mixed case, the kind of phrase that
// needs the symbol-edge rule.
var products = []string{
	"c++", "C#", "node.js", "Wi-Fi", "GPT-4", "PS5", "iPhone", "MacBook",
	"AirPods", "e-mail", "3D", "4K", "USB-C", "Go", "F#", ".NET", "R2-D2",
}

// foreign are non-ASCII words: accents, sharp s, Greek, Cyrillic, CJK.
var foreign = []string{
	"café", "naïve", "über", "straße", "Größe", "señor", "mañana", "smørrebrød",
	"déjà", "façade", "Ærø", "σοφία", "ΑΘΗΝΑ", "привет", "Москва", "東京",
	"日本語", "Zürich", "İstanbul", "crème", "brûlée", "fiancée",
}

var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr sh st th tr ch sl sn")
	vowels = strings.Fields("a e i o u ai ea ou io ee oo")
	codas  = append([]string{"", "", ""}, strings.Fields("n r s t l m nd st ck ng x")...)
)

// syllables makes an invented word of 1 to 3 syllables, mostly short.
func syllables(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(2) + rng.IntN(2)*rng.IntN(2) {
		b.WriteString(onsets[rng.IntN(len(onsets))])
		b.WriteString(vowels[rng.IntN(len(vowels))])
		b.WriteString(codas[rng.IntN(len(codas))])
	}
	return b.String()
}

// Vocabulary returns the corpus words, most frequent first: the common
// words, then invented words, a few per hundred of them with accents.
func Vocabulary() []string {
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	var words []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, w := range common {
		add(w)
	}
	accents := strings.NewReplacer("e", "é", "u", "ü", "o", "ö", "n", "ñ")
	for len(words) < 4000 {
		w := syllables(rng)
		if rng.IntN(40) == 0 {
			w = accents.Replace(w)
		}
		add(w)
	}
	return words
}

// Corpus returns posts of 50 to 2,000 bytes, about size bytes in all.
func Corpus(size int) []string {
	rng := rand.New(rand.NewPCG(1, 1))
	vocab := Vocabulary()
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	var posts []string
	total := 0
	var b strings.Builder
	for total < size {
		want := 50 + rng.IntN(1951)
		b.Reset()
		for b.Len() < want {
			words := 4 + rng.IntN(15)
			for j := range words {
				var w string
				switch k := rng.IntN(100); {
				case k < 2:
					w = products[rng.IntN(len(products))]
				case k < 3:
					w = foreign[rng.IntN(len(foreign))]
				case k < 4:
					w = "#" + vocab[zipf.Uint64()]
				default:
					w = vocab[zipf.Uint64()]
				}
				if j == 0 || rng.IntN(30) == 0 {
					w = capitalize(w)
				}
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
				if j < words-1 && rng.IntN(12) == 0 {
					b.WriteByte(',')
				}
			}
			b.WriteByte(".!?"[rng.IntN(3)])
			if rng.IntN(8) == 0 {
				b.WriteString("\n\n")
			} else {
				b.WriteByte(' ')
			}
		}
		p := b.String()
		if len(p) > want {
			p = p[:want]
			for !utf8.ValidString(p) {
				p = p[:len(p)-1]
			}
		}
		posts = append(posts, p)
		total += len(p)
	}
	return posts
}

// Phrases returns n distinct phrases (distinct under folding), a dense
// set that stresses the automaton: two in three are one to four corpus
// words, most drawn evenly from the vocabulary and one in ten by corpus
// frequency; the rest are invented brand names, alone or with a word,
// hashtags and product names with a word. So single words mostly occur
// in the corpus, longer phrases and brands mostly do not.
func Phrases(n int) []string {
	return phrases(rand.New(rand.NewPCG(2, uint64(n))), n, mix{words: 65, minWords: 1})
}

// Tracked returns n distinct phrases of the kind a listening service
// tracks: seven in ten are invented brand names, alone or with a corpus
// word, two in ten are two to four corpus words, and the rest hashtags
// and product names with a word. No phrase is a single corpus word, so
// matches are sparse, as in a real stream of posts: at 10,000 phrases
// about one every 500 bytes of the corpus, against one every 9 for
// Phrases.
func Tracked(n int) []string {
	return phrases(rand.New(rand.NewPCG(5, uint64(n))), n, mix{words: 20, minWords: 2})
}

// mix sets the kinds of phrase: words in a hundred are minWords to four
// corpus words; brands take the rest up to 90, hashtags the next five
// and product names the last five.
type mix struct{ words, minWords int }

func phrases(rng *rand.Rand, n int, m mix) []string {
	vocab := Vocabulary()
	zipf := rand.NewZipf(rng, 1.2, 1, uint64(len(vocab)-1))
	word := func() string {
		if rng.IntN(10) == 0 {
			return vocab[zipf.Uint64()]
		}
		return vocab[rng.IntN(len(vocab))]
	}
	seen := map[string]bool{}
	phrases := make([]string, 0, n)
	for len(phrases) < n {
		var parts []string
		switch k := rng.IntN(100); {
		case k < m.words:
			for range m.minWords + rng.IntN(5-m.minWords) {
				parts = append(parts, word())
			}
		case k < 90:
			parts = append(parts, capitalize(syllables(rng)+syllables(rng)))
			if rng.IntN(2) == 0 {
				parts = append(parts, word())
			}
		case k < 95:
			parts = append(parts, "#"+word())
		default:
			parts = append(parts, products[rng.IntN(len(products))], word())
		}
		p := strings.Join(parts, " ")
		if key := core.FoldKey(p); !seen[key] {
			seen[key] = true
			phrases = append(phrases, p)
		}
	}
	return phrases
}

func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}
