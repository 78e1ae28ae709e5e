// Package mailtest is a real SMTP server for tests, on the loopback at a
// free port, that keeps what it receives and can misbehave on demand:
// refuse with a chosen code, hang up mid-conversation, or never answer.
// It is built on github.com/emersion/go-smtp, so a mailer under test talks
// the actual protocol (EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA).
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string   // MAIL FROM
	To   []string // RCPT TO
	User string   // the authenticated user, empty without AUTH
	TLS  bool     // whether the conversation was encrypted

	Raw     []byte      // the message as sent: header and body
	Header  mail.Header // parsed header of Raw
	Subject string      // decoded Subject header
	Body    string      // body with its transfer encoding undone
}

// Option configures a Server.
type Option func(*Server)

// WithStartTLS makes the server offer STARTTLS, with a self-signed
// certificate for 127.0.0.1; trust it through TLSConfig.
func WithStartTLS() Option { return func(s *Server) { s.tlsMode = startTLS } }

// WithImplicitTLS makes the server speak TLS from the first byte, as on
// port 465 (smtps://); trust it through TLSConfig.
func WithImplicitTLS() Option { return func(s *Server) { s.tlsMode = implicitTLS } }

// WithAuth makes the server offer AUTH PLAIN and refuse mail until a client
// logs in as user with pass. Plain-text AUTH is allowed without TLS, as a
// local relay does.
func WithAuth(user, pass string) Option {
	return func(s *Server) { s.user, s.pass = user, pass }
}

type tlsMode int

const (
	noTLS tlsMode = iota
	startTLS
	implicitTLS
)

// Server is an SMTP server for one test. It stops when the test ends.
type Server struct {
	t       testing.TB
	srv     *smtp.Server
	ln      net.Listener
	tlsMode tlsMode
	tlsConf *tls.Config // the server side
	roots   *x509.CertPool
	user    string
	pass    string
	served  chan struct{}

	mu       sync.Mutex
	messages []Message
	arrived  chan struct{} // receives after each accepted message
	reject   *smtp.SMTPError
	hangUp   bool
	stall    bool
	held     []net.Conn // connections accepted while stalled, never answered
}

// NewServer starts a server on 127.0.0.1 at a free port.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, arrived: make(chan struct{}, 1), served: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if s.tlsMode != noTLS {
		s.tlsConf, s.roots = selfSigned(t)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	s.ln = ln
	var l net.Listener = &stallingListener{Listener: ln, s: s}
	if s.tlsMode == implicitTLS {
		l = tls.NewListener(l, s.tlsConf)
	}

	s.srv = smtp.NewServer(smtp.BackendFunc(s.newSession))
	s.srv.Domain = "mailtest.localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.ReadTimeout = 30 * time.Second
	s.srv.WriteTimeout = 30 * time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.MaxRecipients = 10
	if s.tlsMode == startTLS {
		s.srv.TLSConfig = s.tlsConf
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(l)
	}()
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	_ = s.srv.Close()
	// Serve may not have registered the listener with srv yet, in which
	// case srv.Close could not close it.
	_ = s.ln.Close()
	<-s.served
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.held {
		_ = c.Close()
	}
	s.held = nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the address as a mailer expects it: smtp://host:port, smtps://
// with WithImplicitTLS, with the credentials of WithAuth.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.Addr()}
	if s.tlsMode == implicitTLS {
		u.Scheme = "smtps"
	}
	if s.user != "" {
		u.User = url.UserPassword(s.user, s.pass)
	}
	return u.String()
}

// TLSConfig is a client configuration that trusts the server's
// certificate; nil without TLS.
func (s *Server) TLSConfig() *tls.Config {
	if s.roots == nil {
		return nil
	}
	return &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// WaitFor waits until at least n messages were accepted and returns them;
// after timeout it fails the test.
func (s *Server) WaitFor(n int, timeout time.Duration) []Message {
	s.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if msgs := s.Messages(); len(msgs) >= n {
			return msgs
		}
		select {
		case <-s.arrived:
		case <-deadline.C:
			s.t.Fatalf("mailtest: %d messages after %v, want %d", len(s.Messages()), timeout, n)
			return nil
		}
	}
}

// RejectWith makes the server answer MAIL FROM with code and msg from now
// on: 4xx for a temporary failure, 5xx for a permanent one. Code 0 accepts
// mail again.
func (s *Server) RejectWith(code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = nil
	if code != 0 {
		s.reject = &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: msg}
	}
}

// HangUp makes the server close the connection, without an answer, when a
// client sends MAIL FROM: after the greeting, EHLO and any AUTH.
func (s *Server) HangUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangUp = true
}

// Stall makes the server accept new connections and never say a word,
// not even the greeting, until the test ends.
func (s *Server) Stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = true
}

// stallingListener holds connections back from the SMTP server while the
// server stalls.
type stallingListener struct {
	net.Listener
	s *Server
}

func (l *stallingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.s.mu.Lock()
		stall := l.s.stall
		if stall {
			l.s.held = append(l.s.held, c)
		}
		l.s.mu.Unlock()
		if !stall {
			return c, nil
		}
	}
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, conn: c}, nil
}

type session struct {
	s    *Server
	conn *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*session)(nil)

func (x *session) AuthMechanisms() []string {
	if x.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != x.s.user || password != x.s.pass {
			return smtp.ErrAuthFailed
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.s.mu.Lock()
	hangUp, reject := x.s.hangUp, x.s.reject
	x.s.mu.Unlock()
	switch {
	case hangUp:
		_ = x.conn.Conn().Close()
		return errors.New("hung up")
	case reject != nil:
		return reject
	case x.s.user != "" && x.user == "":
		return smtp.ErrAuthRequired
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Message{From: x.from, To: append([]string(nil), x.to...), User: x.user, Raw: raw}
	_, m.TLS = x.conn.TLSConnectionState()
	if parsed, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.Header = parsed.Header
		m.Subject, _ = new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
		m.Body = decodeBody(parsed.Header.Get("Content-Transfer-Encoding"), parsed.Body)
	}
	x.s.mu.Lock()
	x.s.messages = append(x.s.messages, m)
	x.s.mu.Unlock()
	select {
	case x.s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func decodeBody(encoding string, r io.Reader) string {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &lineJoiner{r: r})
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return ""
	}
	return string(b)
}

// lineJoiner drops line breaks, which base64 bodies carry every 76
// characters and the decoder does not expect.
type lineJoiner struct{ r io.Reader }

func (l *lineJoiner) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	k := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			p[k] = c
			k++
		}
	}
	return k, err
}

func (x *session) Reset() {
	x.from, x.to = "", nil
}

func (x *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and the pool trusting it.
func selfSigned(t testing.TB) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("mailtest: key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("mailtest: certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("mailtest: certificate: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	conf := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion:   tls.VersionTLS12,
	}
	return conf, roots
}
