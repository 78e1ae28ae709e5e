// Package webhooksender delivers webhook messages over HTTP without letting
// an owner's address reach the service's own network.
//
// Two checks stand between a message and a private address. The address
// rules of core.CheckWebhookURL run again at every send, so a webhook saved
// under older rules cannot slip through. Then every address a name
// resolves to is checked at connect time by a net.Dialer Control hook
// (code.dny.dev/ssrf): loopback, private, link-local (cloud metadata at
// 169.254.169.254 included), shared CGNAT space, multicast, unique-local
// IPv6, documentation and reserved ranges are refused whatever name led
// there. Because the hook sees the address the socket is about to connect
// to, a DNS answer that changes between the save and the send, or between
// two lookups (DNS rebinding), changes nothing.
//
// No proxy is ever used, even when the environment names one: a proxy
// would connect on our behalf and hide the real address from the hook.
package webhooksender

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"code.dny.dev/ssrf"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

var _ ports.WebhookSender = (*Sender)(nil)

// DefaultTimeout is the spec's answer wait.
const DefaultTimeout = 5 * time.Second

// UserAgent is sent with every message so receivers can tell our requests
// apart in their logs.
const UserAgent = "earshot-webhooks/1"

// maxAnswer is how much of an answer body is read before the connection
// is dropped. The body is ignored; reading a little lets a small answer
// finish cleanly, and the cap keeps an endless answer from holding a worker.
const maxAnswer = 4 << 10

// maxAnswerHeader caps the answer's header block for the same reason.
const maxAnswerHeader = 16 << 10

// Reasons a send fails, as shown in the delivery log.
const (
	ReasonTimeout    = "timeout"
	ReasonCanceled   = "canceled"
	ReasonDNS        = "dns"
	ReasonConnect    = "connect"
	ReasonTLS        = "tls"
	ReasonBlocked    = "blocked_destination"
	ReasonRedirect   = "redirect"
	ReasonNetwork    = "network"         // the connection broke after it was made
	ReasonBadMessage = "invalid_message" // an event or delivery id unfit for a header
)

// Config sets a Sender up. The zero value is the production set-up.
type Config struct {
	// Timeout bounds a whole send: DNS, connect, TLS, the request and
	// reading the answer. Zero means DefaultTimeout.
	Timeout time.Duration
	// AllowPrivate turns off the connect-time address check and relaxes
	// the address rules (http, IPs, loopback, any port). For local
	// development and tests only.
	AllowPrivate bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// Now gives the time the messages are signed with; nil means time.Now.
	Now func() time.Time
	// TLSConfig is used for https; nil means the system's roots. Tests set
	// it to trust a test server's certificate.
	TLSConfig *tls.Config
	// TelegramAPI is the Telegram Bot API's address, DefaultTelegramAPI
	// when empty: a self-hosted Bot API server, or a test's fake. It
	// passes the same address rules as every other destination.
	TelegramAPI string
}

// Sender is the HTTP implementation of ports.WebhookSender. It is safe for
// concurrent use and keeps connections alive between sends.
type Sender struct {
	timeout      time.Duration
	allowPrivate bool
	now          func() time.Time
	client       *http.Client
	telegramAPI  string
}

// New returns a Sender for cfg.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TelegramAPI == "" {
		cfg.TelegramAPI = DefaultTelegramAPI
	}
	dialer := &net.Dialer{Resolver: cfg.Resolver, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		// Only 443 over TCP: the address rules allow no other port, and
		// the hook repeats that where it cannot be got round.
		dialer.Control = ssrf.New(ssrf.WithPorts(443)).Safe
	}
	var tlsConfig *tls.Config
	if cfg.TLSConfig != nil {
		tlsConfig = cfg.TLSConfig.Clone()
	} else {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    cfg.Timeout,
		DisableCompression:     true, // never inflate an answer: a small gzip body can unpack to gigabytes
		MaxResponseHeaderBytes: maxAnswerHeader,
		MaxIdleConnsPerHost:    8, // the delivery worker sends up to 8 at once to a receiver that answers fast
		IdleConnTimeout:        90 * time.Second,
	}
	return &Sender{
		timeout:      cfg.Timeout,
		allowPrivate: cfg.AllowPrivate,
		now:          cfg.Now,
		telegramAPI:  cfg.TelegramAPI,
		client: &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

// Send delivers m once; see ports.WebhookSender. Every message carries
// both signatures, the spec's X-Service-Signature and the Standard
// Webhooks webhook-signature, over the same id, instant and body. The
// Retry-After of a 429 or 503 answer is reported, read and capped by
// core.ParseRetryAfter.
//
// The answer's status decides the result as soon as it arrives within the
// timeout. Up to 4 KB of the answer body are then read and discarded; a
// body that is longer, or still arriving when the time is up, is cut off
// without changing the result.
func (s *Sender) Send(ctx context.Context, m ports.WebhookMessage) ports.WebhookResult {
	start := time.Now()
	r := s.send(ctx, m)
	r.Duration = time.Since(start)
	return r
}

func (s *Sender) send(ctx context.Context, m ports.WebhookMessage) ports.WebhookResult {
	target, err := core.CheckWebhookURL(m.URL, s.allowPrivate)
	if err != nil {
		return ports.WebhookResult{Error: ReasonBlocked}
	}
	if !headerSafe(m.Event) || !headerSafe(m.DeliveryID) {
		return ports.WebhookResult{Error: ReasonBadMessage}
	}

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(m.Body))
	if err != nil {
		return ports.WebhookResult{Error: ReasonBlocked}
	}
	ts := s.now().Unix()
	stamp := strconv.FormatInt(ts, 10)
	req.Header.Set(core.HeaderEvent, m.Event)
	req.Header.Set(core.HeaderDelivery, m.DeliveryID)
	req.Header.Set(core.HeaderTimestamp, stamp)
	req.Header.Set(core.HeaderSignature, core.Sign(m.Secret, ts, m.Body))
	// The same message by the Standard Webhooks scheme: the same id and
	// instant, so either check tells the same story.
	req.Header.Set(core.HeaderStandardID, m.DeliveryID)
	req.Header.Set(core.HeaderStandardTimestamp, stamp)
	// During a rotation's overlap the secret it replaced signs too, after
	// the new one: a receiver still holding it verifies the message.
	secrets := []string{m.Secret}
	if m.PreviousSecret != "" {
		secrets = append(secrets, m.PreviousSecret)
	}
	req.Header.Set(core.HeaderStandardSignature, core.SignStandardEach(secrets, m.DeliveryID, ts, m.Body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)

	resp, err := s.client.Do(req)
	if err != nil {
		return ports.WebhookResult{Error: reason(ctx, err)}
	}
	readAnswer(ctx, resp)

	r := ports.WebhookResult{Status: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		r.Error = ReasonRedirect
	default:
		r.Error = fmt.Sprintf("http %d", resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		// The receiver's value, read and capped in core; the worker
		// decides whether it moves the next try.
		r.RetryAfter, _ = core.ParseRetryAfter(resp.Header.Get("Retry-After"), s.now())
	}
	return r
}

// readAnswer reads at most maxAnswer bytes of resp's body, and closes it.
// The read ends with ctx whatever the answer: a 101 (Switching Protocols)
// hands over the raw connection, which the request's context no longer
// watches, so a receiver that answers 101 and goes quiet would otherwise
// hold the send, and its worker slot, for ever.
func readAnswer(ctx context.Context, resp *http.Response) []byte {
	stop := context.AfterFunc(ctx, func() { _ = resp.Body.Close() })
	defer stop()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_ = resp.Body.Close()
	return answer
}

// headerSafe reports whether v can go in a header as is: printable ASCII.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// reason turns a failed exchange into the plain word the delivery log
// shows. The error text itself is not shown: it can name internal
// addresses.
func reason(ctx context.Context, err error) string {
	var (
		dnsErr   *net.DNSError
		opErr    *net.OpError
		netErr   net.Error
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		verErr   *tls.CertificateVerificationError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		certErr  x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedPort),
		errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrInvalidHostPort):
		return ReasonBlocked
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return ReasonTimeout
		}
		return ReasonDNS
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &verErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &certErr),
		strings.Contains(err.Error(), "tls: "):
		return ReasonTLS
	case errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return ReasonConnect
	}
	return ReasonNetwork
}
