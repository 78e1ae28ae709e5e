package app

import (
	"context"
	"slices"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A phrase of a script written without spaces is found inside a run of
// text by ingest, and by a preview from the window both before and after
// the posts are in the text index, which holds each such character as a
// word: the index reads only the posts that hold the phrase's characters
// one after another. A filter's words of those scripts are found inside
// a run of text too. The posts are made up in the shape of ordinary news
// posts in Japanese, Chinese, Korean and Thai: a name, then particles and
// the rest of the sentence with no space.
func TestWindowFindsUnspacedScripts(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		listening, trying := w.owner(t, "cjk-live@example.com"), w.owner(t, "cjk-try@example.com")
		type tracked struct {
			phrase  string
			filters core.PhraseFilters
			want    []string // the posts it matches, newest first
		}
		phrases := []tracked{
			{"東京", core.PhraseFilters{}, []string{"1"}},
			// 求人: hiring.
			{"ソニー", core.PhraseFilters{Exclude: []string{"求人"}}, []string{"2"}},
			{"苹果", core.PhraseFilters{}, []string{"4"}},
			{"삼성", core.PhraseFilters{Require: []string{"발표"}}, []string{"5"}},
			{"กรุงเทพ", core.PhraseFilters{}, []string{"6"}},
			{"acme", core.PhraseFilters{}, []string{"7"}},
		}
		names := map[string]string{}
		for _, p := range phrases {
			ph, _, err := ww.phrases.AddWithFilters(ctx, listening.ID, p.phrase, "x", "", p.filters, "")
			if err != nil {
				t.Fatal(err)
			}
			names[ph.ID] = p.phrase
		}
		posts := []string{
			"1: 東京タワーで新しいイベントが始まった",
			"2: ソニーの新製品が発表された",
			"3: ソニーの求人情報をチェック",
			"4: 我爱苹果手机",
			"5: 삼성은 새로운 스마트폰을 발표했다",
			"6: วันนี้ที่กรุงเทพมีฝนตกหนัก",
			"7: acmeの新製品",
			"8: acmesの新製品、パナソニックの東芝",
			"9: 오늘 삼성이 문을 닫았다",
		}
		for _, o := range []string{listening.ID, trying.ID} {
			ww.send(t, o, posts...)
		}
		ms, _, err := w.matches.Matches(ctx, listening.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		made := map[string][]string{}
		for _, m := range ms {
			made[names[m.PhraseID]] = append(made[names[m.PhraseID]], m.Post.ExternalID)
		}
		for _, p := range phrases {
			if !slices.Equal(made[p.phrase], p.want) {
				t.Errorf("ingest matched %q in %v, want %v", p.phrase, made[p.phrase], p.want)
			}
		}
		preview := func(when string, indexed bool) {
			t.Helper()
			for _, p := range phrases {
				pv, err := ww.window.Preview(ctx, trying.ID, p.phrase, "x", "", p.filters)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(pv.Window.First, postID); !slices.Equal(got, p.want) || pv.Window.Count != len(p.want) {
					t.Errorf("preview of %q %s found %v (count %d), want %v", p.phrase, when, got, pv.Window.Count, p.want)
				}
				// Read from the index, a preview reads only the posts
				// that hold the phrase's words: "ソニー" also reads the
				// post its filter drops, "삼성" the one it does not
				// require, "acme" none more ("acmes" is another word).
				read := map[string]int{"ソニー": 2, "삼성": 2}[p.phrase]
				if read == 0 {
					read = 1
				}
				if indexed && pv.Window.Read != read {
					t.Errorf("preview of %q %s read %d posts, want %d", p.phrase, when, pv.Window.Read, read)
				}
			}
		}
		preview("before the posts are indexed", false)
		if n, err := ww.window.Index(ctx); err != nil || n != 2*len(posts) {
			t.Fatalf("Index = %d, %v", n, err)
		}
		preview("once they are indexed", true)
	})
}
