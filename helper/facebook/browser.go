package facebook

import (
	"context"
	"strings"

	"github.com/earshothq/earshot/helper/browser"
)

// Browser is the PageReader that opens pages in Chromium (helper/browser).
// It keeps one browser across reads, started at the first and restarted
// when the proxy changes, since a browser's proxy is set when it starts;
// Close stops it.
type Browser struct {
	// Options start the browser; their Proxy is each request's.
	Options browser.Options

	b     *browser.Browser
	proxy string // the proxy b was started with
}

var _ PageReader = (*Browser)(nil)

// headSize is how much of the document Health reads: a checkpoint,
// captcha or block page names itself early.
const headSize = 16 << 10

// Read implements PageReader.
func (p *Browser) Read(ctx context.Context, r PageRequest) (Page, error) {
	px := ""
	if r.Proxy != nil {
		px = r.Proxy.String()
	}
	if p.b == nil || p.proxy != px {
		if err := p.Close(); err != nil {
			return Page{}, err
		}
		o := p.Options
		o.Proxy = r.Proxy
		b, err := browser.Start(ctx, o)
		if err != nil {
			return Page{}, err
		}
		p.b, p.proxy = b, px
	}
	pg, err := p.b.Read(ctx, browser.Request{URL: r.URL, Cookies: r.Cookies, CookieURL: r.CookieURL, Match: r.Match, Done: done})
	if err != nil {
		return Page{}, err
	}
	out := Page{URL: pg.URL, Status: pg.Status, Head: string(pg.Document[:min(len(pg.Document), headSize)])}
	for _, a := range pg.Answers {
		if a.Body != nil {
			out.Answers = append(out.Answers, a.Body)
		}
	}
	return out, nil
}

// Close stops the browser.
func (p *Browser) Close() error {
	if p.b == nil {
		return nil
	}
	err := p.b.Close()
	p.b = nil
	return err
}

// done says when a page has shown what it will: an answer carrying
// search results (facebook's page also asks GraphQL for its chrome: the
// notifications, the chat list), or a page that is not the one asked for
// (a login wall, a checkpoint, a block).
func done(p *browser.Page) bool {
	if p.Status != 200 {
		return true
	}
	if issue, _ := Health(p.URL, p.Status, string(p.Document[:min(len(p.Document), headSize)])); issue != "" {
		return true
	}
	for _, a := range p.Answers {
		// Results, or the empty result list of a search that found none.
		b := string(a.Body)
		if strings.Contains(b, `"post_id"`) || strings.Contains(b, `"serpResponse"`) || strings.Contains(b, `"group_feed"`) {
			return true
		}
	}
	return false
}
