package browser

import (
	"context"
	"net/url"
	"sync"
)

// Shared owns at most one Browser for readers that take turns, such as a
// helper's x and facebook readers: one Chromium at a time per helper, as
// a person's own machine runs one browser, and one browser's memory
// rather than one per platform. The browser is started at the first
// Browser call and restarted when the proxy changes, since a browser's
// proxy is set when it starts, or when it died; Close stops it.
type Shared struct {
	// Options start the browser; their Proxy is each call's.
	Options Options

	mu     sync.Mutex
	b      *Browser
	proxy  string // the proxy b was started with
	starts int
}

// Browser returns the running browser, started for proxy (nil: direct).
// A browser that died (a crash, a kill) is started again: the helper runs
// for weeks, and a dead one would fail every read until it stops.
func (s *Shared) Browser(ctx context.Context, proxy *url.URL) (*Browser, error) {
	px := ""
	if proxy != nil {
		px = proxy.String()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b != nil && s.proxy == px && s.b.ctx.Err() == nil {
		return s.b, nil
	}
	if err := s.closeLocked(); err != nil {
		return nil, err
	}
	o := s.Options
	o.Proxy = proxy
	b, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	s.b, s.proxy = b, px
	s.starts++
	return b, nil
}

// Starts is how many browsers s has started.
func (s *Shared) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// Close stops the browser, if one runs.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeLocked()
}

func (s *Shared) closeLocked() error {
	if s.b == nil {
		return nil
	}
	err := s.b.Close()
	s.b = nil
	return err
}
