package browser

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Readers taking turns in a Shared get one browser while the proxy stays
// the same, and a new one, the old one stopped, when it changes.
func TestSharedStartsOneBrowser(t *testing.T) {
	start(t, Options{}).Close() // skips without Chromium
	s := &Shared{Options: Options{NoSandbox: os.Geteuid() == 0}}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	px, _ := url.Parse("http://127.0.0.1:9")
	b1, err := s.Browser(ctx, px)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := s.Browser(ctx, px)
	if err != nil {
		t.Fatal(err)
	}
	if b1 != b2 || s.Starts() != 1 {
		t.Fatalf("two reads through one proxy started %d browsers", s.Starts())
	}
	b3, err := s.Browser(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b3 == b1 || s.Starts() != 2 {
		t.Fatalf("a new proxy kept the old browser (%d started)", s.Starts())
	}
	if b1.cancel != nil {
		t.Errorf("the browser of the old proxy still runs beside the new one")
	}
	if err := s.Close(); err != nil || b3.cancel != nil {
		t.Errorf("Close left the browser running (%v)", err)
	}
}

// A browser that died (Chromium crashed or was killed) is started again
// at the next call: a helper runs for weeks, and a dead browser kept would
// fail every x and facebook read until the helper is restarted.
func TestSharedRestartsADeadBrowser(t *testing.T) {
	start(t, Options{}).Close() // skips without Chromium
	s := &Shared{Options: Options{NoSandbox: os.Geteuid() == 0, Timeout: 20 * time.Second}}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	b1, err := s.Browser(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.FromContext(b1.ctx).Browser.Process().Kill(); err != nil {
		t.Fatal(err)
	}
	<-b1.ctx.Done()
	b2, err := s.Browser(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := site(t)
	p, err := b2.Read(ctx, Request{URL: srv.URL + "/page?what=small", Match: func(u string) bool { return strings.Contains(u, "/api/") }})
	if err != nil {
		t.Fatalf("a read after the browser died: %v", err)
	}
	if len(p.Answers) != 1 || s.Starts() != 2 {
		t.Fatalf("%d answers, %d browsers started", len(p.Answers), s.Starts())
	}
}
