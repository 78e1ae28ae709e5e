package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// ownerSessions signs in each owner of its map with the token that is
// the map's key.
type ownerSessions struct {
	fakeSessions
	owners map[string]string // token: owner id
}

func (s ownerSessions) Authenticate(_ context.Context, t string) (core.Session, error) {
	if o, ok := s.owners[t]; ok {
		return core.Session{OwnerID: o}, nil
	}
	return core.Session{}, core.Errorf(core.KindUnauthorized, "not signed in")
}

// ownerPhrases lists each owner's own phrases.
type ownerPhrases struct {
	fakePhrases
	by map[string][]core.Phrase
}

func (p ownerPhrases) List(_ context.Context, owner string, _ ports.PhraseFilter) ([]core.Phrase, error) {
	return p.by[owner], nil
}

func phrasesOf(prefix string, n int) []core.Phrase {
	out := make([]core.Phrase, n)
	for i := range out {
		out[i] = core.Phrase{ID: fmt.Sprintf("%s-id-%d", prefix, i), Phrase: fmt.Sprintf("%s %d", prefix, i),
			Platform: core.Platforms[i%len(core.Platforms)], Status: core.Listening}
		if out[i].Platform == core.Reddit {
			out[i].Community = "saas"
		}
	}
	return out
}

func ownersDashboard(t *testing.T, by map[string][]core.Phrase) *Dashboard {
	t.Helper()
	tokens := map[string]string{}
	for o := range by {
		tokens[o+strings.Repeat("t", 43-len(o))] = o
	}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: ownerSessions{owners: tokens}, Inbox: fakeInbox{}, Phrases: ownerPhrases{by: by}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func getAs(d *Dashboard, owner, path string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: owner + strings.Repeat("t", 43-len(owner))})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

var (
	phraseMenuRe = regexp.MustCompile(`(?s)<select id="f-phrase" name="phrase">(.*?)</select>`)
	optionRe     = regexp.MustCompile(`<option value="([^"]*)"[^>]*>([^<]*)</option>`)
)

// menuLabel is how the phrase menu names a phrase.
func menuLabel(p core.Phrase) string {
	label := p.Phrase + " (" + string(p.Platform)
	if p.Community != "" {
		label += ", r/" + p.Community
	}
	return label + ")"
}

// phraseMenu returns the phrase menu of an inbox page as value=label.
func phraseMenu(t *testing.T, body string) []string {
	t.Helper()
	m := phraseMenuRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no phrase menu in\n%s", body)
	}
	var out []string
	for _, o := range optionRe.FindAllStringSubmatch(m[1], -1) {
		out = append(out, o[1]+"="+o[2])
	}
	return out
}

// The phrase menu lists the owner's phrases, whatever their number: it
// once took its labels from the platform menu, listing platforms with up
// to four phrases and failing every inbox page with a fifth.
func TestInboxPhraseMenu(t *testing.T) {
	for _, n := range []int{0, 1, 5, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ps := phrasesOf("phrase", n)
			d := ownersDashboard(t, map[string][]core.Phrase{"own": ps})
			w := getAs(d, "own", "/app/")
			if w.Code != 200 {
				t.Fatalf("status %d\n%s", w.Code, w.Body)
			}
			if n == 0 {
				// Nothing to filter: the inbox is the step to add one.
				if body := w.Body.String(); phraseMenuRe.MatchString(body) || !strings.Contains(body, `href="/app/phrases">Add a phrase</a>`) {
					t.Fatalf("the inbox of an owner without phrases:\n%s", body)
				}
				return
			}
			want := []string{"=Any phrase"}
			for _, p := range ps {
				want = append(want, p.ID+"="+menuLabel(p))
			}
			if got := phraseMenu(t, w.Body.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("phrase menu:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if n > 0 {
				// The chosen phrase is the one selected.
				body := getAs(d, "own", "/app/?phrase="+ps[n-1].ID).Body.String()
				if !strings.Contains(body, `<option value="`+ps[n-1].ID+`" selected>`) {
					t.Fatalf("phrase %s not selected in\n%s", ps[n-1].ID, phraseMenuRe.FindString(body))
				}
			}
		})
	}
}

// One owner's filter form never reaches another: not by the same
// query, nor by a query naming the other's phrases as the form's cache
// key joined them.
func TestInboxFormIsTheOwners(t *testing.T) {
	a, b := phrasesOf("alpha-secret", 2), phrasesOf("beta", 1)
	d := ownersDashboard(t, map[string][]core.Phrase{"a": a, "b": b, "c": nil})
	for range 2 {
		for _, q := range []string{"", "?show=all", "?platform=x&min_score=10"} {
			for owner, want := range map[string][]core.Phrase{"a": a, "b": b, "c": nil} {
				body := getAs(d, owner, "/app/"+q).Body.String()
				if len(want) == 0 {
					// No phrase, no menu: nobody's phrases are shown.
					if phraseMenuRe.MatchString(body) || strings.Contains(body, "alpha-secret") || strings.Contains(body, "beta") {
						t.Fatalf("%s at /app/%s:\n%s", owner, q, body)
					}
					continue
				}
				got := phraseMenu(t, body)
				if len(got) != len(want)+1 {
					t.Fatalf("%s at /app/%s: menu %q", owner, q, got)
				}
				for i, p := range want {
					if !strings.HasPrefix(got[i+1], p.ID+"=") {
						t.Fatalf("%s at /app/%s: menu %q", owner, q, got)
					}
				}
			}
		}
	}
	// A query whose phrase carries NULs and another owner's phrase, as
	// the cache once joined them into its key.
	forged := "\x00" + a[0].ID + "\x00" + menuLabel(a[0]) + "\x00" + a[1].ID + "\x00" + menuLabel(a[1])
	getAs(d, "a", "/app/")
	body := getAs(d, "c", "/app/?phrase="+url.QueryEscape(forged)).Body.String()
	if phraseMenuRe.MatchString(body) || strings.Contains(body, "alpha-secret") {
		t.Fatalf("owner c was shown owner a's phrases:\n%s", body)
	}
}
