package main

import (
	"testing"

	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/facebook"
	"github.com/earshothq/earshot/helper/x"
)

// With x and facebook both read, the helper runs one Chromium: both
// readers read with the one browser the helper owns and closes.
func TestHelperReadersShareOneBrowser(t *testing.T) {
	s := helperSettings{browserPath: "/usr/bin/chromium"}
	bs := &browser.Shared{}
	var xr *x.Reader
	var fb *facebook.Browser
	for _, rd := range helperReaders(s, bs, nil) {
		switch rd := rd.(type) {
		case *x.Reader:
			xr = rd
		case *facebook.Reader:
			fb, _ = rd.Pages.(*facebook.Browser)
		}
	}
	if xr == nil || fb == nil {
		t.Fatalf("x reader %v, facebook pages %v: both platforms are read by default", xr, fb)
	}
	if xr.Browsers != bs || fb.Shared != bs {
		t.Errorf("x reads with %p, facebook with %p, not the helper's one browser %p", xr.Browsers, fb.Shared, bs)
	}
	if bs.Starts() != 0 {
		t.Errorf("%d browsers started before any read", bs.Starts())
	}
}
