package webhooktest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// Relay is a webhook address that forwards to a Receiver made later: a
// receiver checks signatures with the webhook's secret, which exists only
// once the webhook, which needs the address, is created. Until Connect it
// answers 503.
type Relay struct {
	srv   *httptest.Server
	proxy atomic.Pointer[httputil.ReverseProxy]
}

// NewRelay starts a relay on loopback; it closes when the test ends.
func NewRelay(t testing.TB) *Relay {
	r := &Relay{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := r.proxy.Load()
		if p == nil {
			http.Error(w, "no receiver yet", http.StatusServiceUnavailable)
			return
		}
		p.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the relay's address.
func (r *Relay) URL() string { return r.srv.URL }

// Connect forwards every later request to rcv.
func (r *Relay) Connect(rcv *Receiver) {
	u, _ := url.Parse(rcv.URL())
	r.proxy.Store(httputil.NewSingleHostReverseProxy(u))
}
