package redditjson

import "testing"

// A permalink with a control character or a broken escape makes an
// address the server's ingest refuses (core.IngestPost's url check, by
// url.Parse): the post would be skipped after the helper's checkpoint
// moved past it. Such a permalink is refused here, and the caller
// builds the address from ids.
func TestSiteLinkRefusesUnparsable(t *testing.T) {
	for _, p := range []string{"/r/go/comments/abc/\x01", "/r/go/comments/abc/\x7f", "/r/go/comments/abc/x/%zz", "/r/go/%"} {
		if got, ok := SiteLink(p); ok {
			t.Errorf("SiteLink(%q) = %q, a link url.Parse refuses", p, got)
		}
	}
	if got, ok := SiteLink("/r/go/comments/abc/caf%C3%A9/"); !ok || got != PublicSite+"/r/go/comments/abc/caf%C3%A9/" {
		t.Errorf("an escaped permalink: %q, %v", got, ok)
	}
}
