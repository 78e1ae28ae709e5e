package facebook

import (
	"context"
	"fmt"
	"slices"

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
		Done: newDone(holds)})
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

// newDone returns the Done of a read: it says when a page has shown what
// it will: what holds looks for, in the document (the first results
// facebook renders into the page) or in an answer (facebook's page also
// asks GraphQL for its chrome: the notifications, the chat list), or a
// page that is not the one asked for (a login wall, a checkpoint, a
// block). The browser asks it after every answer, with every answer so
// far: it reads the document once and each answer once, as it comes,
// and keeps what it found, so the work an answer costs does not grow
// with the answers before it. What it keeps is a few fields: the
// answers are the page's, bounded by the browser's page cap.
func newDone(holds func([]byte) bool) func(p *browser.Page) bool {
	var (
		addr    string // the document read, by its address and bytes
		doc     []byte
		read    bool
		docDone bool // the document is not the page asked for, or holds
		seen    int  // the answers read
		found   bool // one of them holds
	)
	return func(p *browser.Page) bool {
		if p.Status != 200 {
			return true
		}
		if !read || addr != p.URL || !same(doc, p.Document) {
			addr, doc, read = p.URL, p.Document, true
			issue, _ := Health(p.URL, p.Status, string(p.Document[:min(len(p.Document), headSize)]))
			docDone = issue != "" || slices.ContainsFunc(blobs(p.Document), holds)
		}
		if len(p.Answers) < seen {
			seen, found = 0, false // another page's answers
		}
		for ; seen < len(p.Answers) && !found; seen++ {
			found = holds(p.Answers[seen].Body)
		}
		return docDone || found
	}
}

// same says whether a and b are the same bytes in memory: the browser
// sets a page's document once, so a document read before is the same
// slice, and comparing its contents would cost what reading it does.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
