package facebook

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
)

// An In that says the pass goes through the proxy but names none (an
// embedder's In built without Proxy) must not read facebook from the
// owner's own address: the spec's "Helpers must use the operator's proxy
// by default", as the x reader refuses it. No page is opened.
func TestNoProxyNamedIsNoDirectRead(t *testing.T) {
	r := &run{since: map[string]string{}}
	pages := &fakePages{answer: results(t)}
	rd := newReader(t, pages, r)
	rd.Groups = -1
	in := r.in([]core.Cookie{{Name: "c_user", Value: "1000", Domain: ".facebook.com"}, {Name: "xs", Value: "s3", Domain: ".facebook.com"}})
	in.ViaProxy = true
	if err := rd.Read(context.Background(), in, r.emit); err == nil {
		t.Fatal("the read succeeded")
	}
	if len(pages.opened) != 0 || len(r.posts) != 0 {
		t.Fatalf("%d pages opened around the proxy, %d posts read", len(pages.opened), len(r.posts))
	}
}
