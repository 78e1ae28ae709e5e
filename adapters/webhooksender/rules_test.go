package webhooksender_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/webhooksender"
)

// Every redirect status is a failed try and none is followed, whatever
// the method rules of the status (301 and 302 turn a POST into a GET in
// clients that follow them, 307 and 308 resend the body).
func TestNoRedirectStatusFollowed(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var followed atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", code)
		})
		mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Add(1) })
		srv := httptest.NewServer(mux)
		r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL+"/hook"))
		srv.Close()
		if r.Delivered() || r.Error != webhooksender.ReasonRedirect || r.Status != code || followed.Load() != 0 {
			t.Fatalf("%d: Send = %+v, followed %d times", code, r, followed.Load())
		}
	}
}

// A receiver that accepts the connection and never reads the request nor
// answers holds the send no longer than the timeout, with a body larger
// than the socket buffers so that our write itself is what blocks.
func TestReceiverThatNeverReadsTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // held open, never read
		}
	}()
	m := message("http://" + ln.Addr().String() + "/hook")
	m.Body = bytes.Repeat([]byte("x"), 8<<20)
	const timeout = 300 * time.Millisecond
	r := local(timeout, nil).Send(context.Background(), m)
	if r.Delivered() || r.Error != webhooksender.ReasonTimeout || r.Status != 0 {
		t.Fatalf("Send = %+v, want timeout", r)
	}
	if r.Duration < timeout || r.Duration > timeout+time.Second {
		t.Fatalf("took %v with a %v timeout", r.Duration, timeout)
	}
}

// What a receiver writes in its answer is never part of the result: the
// log's reason is the status alone.
func TestAnswerBodyNotKept(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<script>secret-token-123</script>"))
	}))
	defer srv.Close()
	r := local(2*time.Second, nil).Send(context.Background(), message(srv.URL))
	if r.Error != "http 500" || r.Status != 500 || strings.Contains(r.Error, "secret") {
		t.Fatalf("Send = %+v", r)
	}
}
