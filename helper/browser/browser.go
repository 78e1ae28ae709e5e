// Package browser is the helper's real browser: Chromium driven over the
// DevTools protocol, which opens a platform's page with the owner's
// cookies, through the operator's proxy, and hands back the JSON answers
// the page itself receives.
//
// Readers use it where a platform's own web client is the only stable
// way in (x, facebook): the page's private API calls change their
// parameters, headers and signatures often, while the page keeps making
// them; reading what the page receives survives those changes, and the
// platform sees the requests of its own client.
//
// One Browser runs one Chromium, and reads one page at a time: each Read
// opens a tab and closes it before it returns.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/core"
)

// Defaults of Options.
const (
	// DefaultExecPath is where Debian's chromium package puts the browser.
	DefaultExecPath = "/usr/bin/chromium"
	// DefaultMaxBody bounds one answer kept: a search page's JSON is a
	// few hundred kilobytes.
	DefaultMaxBody = 4 << 20
	// DefaultMaxPage bounds all a page receives, its scripts and images
	// included: past it the read is cut off.
	DefaultMaxPage = 32 << 20
	// DefaultTimeout bounds one Read up to its first Done.
	DefaultTimeout = 45 * time.Second
	// DefaultScrollTimeout bounds each scroll for more (Request.More) up
	// to the next Done: a feed's web client asks for its next page as
	// soon as it is scrolled to the end, so a scroll that brings nothing
	// in that time has reached the end of what the page will give.
	DefaultScrollTimeout = 15 * time.Second
)

// Options start a Browser.
type Options struct {
	ExecPath string // "" is DefaultExecPath
	// Proxy is the operator's proxy (http, https, socks5 or socks5h;
	// Start refuses any other); nil reads directly. Its credentials, when it has some, are answered to the
	// proxy's 407 challenge through the DevTools Fetch domain: Chromium
	// takes no credentials in --proxy-server.
	Proxy *url.URL
	// NoSandbox runs Chromium without its sandbox, which it refuses to
	// start with as root (containers, CI).
	NoSandbox bool
	// UserDataDir is the profile; "" is a new temporary one removed by
	// Close, so that nothing of one owner's session outlives the browser.
	UserDataDir   string
	MaxBody       int64         // 0 is DefaultMaxBody
	MaxPage       int64         // 0 is DefaultMaxPage
	Timeout       time.Duration // 0 is DefaultTimeout
	ScrollTimeout time.Duration // 0 is DefaultScrollTimeout
	// Visible shows Chromium's window, for a person to use (Visit).
	Visible bool
	// extra are switches added after Start's own, for tests (a NetLog).
	extra []flag
}

// Request is one page to read.
type Request struct {
	URL string
	// Cookies are set before the page opens, each for its own domain, or
	// for CookieURL's host when it is set (a mirror or a test server).
	Cookies   []core.Cookie
	CookieURL string
	// Match picks the answers kept by their URL.
	Match func(u string) bool
	// Done says when the read has what it needs; it is asked once the
	// document has loaded and after each kept answer. nil is: one answer
	// kept.
	Done func(p *Page) bool
	// More, when set, is asked each time Done says so, and says whether
	// to read on: nil ends the read; otherwise the page is scrolled to
	// its end, as a person scrolling a feed does to load more, once the
	// function it returns has returned nil (the reader's pacing wait,
	// during which the page goes on as a page left open does), and the
	// read goes on until Done says so again. An error from that function
	// ends the read with it. The page's caps hold over all its scrolls.
	More func(p *Page) func(ctx context.Context) error
}

// Answer is one answer the page received whose URL matched.
type Answer struct {
	URL    string
	Status int
	Header http.Header
	Body   []byte // nil when it was over the size cap
}

// Page is what a read saw.
type Page struct {
	// URL and Status are the document's, after redirects: a platform's
	// answer about the account (a login wall, a checkpoint) is one.
	URL    string
	Status int
	Header http.Header
	// Document is the start of the document's HTML (at most MaxBody).
	Document []byte
	Answers  []Answer
	// Scrolls is how many times the page was scrolled for more (More).
	Scrolls int
	// CutOff says why the read stopped before Done: a time or size cap.
	CutOff string
}

// ErrNoBrowser: Chromium is not where Options say.
var ErrNoBrowser = errors.New("no Chromium to read with")

// Browser is one running Chromium.
type Browser struct {
	o        Options
	ctx      context.Context
	cancel   func()
	tempDir  string
	mu       sync.Mutex // one page at a time
	closeErr error
}

// Start starts Chromium. ctx bounds its start only; Close stops it.
func Start(ctx context.Context, o Options) (*Browser, error) {
	if o.ExecPath == "" {
		o.ExecPath = DefaultExecPath
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxPage <= 0 {
		o.MaxPage = DefaultMaxPage
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ScrollTimeout <= 0 {
		o.ScrollTimeout = DefaultScrollTimeout
	}
	if _, err := os.Stat(o.ExecPath); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoBrowser, o.ExecPath, err)
	}
	b := &Browser{o: o}
	dir := o.UserDataDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "earshot-browser-"); err != nil {
			return nil, err
		}
		b.tempDir = dir
	}
	fs, err := flags(o, dir)
	if err != nil {
		if b.tempDir != "" {
			os.RemoveAll(b.tempDir)
		}
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(o.ExecPath))
	for _, f := range fs {
		opts = append(opts, chromedp.Flag(f.name, f.value))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	b.ctx = bctx
	b.cancel = func() { cancelBrowser(); cancelAlloc() }
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err := <-started:
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("%w: %s does not start: %v", ErrNoBrowser, o.ExecPath, err)
		}
	case <-ctx.Done():
		b.Close()
		return nil, ctx.Err()
	}
	return b, nil
}

// flag is one of Chromium's command-line switches; value true is a
// switch without a value, false one left off.
type flag struct {
	name  string
	value any
}

// flags are the switches Start gives Chromium beyond chromedp's
// DefaultExecAllocatorOptions, dir being the profile.
//
// Through a socks5 proxy Chromium hands the proxy the host name of each
// URL it loads, yet its own resolver is still asked for names (the
// page's, those of its background requests), and Chromium's design
// document names parts of it that resolve by themselves (DNS prefetch):
// a lookup that reaches DNS tells the resolver what the owner reads.
// Chromium's documented answer
// (chromium.org, "Configuring a SOCKS proxy server in Chrome") is to map
// every name to "not found" except the proxy's own, so that nothing but
// the proxy's name is ever resolved locally. socks4 is refused: its
// requests carry addresses only, so Chromium resolves each name itself.
func flags(o Options, dir string) ([]flag, error) {
	fs := []flag{
		{"user-data-dir", dir},
		// chromedp.DisableGPU.
		{"disable-gpu", true},
		{"enable-unsafe-swiftshader", true},
		{"disable-background-networking", true},
		{"disable-component-update", true},
		{"disable-sync", true},
		{"no-first-run", true},
	}
	fs = append(fs, quiet(dir)...)
	if o.Visible {
		fs = append(fs, flag{"headless", false})
	}
	if o.NoSandbox {
		fs = append(fs, flag{"no-sandbox", true})
	}
	if o.Proxy != nil {
		p := *o.Proxy
		p.User = nil // never on the command line, where process lists show it
		switch p.Scheme {
		case "http", "https":
		case "socks5", "socks5h":
			// Chromium knows no socks5h: its socks5 is one, it always
			// hands the proxy the name.
			p.Scheme = "socks5"
			fs = append(fs, flag{"host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE " + p.Hostname()})
		default:
			// Not echoed whole: a malformed address may hold credentials.
			return nil, fmt.Errorf("browser: a %q proxy is not one Chromium can use without resolving names itself (http, https or socks5)", p.Scheme)
		}
		fs = append(fs, flag{"proxy-server", p.String()},
			// Every request goes through the proxy, loopback included:
			// Chromium bypasses it for loopback by default.
			flag{"proxy-bypass-list", "<-loopback>"})
	}
	return append(fs, o.extra...), nil
}

// quiet are the switches that keep Chromium from making requests of its
// own, dir being the profile. Each such request would go through the
// operator's proxy, spending the owner's traffic, and mark the session as
// a Chrome that talks to Google; --disable-background-networking and
// --disable-component-update leave these on in Chromium 156
// (quiet_test.go shows what goes when they are given). The list follows
// the switches Playwright (chromiumSwitches.ts) and chrome-launcher
// (docs/chrome-flags-for-tools.md) give to keep Chromium's background
// traffic off, plus what Chromium 156 was still seen to ask for:
//
//   - disable-features: chromedp's own two (Translate,
//     BlinkGenPropertyTrees), which this switch replaces, and
//     OptimizationHints (optimizationguide-pa.googleapis.com),
//     NetworkTimeServiceQuerying (clients2.google.com/time),
//     AutofillServerCommunication, MediaRouter and DialMediaRouteProvider
//     (Cast discovery on the local network).
//   - gaia-url: every profile asks Google's sign-in service which
//     accounts its cookies hold (accounts.google.com/ListAccounts) once
//     its network is up, and no switch or preference turns that off
//     (chromiumembedded/cef#4276); a sign-in URL on port 1, which
//     Chromium refuses as unsafe (ERR_UNSAFE_PORT), ends it before any
//     lookup or connect.
//   - optimization-guide-manifest-override: the on-device model manager
//     asks the component updater for its manifest
//     (update.googleapis.com, component ceofaddefefcbblgcgnibnonglccbfja)
//     despite --disable-component-update; pointed at a file that does
//     not exist, it reads no manifest and asks for none.
//   - webrtc-ip-handling-policy=disable_non_proxied_udp: a page's
//     WebRTC uses no UDP that bypasses the proxy (which carries none), so
//     it neither connects around the proxy nor learns the machine's
//     addresses.
//   - disable-quic: QUIC goes by UDP, which neither proxy kind carries.
//   - disable-field-trial-config: Debian's Chromium, not an official
//     build, turns on the experiments of Chromium's field-trial testing
//     config (testing/variations); off, it runs as released.
//   - the rest are Playwright's and chromedp's (given again so that the
//     list stands by itself): no domain-reliability reports, no
//     background pages of built-in extensions, no hyperlink-audit pings,
//     no phishing-model fetches, no default apps, no crash uploads, no
//     metrics uploads.
//
// What none of them stops: before each lookup, the proxy's address
// included, Chromium's resolver checks that IPv6 is reachable by
// connecting a UDP socket to 2001:4860:4860::8888 port 443
// (HOST_RESOLVER_MANAGER_IPV6_REACHABILITY_CHECK in its NetLog); a UDP
// connect sends nothing, and quiet_test.go checks that nothing is sent.
func quiet(dir string) []flag {
	return []flag{
		{"disable-features", "Translate,BlinkGenPropertyTrees,OptimizationHints,NetworkTimeServiceQuerying,AutofillServerCommunication,MediaRouter,DialMediaRouteProvider"},
		{"disable-field-trial-config", true},
		{"disable-domain-reliability", true},
		{"disable-component-extensions-with-background-pages", true},
		{"disable-client-side-phishing-detection", true},
		{"disable-default-apps", true},
		{"disable-breakpad", true},
		{"metrics-recording-only", true},
		{"no-pings", true},
		{"gaia-url", "https://earshot-no-sign-in.invalid:1"},
		{"optimization-guide-manifest-override", filepath.Join(dir, "no-model-manifest")},
		{"webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		{"disable-quic", true},
	}
}

// Close stops Chromium and removes its temporary profile.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel != nil {
		b.cancel()
		b.cancel = nil
		if b.tempDir != "" {
			b.closeErr = os.RemoveAll(b.tempDir)
		}
	}
	return b.closeErr
}

// errTimeUp cancels a read that ran out of its time.
var errTimeUp = errors.New("browser: the read's time is up")

// Read opens r.URL in a new tab and collects the answers r.Match picks
// until r.Done says so (and r.More says no more), a cap is reached, or
// ctx ends; the tab is closed before it returns. A page cut off by a cap
// is returned with CutOff set and no error.
func (b *Browser) Read(ctx context.Context, r Request) (*Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel == nil {
		return nil, errors.New("browser: closed")
	}
	tctx, closeTab := chromedp.NewContext(b.ctx)
	defer closeTab()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The time cap is a timer rather than a deadline: it stops while More
	// waits and starts again, ScrollTimeout long, at each scroll.
	timer := time.AfterFunc(b.o.Timeout, func() { cancel(errTimeUp) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, closeTab)
	defer stop()
	rd := &reading{b: b, r: r, p: &Page{}, wake: make(chan struct{}, 1), reqs: map[network.RequestID]*req{}, timer: timer}
	if rd.r.Done == nil {
		rd.r.Done = func(p *Page) bool { return len(p.Answers) > 0 }
	}
	if rd.r.Match == nil {
		rd.r.Match = func(string) bool { return false }
	}
	_, err := chromedp.Run(tctx, chromedp.Action[chromedp.Void](func(_ context.Context, t *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, rd.run(ctx, tctx, t)
	}))
	if err != nil && ctx.Err() != nil {
		if rd.p.CutOff == "" {
			rd.p.CutOff = "time"
		}
		if errors.Is(context.Cause(ctx), errTimeUp) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return rd.p, nil
		}
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return rd.p, nil
}

// req is a response the read follows.
type req struct {
	url      string
	status   int
	header   http.Header
	doc      bool
	received int64
	over     bool
}

type reading struct {
	b    *Browser
	r    Request
	p    *Page
	mu   sync.Mutex
	evs  []any
	wake chan struct{}
	reqs map[network.RequestID]*req
	got  int64 // bytes received by the page
	// person: a person drives the page (Visit), so no page cap applies.
	person bool
	// timer is the read's time cap (nil for a person's visit).
	timer *time.Timer
	// waiting is More's wait while it runs, nil otherwise; stopWait
	// cancels it.
	waiting  chan error
	stopWait func()
}

func (rd *reading) push(ev any) {
	switch ev.(type) {
	case *network.EventResponseReceived, *network.EventDataReceived, *network.EventLoadingFinished,
		*network.EventLoadingFailed, *fetch.EventRequestPaused, *fetch.EventAuthRequired:
	default:
		return
	}
	rd.mu.Lock()
	rd.evs = append(rd.evs, ev)
	rd.mu.Unlock()
	select {
	case rd.wake <- struct{}{}:
	default:
	}
}

func (rd *reading) run(ctx, tctx context.Context, t *chromedp.Target) error {
	o := rd.b.o
	if err := chromedp.Listen(tctx, rd.push); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{MaxResourceBufferSize: &o.MaxBody, MaxTotalBufferSize: &o.MaxPage}); err != nil {
		return fmt.Errorf("browser: network: %w", err)
	}
	if o.Proxy != nil && o.Proxy.User != nil {
		yes := true
		if _, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes}); err != nil {
			return fmt.Errorf("browser: fetch: %w", err)
		}
	}
	if cs := rd.cookies(); len(cs) > 0 {
		if _, err := cdp.Call(ctx, t, network.SetCookies, network.SetCookiesParams{Cookies: cs}); err != nil {
			return fmt.Errorf("browser: setting the session's cookies: %w", err)
		}
	}
	nav := make(chan error, 1)
	go func() {
		res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: rd.r.URL})
		if err == nil && res.ErrorText != "" {
			err = fmt.Errorf("browser: opening the page: %s", res.ErrorText)
		}
		nav <- err
	}()
	loaded := false
	// A wait still running when the read ends is stopped and waited for:
	// it is the reader's, and the reader goes on once Read returns.
	defer func() {
		if rd.waiting != nil {
			rd.stopWait()
			<-rd.waiting
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-nav:
			if err != nil {
				return err
			}
			nav = nil
		case err := <-rd.waiting:
			rd.waiting = nil
			if err != nil {
				return err
			}
			if err := rd.scroll(ctx, t); err != nil {
				return err
			}
		case <-rd.wake:
		}
		rd.mu.Lock()
		evs := rd.evs
		rd.evs = nil
		rd.mu.Unlock()
		for _, ev := range evs {
			done, err := rd.handle(ctx, t, ev, &loaded)
			if err != nil || done {
				return err
			}
		}
	}
}

// handle takes one event; it returns true when the read is over.
func (rd *reading) handle(ctx context.Context, t *chromedp.Target, ev any, loaded *bool) (bool, error) {
	o := rd.b.o
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		_, err := cdp.Call(ctx, t, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return false, err
	case *fetch.EventAuthRequired:
		res := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
		if ev.AuthChallenge != nil && ev.AuthChallenge.Source == fetch.AuthChallengeSourceProxy {
			pw, _ := o.Proxy.User.Password()
			res = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: o.Proxy.User.Username(), Password: pw}
		}
		_, err := cdp.Call(ctx, t, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: res})
		return false, err
	case *network.EventResponseReceived:
		doc := ev.Type == network.ResourceTypeDocument && string(ev.FrameID) == string(t.TargetID)
		if ev.Response == nil || (!doc && !rd.r.Match(ev.Response.URL)) {
			return false, nil
		}
		h := http.Header{}
		for k, v := range ev.Response.Headers {
			h.Set(k, fmt.Sprint(v))
		}
		rd.reqs[ev.RequestID] = &req{url: ev.Response.URL, status: int(ev.Response.Status), header: h, doc: doc}
		if doc {
			rd.p.URL, rd.p.Status, rd.p.Header = ev.Response.URL, int(ev.Response.Status), h
		}
	case *network.EventDataReceived:
		rd.got += ev.DataLength
		if q := rd.reqs[ev.RequestID]; q != nil {
			q.received += ev.DataLength
			q.over = q.over || q.received > o.MaxBody
		}
		if rd.got > o.MaxPage && !rd.person {
			rd.p.CutOff = fmt.Sprintf("the page received over %d bytes", o.MaxPage)
			return true, nil
		}
	case *network.EventLoadingFailed:
		// A person's visit goes on: they reload, or move on.
		if q := rd.reqs[ev.RequestID]; q != nil && q.doc && !rd.person {
			return true, fmt.Errorf("browser: the page did not load: %s", ev.ErrorText)
		}
	case *network.EventLoadingFinished:
		q := rd.reqs[ev.RequestID]
		if q == nil {
			return false, nil
		}
		delete(rd.reqs, ev.RequestID)
		var body []byte
		if !q.over && int64(ev.EncodedDataLength) <= o.MaxPage {
			if res, err := cdp.Call(ctx, t, network.GetResponseBody, network.GetResponseBodyParams{RequestID: ev.RequestID}); err == nil && int64(len(res.Body)) <= o.MaxBody {
				body = res.Body
			}
		}
		if q.doc {
			rd.p.Document = body
			*loaded = true
		} else {
			rd.p.Answers = append(rd.p.Answers, Answer{URL: q.url, Status: q.status, Header: q.header, Body: body})
		}
		if *loaded && rd.waiting == nil && rd.r.Done(rd.p) {
			return rd.more(ctx), nil
		}
	}
	return false, nil
}

// more asks r.More whether to read on, and starts its wait when it
// does; it returns true when the read is over.
func (rd *reading) more(ctx context.Context) bool {
	if rd.r.More == nil {
		return true
	}
	wait := rd.r.More(rd.p)
	if wait == nil {
		return true
	}
	if rd.timer != nil {
		rd.timer.Stop()
	}
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { ch <- wait(wctx) }()
	rd.waiting, rd.stopWait = ch, cancel
	return false
}

// scroll scrolls the page to its end, where a feed's web client asks for
// its next page, and gives the read ScrollTimeout to get it.
func (rd *reading) scroll(ctx context.Context, t *chromedp.Target) error {
	rd.stopWait()
	rd.p.Scrolls++
	if rd.timer != nil {
		rd.timer.Reset(rd.b.o.ScrollTimeout)
	}
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "window.scrollTo(0, (document.scrollingElement || document.documentElement).scrollHeight)"})
	if err == nil && res.ExceptionDetails != nil {
		err = errors.New(res.ExceptionDetails.Text)
	}
	if err != nil {
		return fmt.Errorf("browser: scrolling the page: %w", err)
	}
	return nil
}

func (rd *reading) cookies() []*network.CookieParam {
	var cu *url.URL
	if rd.r.CookieURL != "" {
		cu, _ = url.Parse(rd.r.CookieURL)
	}
	var out []*network.CookieParam
	for _, c := range rd.r.Cookies {
		p := &network.CookieParam{Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly}
		if p.Path == "" {
			p.Path = "/"
		}
		if !c.Expires.IsZero() {
			p.Expires = cdp.TimeSinceEpoch(float64(c.Expires.Unix()))
		}
		if cu != nil {
			p.URL = cu.Scheme + "://" + cu.Host + "/"
			p.Secure = cu.Scheme == "https" && c.Secure
		} else {
			p.Domain = c.Domain
			p.URL = "https://" + strings.TrimPrefix(c.Domain, ".") + "/"
		}
		out = append(out, p)
	}
	return out
}
