package browser

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A person's visit goes on when a page's document breaks off (a proxy
// that drops a connection mid-page): the person reloads or moves on. The
// visit used to end at once with "the page did not load", closing the
// window under the person and saving nothing.
func TestVisitOutlivesABrokenOffDocument(t *testing.T) {
	b := start(t, Options{Timeout: 20 * time.Second})
	pinged := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			// The connection drops before the page's promised length.
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "100000")
			io.WriteString(w, `<!doctype html><script>setTimeout(() => location.href = "/home", 200)</script>`)
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "/home":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "fresh", Path: "/"})
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><p>feed</p><script>fetch("/ping")</script>`)
		case "/ping":
			select {
			case <-pinged:
			default:
				close(pinged)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	done := make(chan struct{})
	type result struct {
		n   int
		err error
	}
	res := make(chan result, 1)
	go func() {
		cs, err := b.Visit(context.Background(), Request{URL: srv.URL + "/login"}, done)
		res <- result{len(cs), err}
	}()
	select {
	case r := <-res:
		t.Fatalf("the visit ended before the person closed it: %d cookies, %v", r.n, r.err)
	case <-pinged:
	}
	close(done)
	r := <-res
	if r.err != nil || r.n == 0 {
		t.Fatalf("the visit: %d cookies, %v", r.n, r.err)
	}
}
