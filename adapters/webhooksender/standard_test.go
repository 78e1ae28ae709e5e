package webhooksender_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// captured is one request a fake receiver got.
type captured struct {
	header http.Header
	body   []byte
}

// capture starts a receiver that records each request and answers 204.
func capture(t *testing.T) (*httptest.Server, <-chan captured) {
	t.Helper()
	got := make(chan captured, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// specSignature is the spec's recipe written out here, not core.Sign:
// "v1=" and the hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with
// the secret string as returned.
func specSignature(secret, timestamp string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(timestamp + "."))
	h.Write(body)
	return "v1=" + hex.EncodeToString(h.Sum(nil))
}

// One message, first try and retry alike, verifies with the Standard
// Webhooks Go library given the secret exactly as returned, and by the
// spec's recipe; the two schemes name the same delivery and instant.
func TestStandardAndSpecSignaturesOnOneMessage(t *testing.T) {
	secret, err := core.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	srv, got := capture(t)
	s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 2 * time.Second})
	m := message(srv.URL)
	m.Secret = secret
	lib, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the library refuses a new secret: %v", err)
	}
	for _, event := range []string{core.EventMatchCreated, core.EventPing} {
		m.Event = event
		for try := 1; try <= 2; try++ {
			if r := s.Send(context.Background(), m); !r.Delivered() {
				t.Fatalf("Send = %+v", r)
			}
			c := <-got
			if err := lib.Verify(c.body, c.header); err != nil {
				t.Errorf("%s try %d: the Standard Webhooks library refuses the message: %v", event, try, err)
			}
			ts := c.header.Get(core.HeaderTimestamp)
			if sig := c.header.Get(core.HeaderSignature); sig != specSignature(secret, ts, c.body) {
				t.Errorf("%s try %d: X-Service-Signature %q does not follow the spec's recipe", event, try, sig)
			}
			if id := c.header.Get("webhook-id"); id != m.DeliveryID || id != c.header.Get(core.HeaderDelivery) {
				t.Errorf("%s try %d: webhook-id %q, X-Service-Delivery %q, want %q", event, try, id, c.header.Get(core.HeaderDelivery), m.DeliveryID)
			}
			if wts := c.header.Get("webhook-timestamp"); wts != ts || ts == "" {
				t.Errorf("%s try %d: webhook-timestamp %q, X-Service-Timestamp %q: not the same instant", event, try, wts, ts)
			}
			if err := core.VerifyStandard(secret, c.header.Get("webhook-id"), c.header.Get("webhook-signature"), c.header.Get("webhook-timestamp"), c.body, time.Now()); err != nil {
				t.Errorf("%s try %d: core.VerifyStandard: %v", event, try, err)
			}
		}
	}
}

// A secret made before the standard form (unpadded base64url, which the
// library's decoder refuses) keeps its spec signature, unchanged, and
// its webhook-signature is keyed with the secret's own bytes: the
// library's raw-key constructor verifies it.
func TestOldSecretStillVerifies(t *testing.T) {
	const old = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM" // as NewWebhookSecret made them
	srv, got := capture(t)
	now := time.Unix(1700000000, 0)
	m := message(srv.URL)
	m.Secret = old
	if r := local(2*time.Second, func() time.Time { return now }).Send(context.Background(), m); !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	c := <-got
	if sig := c.header.Get(core.HeaderSignature); sig != specSignature(old, "1700000000", c.body) {
		t.Fatalf("X-Service-Signature %q does not follow the spec's recipe with the old secret", sig)
	}
	if _, err := standardwebhooks.NewWebhook(old); err == nil {
		t.Fatal("the library decodes an old secret: the premise of this test is wrong")
	}
	raw, _ := standardwebhooks.NewWebhookRaw([]byte(old))
	if err := raw.VerifyIgnoringTimestamp(c.body, c.header); err != nil {
		t.Fatalf("the library with the old secret's bytes as the key: %v", err)
	}
}

// The wait a 429 or 503 asks for reaches the caller, read and bounded
// by core.ParseRetryAfter; other answers, and values that are not a
// wait, report none.
func TestReportsRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		name   string
		status int
		value  string
		want   time.Duration
	}{
		{"429 seconds", 429, "120", 2 * time.Minute},
		{"503 http date", 503, now.Add(10 * time.Minute).Format(http.TimeFormat), 10 * time.Minute},
		{"503 huge", 503, "9999999999999999999999", core.MaxRetryAfter},
		{"429 malformed", 429, "in a while", 0},
		{"429 none", 429, "", 0},
		{"500 ignored", 500, "120", 0},
		{"410 ignored", 410, "120", 0},
		{"204 ignored", 204, "120", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.value != "" {
					w.Header().Set("Retry-After", c.value)
				}
				w.WriteHeader(c.status)
			}))
			defer srv.Close()
			r := local(2*time.Second, func() time.Time { return now }).Send(context.Background(), message(srv.URL))
			if r.Status != c.status || r.RetryAfter != c.want {
				t.Fatalf("Send = %+v, want status %d and RetryAfter %v", r, c.status, c.want)
			}
		})
	}
}

// The Standard Webhooks headers are there when the library looks them up
// by its own names, and their values are plain.
func TestStandardHeaderValues(t *testing.T) {
	srv, got := capture(t)
	now := time.Unix(1700000000, 0)
	if r := local(2*time.Second, func() time.Time { return now }).Send(context.Background(), message(srv.URL)); !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	c := <-got
	want := map[string]string{
		standardwebhooks.HeaderWebhookID:        "dlv_1",
		standardwebhooks.HeaderWebhookTimestamp: strconv.FormatInt(now.Unix(), 10),
		standardwebhooks.HeaderWebhookSignature: core.SignStandard(secret, "dlv_1", now.Unix(), c.body),
	}
	for k, v := range want {
		if g := c.header.Get(k); g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
}

// reportTB catches what the receiver kit reports, so a test can expect a
// refusal.
type reportTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *reportTB) Helper() {}

func (r *reportTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// The receiver kit, which the app and end-to-end tests deliver to,
// checks the Standard Webhooks signature rather than its presence only:
// a message whose spec signature is right and whose webhook-signature is
// not is refused.
func TestReceiverKitChecksStandardSignature(t *testing.T) {
	rt := &reportTB{TB: t}
	rcv := webhooktest.NewReceiver(rt, secret)
	m := message(rcv.URL())
	ts := time.Now().Unix()
	for _, forged := range []string{
		core.SignStandard("whsec_other", m.DeliveryID, ts, m.Body), // another key
		core.SignStandard(secret, "dlv_2", ts, m.Body),             // another message id
	} {
		req, _ := http.NewRequest(http.MethodPost, rcv.URL(), bytes.NewReader(m.Body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(core.HeaderEvent, m.Event)
		req.Header.Set(core.HeaderDelivery, m.DeliveryID)
		req.Header.Set(core.HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(core.HeaderSignature, core.Sign(secret, ts, m.Body))
		req.Header.Set(core.HeaderStandardID, m.DeliveryID)
		req.Header.Set(core.HeaderStandardTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(core.HeaderStandardSignature, forged)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("a forged webhook-signature was answered %d", resp.StatusCode)
		}
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.errs) != 2 || !strings.Contains(rt.errs[0], "signature does not match") || len(rcv.Messages()) != 0 {
		t.Fatalf("reported %q, recorded %d", rt.errs, len(rcv.Messages()))
	}
	// The real sender's messages pass, the headers required.
	rcv.RequireStandard()
	if r := local(2*time.Second, nil).Send(context.Background(), m); !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	if got := rcv.Messages(); len(got) != 1 || got[0].StandardSignature == "" {
		t.Fatalf("received %+v", got)
	}
}
