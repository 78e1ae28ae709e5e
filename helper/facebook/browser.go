package facebook

import (
	"context"
	"fmt"

	"github.com/earshothq/earshot/helper/browser"
)

// Browser is the PageReader that opens pages in Chromium (helper/browser).
// It reads with Shared, the browser shared with the helper's other
// readers, or else keeps one of its own across reads, started at the
// first and restarted when the proxy changes, since a browser's proxy is
// set when it starts; Close stops its own.
type Browser struct {
	// Shared is the browser shared with the helper's other readers, which
	// its owner closes; nil starts one of this Browser's own.
	Shared *browser.Shared
	// Options start its own browser; their Proxy is each request's.
	Options browser.Options

	own *browser.Shared
}

var _ PageReader = (*Browser)(nil)

// headSize is how much of the document Health reads: a checkpoint,
// captcha or block page names itself early.
const headSize = 16 << 10

// Read implements PageReader.
func (p *Browser) Read(ctx context.Context, r PageRequest) (Page, error) {
	bs := p.Shared
	if bs == nil {
		if p.own == nil {
			p.own = &browser.Shared{Options: p.Options}
		}
		bs = p.own
	}
	b, err := bs.Browser(ctx, r.Proxy)
	if err != nil {
		return Page{}, err
	}
	holds := r.Holds
	if holds == nil {
		holds = hasResults
	}
	pg, err := b.Read(ctx, browser.Request{URL: r.URL, Cookies: r.Cookies, CookieURL: r.CookieURL, Match: r.Match,
		Done: func(p *browser.Page) bool { return done(p, holds) }})
	if err != nil {
		return Page{}, err
	}
	if pg.Status == 0 {
		// Cut off before the document answered: no answer came, which
		// the reader reports as noResponse; a status 0 is no answer the
		// server takes.
		return Page{}, fmt.Errorf("the page did not answer (cut off: %s)", pg.CutOff)
	}
	out := Page{URL: pg.URL, Status: pg.Status, Head: string(pg.Document[:min(len(pg.Document), headSize)]), Header: pg.Header, Document: pg.Document, CutOff: pg.CutOff}
	for _, a := range pg.Answers {
		if a.Body != nil {
			out.Answers = append(out.Answers, a.Body)
		}
	}
	return out, nil
}

// Close stops its own browser; a shared one is its owner's.
func (p *Browser) Close() error {
	if p.own == nil {
		return nil
	}
	return p.own.Close()
}

// done says when a page has shown what it will: what holds looks for, in
// the document (the first results facebook renders into the page) or in
// an answer (facebook's page also asks GraphQL for its chrome: the
// notifications, the chat list), or a page that is not the one asked for
// (a login wall, a checkpoint, a block).
func done(p *browser.Page, holds func([]byte) bool) bool {
	if p.Status != 200 {
		return true
	}
	if issue, _ := Health(p.URL, p.Status, string(p.Document[:min(len(p.Document), headSize)])); issue != "" {
		return true
	}
	answers := make([][]byte, 0, len(p.Answers))
	for _, a := range p.Answers {
		answers = append(answers, a.Body)
	}
	return pageHolds(p.Document, answers, holds)
}
