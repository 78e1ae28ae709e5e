package x_test

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// An In that says the pass goes through the proxy but names none (an
// embedder's In built without Proxy) must not read x from the owner's
// own address: the spec's "Helpers must use the operator's proxy by
// default". The read fails before the browser asks x anything.
func TestNoProxyNamedIsNoDirectRead(t *testing.T) {
	h := newHarness(t)
	in := helper.In{
		Phrases:  []helper.Phrase{{Phrase: "acme"}},
		Session:  jar,
		ViaProxy: true,
		Since:    func(string) string { return "" },
		Report:   func(context.Context, helper.Signal, time.Duration) error { return nil },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var posts []helper.Post
	err := h.r.Read(ctx, in, func(p helper.Post, _ helper.Mark) error { posts = append(posts, p); return nil })
	if err == nil || len(posts) != 0 {
		t.Fatalf("read %d posts, err %v; want a failure", len(posts), err)
	}
	if n := h.fake.unmarked.Load() + h.fake.served.Load(); n != 0 {
		t.Fatalf("x was asked %d times around the proxy", n)
	}
}
