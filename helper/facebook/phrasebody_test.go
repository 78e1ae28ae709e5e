package facebook

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// The start of a page goes to POST /account-status without the phrase
// searched, as the reader's own classifier reads it: the server reads
// the body for a block or captcha page's words (core/health's markers,
// before the status), and a search page repeats its phrase in its title.
// With it, a phrase such as "Captcha solver" made a search page without
// results, or facebook's 429, captcha_html: the account paused until a
// new session, which would not have helped. The pages are search pages'
// starts as facebook renders them (testdata/README.md).
func TestTheReportedPageLeavesThePhraseOut(t *testing.T) {
	const head = `<!DOCTYPE html><html><head><title>Captcha &amp; Solver - Search | Facebook</title></head><body><script>{"q":"captcha & solver"}</script>`
	for name, pg := range map[string]Page{
		"a search page without results": {Status: 200, Head: head},
		"a 429":                         {Status: 429, Head: head},
		"a 500":                         {Status: 500, Head: head},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := searchOnce(t, pg, "Captcha & Solver")
			if len(r.reports) == 0 {
				t.Fatal("nothing reported")
			}
			for _, s := range r.reports {
				if strings.Contains(strings.ToLower(s.Body), "captcha") {
					t.Errorf("reported %+v, with the phrase", s)
				}
				if !strings.Contains(s.Body, "Search | Facebook") {
					t.Errorf("reported %+v, without the rest of the page", s)
				}
			}
		})
	}
}

// searchOnce reads phrase's search, without groups, from a browser that
// answers every address with pg, and returns what the read sent.
func searchOnce(t *testing.T, pg Page, phrase string) (*run, error) {
	t.Helper()
	r, rd, in := searchReader(t, pg)
	in.Phrases = []helper.Phrase{{Phrase: phrase}}
	return r, rd.Read(context.Background(), in, r.emit)
}

// searchReader is a reader without groups over a browser that answers
// every address with pg, with the input of its first read.
func searchReader(t *testing.T, pg Page) (*run, *Reader, helper.In) {
	t.Helper()
	r := &run{since: map[string]string{}}
	pages := &fakePages{answer: func(u *url.URL) Page {
		p := pg
		p.URL = u.String()
		return p
	}}
	rd := newReader(t, pages, r)
	rd.Groups = -1
	return r, rd, r.in(nil)
}
