package browser

import (
	"context"
	"net/url"
	"os"
	"testing"
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
