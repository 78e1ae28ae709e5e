package webhooksender_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// hangingUpgrade is a receiver that answers 101 Switching Protocols, which
// hands the raw connection to the client, and then says nothing more. A
// real receiver has no reason to; one that does must not hold a send past
// its timeout. The answer is HTTP/1.1's (RFC 9110 15.2.2, with the
// Upgrade header RFC 9110 7.8 requires of a 101).
func hangingUpgrade(t *testing.T) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: earshot-test\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
		<-done
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestUpgradeAnswerEndsAtTimeout(t *testing.T) {
	srv := hangingUpgrade(t)
	const timeout = 200 * time.Millisecond
	got := make(chan ports.WebhookResult, 1)
	go func() { got <- local(timeout, nil).Send(context.Background(), message(srv.URL)) }()
	select {
	case r := <-got:
		if r.Delivered() {
			t.Fatalf("Send = %+v, want a failure", r)
		}
	case <-time.After(timeout + 5*time.Second):
		t.Fatal("Send still waits on a receiver that switched protocols, past its timeout")
	}
}

func TestChannelUpgradeAnswerEndsAtTimeout(t *testing.T) {
	srv := hangingUpgrade(t)
	s := channelSender(srv.URL)
	tg := core.ChannelTarget{Kind: core.ChannelNtfy, URL: srv.URL + "/" + ntfyTopic}
	got := make(chan ports.WebhookResult, 1)
	go func() { got <- send(s, tg, stored(t, tg)) }()
	select {
	case r := <-got:
		if r.Delivered() {
			t.Fatalf("SendChannel = %+v, want a failure", r)
		}
	case <-time.After(2*time.Second + 5*time.Second):
		t.Fatal("SendChannel still waits on a receiver that switched protocols, past its timeout")
	}
}
