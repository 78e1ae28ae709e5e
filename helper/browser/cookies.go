package browser

import (
	"context"
	"errors"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/core"
)

// Visit opens r.URL in a new tab with r.Cookies, through the proxy, for a
// person to use (solve a challenge, sign in again), and waits until they
// close the tab, done closes, or ctx ends. It then returns every cookie
// the browser holds: the session the site gave after the person's
// visit. r.Match and r.Done are not used, and no time or page cap
// applies: a person takes the time they need. The browser should be
// started with Options.Visible.
func (b *Browser) Visit(ctx context.Context, r Request, done <-chan struct{}) ([]core.Cookie, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel == nil {
		return nil, errors.New("browser: closed")
	}
	tctx, closeTab := chromedp.NewContext(b.ctx)
	defer closeTab()
	vctx, stop := context.WithCancel(ctx)
	defer stop()
	r.Match = func(string) bool { return false }
	r.Done = func(*Page) bool { return false }
	rd := &reading{b: b, r: r, p: &Page{}, wake: make(chan struct{}, 1), reqs: map[network.RequestID]*req{}, person: true}
	_, err := chromedp.Run(tctx, chromedp.Action[chromedp.Void](func(_ context.Context, t *chromedp.Target) (chromedp.Void, error) {
		gone, err := chromedp.Detached(tctx)
		if err != nil {
			return chromedp.Void{}, err
		}
		go func() {
			select {
			case <-gone:
			case <-done:
			case <-vctx.Done():
			}
			stop()
		}()
		return chromedp.Void{}, rd.run(vctx, tctx, t)
	}))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && vctx.Err() == nil {
		return nil, err
	}
	return b.cookies(ctx)
}

// Cookies returns every cookie the browser holds, of every site.
func (b *Browser) Cookies(ctx context.Context) ([]core.Cookie, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel == nil {
		return nil, errors.New("browser: closed")
	}
	return b.cookies(ctx)
}

func (b *Browser) cookies(ctx context.Context) ([]core.Cookie, error) {
	// Storage.getCookies is the browser's, not a tab's: the cookies are
	// read whether or not the person closed the page.
	res, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		return nil, err
	}
	out := make([]core.Cookie, 0, len(res.Cookies))
	for _, c := range res.Cookies {
		k := core.Cookie{Domain: c.Domain, Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly}
		if !c.Session && c.Expires > 0 {
			k.Expires = time.Unix(int64(c.Expires), 0).UTC()
		}
		out = append(out, k)
	}
	return out, nil
}
