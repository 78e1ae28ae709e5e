// Package webhooktest is a webhook receiver to run in tests: an HTTP server
// that checks every message the way a careful receiver would (signature,
// timestamp, headers, JSON), records what arrived, and answers as the test
// tells it to (a status, a delay, no answer at all).
//
// Both signing schemes are checked: the spec's X-Service-Signature always,
// the Standard Webhooks webhook-signature whenever a message carries any
// of its headers, and on every message after RequireStandard.
//
// A message that fails a check is answered 400 and reported with
// t.Errorf, so a sender that signs wrongly fails the test that uses it.
//
// The server listens on loopback, so a sender must be allowed private
// addresses to reach it (webhooksender.Config.AllowPrivate).
package webhooktest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// maxBody is the largest message read; a webhook message is a match
// record, far smaller.
const maxBody = 1 << 20

// Message is a message the receiver accepted.
type Message struct {
	Event      string    // X-Service-Event
	DeliveryID string    // X-Service-Delivery
	Timestamp  time.Time // X-Service-Timestamp
	Signature  string    // X-Service-Signature
	// StandardSignature is webhook-signature, checked; empty when the
	// message carried no Standard Webhooks headers.
	StandardSignature string
	Header            http.Header
	Body              []byte         // the raw body, as signed
	JSON              map[string]any // the body decoded: id, type, createdAt, data
	ReceivedAt        time.Time
}

// Receiver is a webhook receiver on an httptest server. Its methods are
// safe for concurrent use.
type Receiver struct {
	t      testing.TB
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	msgs     []Message
	refused  int
	standard bool // refuse messages without the Standard Webhooks headers
	status   int
	delay    time.Duration
	hang     chan struct{} // non-nil while hanging; closed to release
	changed  chan struct{} // closed and replaced whenever a message arrives
	closed   chan struct{}
}

// NewReceiver starts a plain-http receiver that checks messages against
// secret. It is closed when the test ends.
func NewReceiver(t testing.TB, secret string) *Receiver {
	t.Helper()
	return newReceiver(t, secret, httptest.NewServer)
}

// NewTLSReceiver is NewReceiver over https with a certificate of its own;
// a sender trusts it through TLSConfig or Certificate.
func NewTLSReceiver(t testing.TB, secret string) *Receiver {
	t.Helper()
	return newReceiver(t, secret, httptest.NewTLSServer)
}

// newReceiver starts a receiver on the server that serve starts.
func newReceiver(t testing.TB, secret string, serve func(http.Handler) *httptest.Server) *Receiver {
	r := &Receiver{
		t:       t,
		secret:  secret,
		status:  http.StatusOK,
		changed: make(chan struct{}),
		closed:  make(chan struct{}),
	}
	r.srv = serve(http.HandlerFunc(r.serve))
	t.Cleanup(r.close)
	return r
}

func (r *Receiver) close() {
	r.mu.Lock()
	select {
	case <-r.closed:
	default:
		close(r.closed) // frees handlers that hang or wait, so Close can return
	}
	r.mu.Unlock()
	r.srv.Close()
}

// URL is the receiver's address.
func (r *Receiver) URL() string { return r.srv.URL }

// Certificate is the server's certificate, nil for a plain-http receiver.
func (r *Receiver) Certificate() *x509.Certificate { return r.srv.Certificate() }

// TLSConfig returns a client configuration that trusts the receiver, nil
// for a plain-http receiver.
func (r *Receiver) TLSConfig() *tls.Config {
	c := r.srv.Certificate()
	if c == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return &tls.Config{RootCAs: pool}
}

// SetStatus sets the status later messages are answered with; 200 at
// first. Messages are recorded whatever the status.
func (r *Receiver) SetStatus(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = code
}

// RequireStandard makes the receiver refuse later messages that lack the
// Standard Webhooks headers; those that carry them are checked whatever.
func (r *Receiver) RequireStandard() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.standard = true
}

// SetDelay makes the receiver wait d before answering.
func (r *Receiver) SetDelay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// Hang makes the receiver record later messages and never answer them:
// each request waits until the sender gives up, Release is called or the
// test ends.
func (r *Receiver) Hang() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hang == nil {
		r.hang = make(chan struct{})
	}
}

// Release ends Hang: waiting requests are answered, and so are later ones.
func (r *Receiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hang != nil {
		close(r.hang)
		r.hang = nil
	}
}

// Messages returns the messages accepted so far, in arrival order.
func (r *Receiver) Messages() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.msgs...)
}

// Refused returns how many requests failed a check.
func (r *Receiver) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// WaitFor waits until at least n messages were accepted and returns them.
// After timeout it reports the shortfall with t.Errorf and returns what
// arrived.
func (r *Receiver) WaitFor(n int, timeout time.Duration) []Message {
	r.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if len(r.msgs) >= n {
			out := append([]Message(nil), r.msgs...)
			r.mu.Unlock()
			return out
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			got := r.Messages()
			r.t.Errorf("webhooktest: %d message(s) after %v, want %d", len(got), timeout, n)
			return got
		}
	}
}

// ServeHTTP checks and records a message as the receiver's own server
// does, so a server of the caller's (one whose address has to exist
// before the webhook, and so the secret, does) can hand requests to it.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.serve(w, req) }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	m, problem := r.check(req)
	if problem != "" {
		r.mu.Lock()
		r.refused++
		r.mu.Unlock()
		r.t.Errorf("webhooktest: message refused: %s", problem)
		http.Error(w, problem, http.StatusBadRequest)
		return
	}

	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	close(r.changed)
	r.changed = make(chan struct{})
	status, delay, hang := r.status, r.delay, r.hang
	r.mu.Unlock()

	if hang != nil {
		select {
		case <-hang:
		case <-req.Context().Done():
			return
		case <-r.closed:
			return
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-req.Context().Done():
			return
		case <-r.closed:
			return
		}
	}
	w.WriteHeader(status)
}

// check reads and checks one request; problem is empty when it is a good
// message.
func (r *Receiver) check(req *http.Request) (m Message, problem string) {
	// Read the whole body first: it is what is signed, and the server
	// notices a sender that hung up only once the body is consumed.
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil {
		return m, "reading the body: " + err.Error()
	}
	if len(body) > maxBody {
		return m, "body over 1 MB"
	}
	if req.Method != http.MethodPost {
		return m, "method " + req.Method + ", want POST"
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return m, "Content-Type " + strconv.Quote(req.Header.Get("Content-Type")) + ", want application/json"
	}
	sig, ts := req.Header.Get(core.HeaderSignature), req.Header.Get(core.HeaderTimestamp)
	if err := core.Verify(r.secret, sig, ts, body, time.Now()); err != nil {
		return m, err.Error()
	}
	sec, _ := strconv.ParseInt(ts, 10, 64) // Verify checked it
	std, problem := r.checkStandard(req, body)
	if problem != "" {
		return m, problem
	}

	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return m, "body is not a JSON object: " + err.Error()
	}
	m = Message{
		Event:             req.Header.Get(core.HeaderEvent),
		DeliveryID:        req.Header.Get(core.HeaderDelivery),
		Timestamp:         time.Unix(sec, 0),
		Signature:         sig,
		StandardSignature: std,
		Header:            req.Header.Clone(),
		Body:              body,
		JSON:              doc,
		ReceivedAt:        time.Now(),
	}
	if id, _ := doc["id"].(string); id == "" || id != m.DeliveryID {
		return m, core.HeaderDelivery + " " + strconv.Quote(m.DeliveryID) + " is not the body's id " + strconv.Quote(id)
	}
	if typ, _ := doc["type"].(string); typ == "" || typ != m.Event {
		return m, core.HeaderEvent + " " + strconv.Quote(m.Event) + " is not the body's type " + strconv.Quote(typ)
	}
	return m, ""
}

// checkStandard checks the Standard Webhooks headers of a request whose
// spec signature passed: signed with the same secret, naming the same
// delivery and the same instant. std is the webhook-signature value,
// empty when the request carried none of the headers and none was
// required.
func (r *Receiver) checkStandard(req *http.Request, body []byte) (std, problem string) {
	id := req.Header.Get(core.HeaderStandardID)
	ts := req.Header.Get(core.HeaderStandardTimestamp)
	std = req.Header.Get(core.HeaderStandardSignature)
	r.mu.Lock()
	required := r.standard
	r.mu.Unlock()
	if id == "" && ts == "" && std == "" && !required {
		return "", ""
	}
	if err := core.VerifyStandard(r.secret, id, std, ts, body, time.Now()); err != nil {
		return "", "Standard Webhooks: " + err.Error()
	}
	if d := req.Header.Get(core.HeaderDelivery); id != d {
		return "", core.HeaderStandardID + " " + strconv.Quote(id) + " is not " + core.HeaderDelivery + " " + strconv.Quote(d)
	}
	if x := req.Header.Get(core.HeaderTimestamp); ts != x {
		return "", core.HeaderStandardTimestamp + " " + strconv.Quote(ts) + " is not " + core.HeaderTimestamp + " " + strconv.Quote(x)
	}
	return std, ""
}
