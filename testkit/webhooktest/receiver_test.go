package webhooktest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

const secret = "whsec_receiver_test"

// fakeTB catches the receiver's reports so a test can expect them.
type fakeTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

type sent struct {
	url, secret, id, event string
	at                     time.Time
	body                   []byte
	client                 *http.Client
	ctx                    context.Context
}

// send posts a message signed as the service signs it.
func send(t *testing.T, s sent) (int, error) {
	t.Helper()
	if s.body == nil {
		s.body = []byte(`{"id":"` + s.id + `","type":"` + s.event + `","createdAt":"2025-01-02T03:04:05Z","data":{"score":91}}`)
	}
	if s.at.IsZero() {
		s.at = time.Now()
	}
	if s.client == nil {
		s.client = http.DefaultClient
	}
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.url, bytes.NewReader(s.body))
	if err != nil {
		t.Fatal(err)
	}
	ts := s.at.Unix()
	req.Header.Set(core.HeaderEvent, s.event)
	req.Header.Set(core.HeaderDelivery, s.id)
	req.Header.Set(core.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(core.HeaderSignature, core.Sign(s.secret, ts, s.body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestRecordsGoodMessage(t *testing.T) {
	r := webhooktest.NewReceiver(t, secret)
	code, err := send(t, sent{url: r.URL(), secret: secret, id: "dlv_1", event: core.EventMatchCreated})
	if err != nil || code != http.StatusOK {
		t.Fatalf("answer %d, %v", code, err)
	}
	msgs := r.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if m.Event != core.EventMatchCreated || m.DeliveryID != "dlv_1" || m.JSON["type"] != "match.created" ||
		m.JSON["data"].(map[string]any)["score"] != float64(91) || time.Since(m.Timestamp) > time.Minute ||
		!strings.HasPrefix(m.Signature, "v1=") || m.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("message %+v", m)
	}
	if r.Refused() != 0 {
		t.Fatal("refused a good message")
	}
}

func TestRefusesWrongSecret(t *testing.T) {
	ft := &fakeTB{TB: t}
	r := webhooktest.NewReceiver(ft, secret)
	code, err := send(t, sent{url: r.URL(), secret: "whsec_wrong", id: "dlv_1", event: core.EventPing})
	if err != nil || code != http.StatusBadRequest {
		t.Fatalf("answer %d, %v; want 400", code, err)
	}
	errs := ft.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "signature does not match") {
		t.Fatalf("reported %q", errs)
	}
	if len(r.Messages()) != 0 || r.Refused() != 1 {
		t.Fatal("a forged message was recorded")
	}
}

func TestRefusesBadMessages(t *testing.T) {
	cases := []struct {
		name string
		s    sent
		want string
	}{
		{"stale", sent{id: "d", event: "ping", at: time.Now().Add(-10 * time.Minute)}, "more than 300 seconds"},
		{"from the future", sent{id: "d", event: "ping", at: time.Now().Add(10 * time.Minute)}, "more than 300 seconds"},
		{"not JSON", sent{id: "d", event: "ping", body: []byte("hello")}, "not a JSON object"},
		{"id differs", sent{id: "d", event: "ping", body: []byte(`{"id":"other","type":"ping"}`)}, "is not the body's id"},
		{"type differs", sent{id: "d", event: "match.created", body: []byte(`{"id":"d","type":"ping"}`)}, "is not the body's type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			r := webhooktest.NewReceiver(ft, secret)
			c.s.url, c.s.secret = r.URL(), secret
			code, err := send(t, c.s)
			if err != nil || code != http.StatusBadRequest {
				t.Fatalf("answer %d, %v; want 400", code, err)
			}
			if errs := ft.errors(); len(errs) != 1 || !strings.Contains(errs[0], c.want) {
				t.Fatalf("reported %q, want %q", errs, c.want)
			}
		})
	}

	t.Run("GET", func(t *testing.T) {
		ft := &fakeTB{TB: t}
		r := webhooktest.NewReceiver(ft, secret)
		resp, err := http.Get(r.URL())
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("answer %v, %v", resp, err)
		}
		resp.Body.Close()
		if errs := ft.errors(); len(errs) != 1 || !strings.Contains(errs[0], "want POST") {
			t.Fatalf("reported %q", errs)
		}
	})
}

func TestSetStatusAndDelay(t *testing.T) {
	r := webhooktest.NewReceiver(t, secret)
	r.SetStatus(http.StatusInternalServerError)
	if code, _ := send(t, sent{url: r.URL(), secret: secret, id: "a", event: "ping"}); code != 500 {
		t.Fatalf("answer %d, want 500", code)
	}
	r.SetStatus(http.StatusNoContent)
	r.SetDelay(150 * time.Millisecond)
	start := time.Now()
	if code, _ := send(t, sent{url: r.URL(), secret: secret, id: "b", event: "ping"}); code != 204 {
		t.Fatalf("answer %d, want 204", code)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("answered after %v, want at least the delay", d)
	}
	if got := r.Messages(); len(got) != 2 || got[0].DeliveryID != "a" || got[1].DeliveryID != "b" {
		t.Fatalf("messages %+v", got)
	}
}

func TestHangAndRelease(t *testing.T) {
	r := webhooktest.NewReceiver(t, secret)
	r.Hang()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := send(t, sent{url: r.URL(), secret: secret, id: "a", event: "ping", ctx: ctx})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send to a hanging receiver: %v, want a deadline error", err)
	}
	if len(r.Messages()) != 1 {
		t.Fatal("a hung message was not recorded")
	}

	done := make(chan int, 1)
	go func() {
		code, _ := send(t, sent{url: r.URL(), secret: secret, id: "b", event: "ping"})
		done <- code
	}()
	r.WaitFor(2, 2*time.Second)
	r.Release()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Fatalf("answer %d after Release", code)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Release did not answer the waiting request")
	}
}

// A receiver left hanging must not keep the test from ending.
func TestHangingRequestEndsWithTheTest(t *testing.T) {
	var r *webhooktest.Receiver
	done := make(chan error, 1)
	t.Run("inner", func(it *testing.T) {
		r = webhooktest.NewReceiver(it, secret)
		r.Hang()
		go func() {
			_, err := send(t, sent{url: r.URL(), secret: secret, id: "a", event: "ping"})
			done <- err
		}()
		r.WaitFor(1, 2*time.Second)
	})
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the hanging request outlived its test")
	}
}

func TestWaitFor(t *testing.T) {
	r := webhooktest.NewReceiver(t, secret)
	// Sent one after another as WaitFor begins: each is a round trip,
	// so the later ones at least arrive while it waits.
	go func() {
		for i := range 3 {
			_, _ = send(t, sent{url: r.URL(), secret: secret, id: strconv.Itoa(i), event: "ping"})
		}
	}()
	if got := r.WaitFor(3, 2*time.Second); len(got) != 3 {
		t.Fatalf("%d messages", len(got))
	}

	ft := &fakeTB{TB: t}
	empty := webhooktest.NewReceiver(ft, secret)
	start := time.Now()
	if got := empty.WaitFor(1, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("%d messages", len(got))
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("WaitFor returned before its timeout")
	}
	if errs := ft.errors(); len(errs) != 1 || !strings.Contains(errs[0], "0 message(s)") {
		t.Fatalf("reported %q", errs)
	}
}

func TestTLSReceiver(t *testing.T) {
	r := webhooktest.NewTLSReceiver(t, secret)
	if !strings.HasPrefix(r.URL(), "https://") || r.Certificate() == nil {
		t.Fatalf("URL %s", r.URL())
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.TLSConfig()}}
	if code, err := send(t, sent{url: r.URL(), secret: secret, id: "a", event: "ping", client: client}); err != nil || code != 200 {
		t.Fatalf("answer %d, %v", code, err)
	}
	if webhooktest.NewReceiver(t, secret).TLSConfig() != nil {
		t.Fatal("plain receiver has a TLS config")
	}
}

// A relay answers 503 until it is connected, then hands each message to
// the receiver.
func TestRelay(t *testing.T) {
	r := webhooktest.NewRelay(t)
	msg := sent{url: r.URL() + "/hooks/earshot", secret: secret, id: "d1", event: core.EventMatchCreated}
	if code, err := send(t, msg); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("before Connect: %d %v", code, err)
	}
	rcv := webhooktest.NewReceiver(t, secret)
	r.Connect(rcv)
	if code, err := send(t, msg); err != nil || code != http.StatusOK {
		t.Fatalf("after Connect: %d %v", code, err)
	}
	if m := rcv.WaitFor(1, 5*time.Second); m[0].DeliveryID != "d1" || m[0].Header.Get("X-Forwarded-For") == "" {
		t.Fatalf("relayed message %+v", m[0])
	}
}
