package match

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFindUnspacedScripts checks that a phrase of a script written
// without spaces between words is found inside a run of text, and that
// the scripts written with spaces keep their boundaries. The posts are
// made up in the shape of ordinary news headlines and posts in each
// language: a brand or place name followed, with no space, by particles
// and the rest of the sentence ("ソニーの新製品が発表された": Sony's new
// product was announced; "我爱苹果手机": I love my Apple phone;
// "삼성은 새로운 스마트폰을 발표했다": Samsung announced a new smartphone;
// "วันนี้ที่กรุงเทพมีฝนตกหนัก": heavy rain in Bangkok today).
func TestFindUnspacedScripts(t *testing.T) {
	tests := []struct {
		name    string
		phrases []string
		texts   []string
		want    []int
	}{
		// Japanese.
		{"ja place before katakana", []string{"東京"}, []string{"東京タワーで新しいイベントが始まった"}, []int{0}},
		{"ja brand before a particle", []string{"ソニー"}, []string{"ソニーの新製品が発表された"}, []int{0}},
		{"ja brand mid-sentence", []string{"トヨタ"}, []string{"今日、トヨタが新型車を発表した"}, []int{0}},
		{"ja in brackets", []string{"ソニー"}, []string{"「ソニー」新型カメラを発表"}, []int{0}},
		{"ja half-width katakana", []string{"ｿﾆｰ"}, []string{"ｿﾆｰの新製品"}, []int{0}},
		{"ja prolonged sound mark edge", []string{"ソニー"}, []string{"ソニーー"}, []int{0}},
		{"ja inside a longer word", []string{"スーパー"}, []string{"スーパーマーケットが開店"}, []int{0}},
		{"ja not there", []string{"ソニー"}, []string{"パナソニックの新製品"}, nil},
		{"ja two-word phrase", []string{"ソニー 新製品"}, []string{"ソニー 新製品発表会"}, []int{0}},
		{"ja phrase space needs text space", []string{"ソニー 新製品"}, []string{"ソニー新製品発表会"}, nil},
		// Chinese.
		{"zh brand inside a sentence", []string{"苹果"}, []string{"我爱苹果手机"}, []int{0}},
		{"zh brand first", []string{"华为"}, []string{"华为发布新款手机。"}, []int{0}},
		{"zh traditional", []string{"台積電"}, []string{"台積電今天公布財報"}, []int{0}},
		{"zh not there", []string{"小米"}, []string{"华为发布新款手机"}, nil},
		// Korean: written with spaces, particles attached to the noun.
		{"ko topic particle", []string{"삼성"}, []string{"삼성은 새로운 스마트폰을 발표했다"}, []int{0}},
		{"ko subject particle", []string{"삼성"}, []string{"오늘 삼성이 신제품을 공개했다"}, []int{0}},
		{"ko compound", []string{"삼성전자"}, []string{"삼성전자가 실적을 발표했다"}, []int{0}},
		// Thai.
		{"th place inside a sentence", []string{"กรุงเทพ"}, []string{"วันนี้ที่กรุงเทพมีฝนตกหนัก"}, []int{0}},
		{"th brand first", []string{"การบินไทย"}, []string{"การบินไทยประกาศเที่ยวบินใหม่"}, []int{0}},
		{"th tone mark", []string{"ไก่"}, []string{"ร้านไก่ทอดเปิดใหม่"}, []int{0}},
		// Lao, Khmer, Myanmar.
		{"lo", []string{"ວຽງຈັນ"}, []string{"ມື້ນີ້ຢູ່ວຽງຈັນຝົນຕົກ"}, []int{0}},
		{"km", []string{"ភ្នំពេញ"}, []string{"នៅភ្នំពេញថ្ងៃនេះ"}, []int{0}},
		{"my", []string{"ရန်ကုန်"}, []string{"ယနေ့ရန်ကုန်မြို့တွင်"}, []int{0}},
		// Mixed scripts: a Latin name written against kana, Han or
		// Hangul needs no boundary on that side, on either side of it.
		{"latin before kana", []string{"iphone"}, []string{"iPhoneを買った"}, []int{0}},
		{"latin after han", []string{"acme"}, []string{"東京acme"}, []int{0}},
		{"latin before han", []string{"acme"}, []string{"acme東京"}, []int{0}},
		{"latin between hangul", []string{"galaxy s24"}, []string{"삼성은Galaxy S24를 발표"}, []int{0}},
		{"latin after hangul", []string{"sdi"}, []string{"삼성SDI 주가"}, []int{0}},
		{"full-width latin before kana", []string{"acme"}, []string{"ＡＣＭＥの株価が上昇"}, []int{0}},
		{"han phrase after latin", []string{"東京"}, []string{"acme東京"}, []int{0}},
		{"mixed phrase", []string{"acme東京"}, []string{"新acme東京店"}, []int{0}},
		// The spaced side of a mixed phrase keeps its boundary.
		{"latin still bounded by latin", []string{"acme"}, []string{"東京acmes", "xacme東京"}, nil},
		{"mixed phrase bounded on its latin edge", []string{"acme東京"}, []string{"xacme東京"}, nil},
		// Scripts written with spaces are as before.
		{"spaced latin", []string{"acme"}, []string{"acmes", "the acmecorp"}, nil},
		{"spaced cyrillic", []string{"москва"}, []string{"москвабс", "в москве"}, nil},
		{"spaced greek", []string{"σοφία"}, []string{"ΦΙΛΟΣΟΦΊΑ"}, nil},
		{"spaced vietnamese", []string{"việt"}, []string{"việtnam", "Việt Nam"}, []int{0}},
		{"spaced devanagari", []string{"भारत"}, []string{"भारतीय"}, nil},
		{"spaced combining mark", []string{"cafe"}, []string{"cafe\u0301"}, nil},
		// Parts are still searched apart.
		{"parts apart", []string{"東京"}, []string{"東", "京"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range variants {
				if got := v.find(tt.phrases, tt.texts...); !slices.Equal(got, tt.want) {
					t.Errorf("%s: Find(%q) = %v, want %v", v.name, tt.texts, got, tt.want)
				}
			}
			if ref := refFind(tt.phrases, tt.texts...); !slices.Equal(ref, tt.want) {
				t.Errorf("reference: %v, want %v", ref, tt.want)
			}
			// The index holds the phrase's words one after another
			// wherever the matcher finds it.
			if tt.want != nil {
				words := Words(strings.Join(tt.phrases, " "))
				found := false
				for _, text := range tt.texts {
					found = found || containsRun(Words(text), words)
				}
				if !found {
					t.Errorf("the words %q of %q are in none of %q", words, tt.phrases, tt.texts)
				}
			}
		})
	}
}

// containsRun reports whether sub occurs in words, one after another.
func containsRun(words, sub []string) bool {
	for i := 0; i+len(sub) <= len(words); i++ {
		if slices.Equal(words[i:i+len(sub)], sub) {
			return true
		}
	}
	return len(sub) == 0
}

// TestUnspacedEveryRune checks the fast ranges of unspaced against the
// script tables for every word character, and that folding never moves
// a character from one side of the rule to the other: the automaton
// judges the text's characters before folding, the reference after.
func TestUnspacedEveryRune(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !isWord(r) {
			if NeedsBoundary(r) {
				t.Fatalf("NeedsBoundary(%U) for a non-word character", r)
			}
			continue
		}
		if got, want := unspaced(r), refUnspaced(r); got != want {
			t.Fatalf("unspaced(%U %q) = %v, want %v", r, r, got, want)
		}
		if NeedsBoundary(r) != NeedsBoundary(Fold(r)) || isWord(Fold(r)) != isWord(r) {
			t.Fatalf("%U %q folds to %U across the rule", r, r, Fold(r))
		}
		if unspaced(r) && r < 0x0e00 {
			t.Fatalf("%U is below U+0E00", r)
		}
	}
}

// TestNeedsBoundary pins NeedsBoundary, which the dashboard's highlight
// uses to judge a phrase's edges as the matcher does.
func TestNeedsBoundary(t *testing.T) {
	for r, want := range map[rune]bool{
		'a': true, 'Z': true, '7': true, '_': true, 'é': true, 'ы': true, '\u0301': true, 'ệ': true,
		'東': false, 'の': false, 'ソ': false, 'ー': false, 'ｶ': false, '삼': false, 'ก': false, '\u0e48': false,
		'ລ': false, 'ក': false, 'က': false, '々': false,
		' ': false, '+': false, '#': false, '。': false, '、': false, '「': false, '😀': false,
	} {
		if got := NeedsBoundary(r); got != want {
			t.Errorf("NeedsBoundary(%q) = %v, want %v", r, got, want)
		}
	}
}
