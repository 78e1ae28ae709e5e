// Package smtpmail sends the plain-text alert emails (ports.Mailer) through
// an SMTP server with github.com/wneessen/go-mail, or writes them to the
// log when the deployment has no mail server (LogMailer).
//
// The server is given as a URL:
//
//	smtp://user:pass@host:port   port 25 by default; STARTTLS when the
//	                             server offers it, plain text otherwise,
//	                             since a local relay often has no TLS
//	smtps://user:pass@host:port  TLS from the first byte (port 465 by default)
//
// Credentials are optional. Certificates are verified, STARTTLS included.
// The password is sent only over TLS or to a loopback host; to a plain-text
// server elsewhere, sending fails rather than expose it. Each Send opens
// its own connection: alerts are few, and a fresh connection never finds a
// stale one.
package smtpmail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// DefaultTimeout bounds one Send from dial to QUIT, unless ctx ends sooner.
const DefaultTimeout = 30 * time.Second

// Mailer sends mail through one SMTP server. It is safe for concurrent use.
type Mailer struct {
	host        string
	port        int
	implicitTLS bool
	user, pass  string
	from        *mail.Address
	fromDomain  string
	timeout     time.Duration
	tlsConfig   *tls.Config
	log         *slog.Logger
}

var (
	_ ports.Mailer = (*Mailer)(nil)
	_ ports.Mailer = (*LogMailer)(nil)
)

// Option adjusts a Mailer.
type Option func(*Mailer)

// WithTimeout replaces DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(m *Mailer) {
		if d > 0 {
			m.timeout = d
		}
	}
}

// WithTLSConfig sets the TLS client configuration, for a server whose
// certificate a private authority signed. Its ServerName defaults to the
// URL's host.
func WithTLSConfig(c *tls.Config) Option {
	return func(m *Mailer) { m.tlsConfig = c.Clone() }
}

// New returns a Mailer for the server at rawURL (see the package doc) that
// sends as from ("earshot@example.com" or "Earshot <earshot@example.com>").
// KindInvalid for a malformed URL or sender; errors never contain the
// password. Nothing is dialled until Send.
func New(rawURL, from string, logger *slog.Logger, opts ...Option) (*Mailer, error) {
	if logger == nil {
		logger = slog.Default()
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse quotes its whole input, password included.
		return nil, core.Errorf(core.KindInvalid, "SMTP URL is malformed")
	}
	m := &Mailer{timeout: DefaultTimeout, log: logger.With("component", "smtpmail")}
	switch u.Scheme {
	case "smtp":
		m.port = 25
	case "smtps":
		m.port, m.implicitTLS = 465, true
	default:
		return nil, core.Errorf(core.KindInvalid, "SMTP URL %s: scheme must be smtp or smtps", u.Redacted())
	}
	m.host = u.Hostname()
	if m.host == "" {
		return nil, core.Errorf(core.KindInvalid, "SMTP URL %s: no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if m.port, err = strconv.Atoi(p); err != nil || m.port < 1 || m.port > 65535 {
			return nil, core.Errorf(core.KindInvalid, "SMTP URL %s: bad port", u.Redacted())
		}
	}
	if u.Path != "" && u.Path != "/" {
		return nil, core.Errorf(core.KindInvalid, "SMTP URL %s: unexpected path", u.Redacted())
	}
	if u.User != nil {
		m.user = u.User.Username()
		m.pass, _ = u.User.Password()
	}
	if m.from, err = mail.ParseAddress(from); err != nil {
		return nil, core.Errorf(core.KindInvalid, "mail sender %q: %v", from, err)
	}
	m.fromDomain = m.from.Address[strings.LastIndexByte(m.from.Address, '@')+1:]
	for _, o := range opts {
		o(m)
	}
	if m.tlsConfig == nil {
		m.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if m.tlsConfig.ServerName == "" {
		m.tlsConfig.ServerName = m.host
	}
	return m, nil
}

// Send delivers mail to the server; see ports.Mailer. It takes at most the
// timeout (30s by default) and stops as soon as ctx ends.
func (m *Mailer) Send(ctx context.Context, mm ports.Mail) error {
	to, err := validate(mm)
	if err != nil {
		return err
	}
	msg, err := m.message(to, mm)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	var stops []func() bool
	var conns []net.Conn
	defer func() {
		for _, stop := range stops {
			stop()
		}
		// go-mail leaves the connection open when a step after the dial
		// fails (EHLO, AUTH): closed here, or it stays until the server
		// hangs up. Closing one go-mail closed already does nothing.
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	// go-mail watches ctx only while dialling and otherwise relies on
	// per-command deadlines, which a slow server can keep extending. So the
	// connection is closed when ctx ends, failing whatever step is running.
	dial := func(dctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		if m.implicitTLS {
			tc := tls.Client(conn, m.tlsConfig)
			if err := tc.HandshakeContext(dctx); err != nil {
				_ = conn.Close()
				return nil, err
			}
			// Returned as *tls.Conn, so go-mail knows the session is
			// encrypted and allows AUTH PLAIN.
			conn = tc
		}
		stops = append(stops, context.AfterFunc(ctx, func() { _ = conn.Close() }))
		conns = append(conns, conn)
		return conn, nil
	}

	opts := []gomail.Option{
		gomail.WithPort(m.port),
		gomail.WithTimeout(m.timeout),
		gomail.WithTLSPolicy(gomail.TLSOpportunistic),
		gomail.WithTLSConfig(m.tlsConfig),
		gomail.WithDialContextFunc(dial),
	}
	if m.user != "" {
		opts = append(opts, gomail.WithSMTPAuthCustom(&auth{user: m.user, pass: m.pass, host: m.host, hangUp: func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}}))
	}
	client, err := gomail.NewClient(m.host, opts...)
	if err != nil {
		return core.Wrap(core.KindInternal, m.redact(err), "SMTP client")
	}
	start := time.Now()
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		var cause error = m.redact(err)
		if ctxErr := ctx.Err(); ctxErr != nil {
			// The real cause; what go-mail saw was a closed connection.
			cause = &ctxError{ctx: ctxErr, detail: cause}
		}
		return core.Wrap(core.KindUnavailable, cause, fmt.Sprintf("send mail via %s", m.addr()))
	}
	m.log.DebugContext(ctx, "mail sent", "to", to.Address, "subject", mm.Subject,
		"message_id", msg.GetMessageID(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// maxSCRAMIterations bounds the key derivation a SCRAM server may ask
// for (RFC 5802 5.1, i=). The derivation runs on the CPU, where neither
// ctx nor the timeout reaches it: a server, or whoever answers for it on
// a connection without TLS, asking for billions of rounds would hold
// Send and a core for hours. Servers ask 4096 (RFC 7677) to some
// hundred thousand; a million takes well under a second.
const maxSCRAMIterations = 1_000_000

// auth picks the first mechanism of SCRAM-SHA-256, SCRAM-SHA-1, PLAIN
// and LOGIN the server offers, else CRAM-MD5 or NTLM, as go-mail's
// opportunistic choice does, and refuses a SCRAM iteration count above
// maxSCRAMIterations. PLAIN and LOGIN refuse to run unencrypted unless
// the host is loopback; the others never send the password itself.
type auth struct {
	user, pass, host string
	hangUp           func() // ends the connection without QUIT
	inner            smtp.Auth
	scram            bool
}

func (a *auth) Start(s *smtp.ServerInfo) (string, []byte, error) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN", "LOGIN", "CRAM-MD5", "NTLM"} {
		if !slices.Contains(s.Auth, mech) {
			continue
		}
		switch mech {
		case "SCRAM-SHA-256":
			a.inner, a.scram = smtp.ScramSHA256Auth(a.user, a.pass), true
		case "SCRAM-SHA-1":
			a.inner, a.scram = smtp.ScramSHA1Auth(a.user, a.pass), true
		case "PLAIN":
			a.inner = smtp.PlainAuth("", a.user, a.pass, a.host, false)
		case "LOGIN":
			a.inner = smtp.LoginAuth(a.user, a.pass, a.host, false)
		case "CRAM-MD5":
			a.inner = smtp.CRAMMD5Auth(a.user, a.pass)
		case "NTLM":
			a.inner = smtp.NTLMAuth(a.user, a.pass, "")
		}
		return a.inner.Start(s)
	}
	// go-mail answers a failed Start with QUIT and waits for the reply;
	// a server that offers no way in gets none, as before.
	a.hangUp()
	return "", nil, errors.New("the server offers no SMTP AUTH mechanism this mailer uses")
}

func (a *auth) Next(fromServer []byte, more bool) ([]byte, error) {
	if a.scram && more && bytes.HasPrefix(fromServer, []byte("r=")) {
		for _, f := range bytes.Split(fromServer, []byte(",")) {
			if v, ok := bytes.CutPrefix(f, []byte("i=")); ok {
				if n, err := strconv.Atoi(string(v)); err != nil || n > maxSCRAMIterations {
					return nil, fmt.Errorf("the server asks SCRAM for %.20q iterations, more than %d", v, maxSCRAMIterations)
				}
			}
		}
	}
	return a.inner.Next(fromServer, more)
}

func (m *Mailer) addr() string { return net.JoinHostPort(m.host, strconv.Itoa(m.port)) }

// message builds the text/plain UTF-8 message (quoted-printable, so any
// text survives 7-bit relays).
func (m *Mailer) message(to *mail.Address, mm ports.Mail) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(m.from)
	msg.ToMailAddress(to)
	msg.Subject(foldable(mm.Subject))
	msg.SetDate()
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, core.Wrap(core.KindInternal, err, "message id")
	}
	// The sender's domain makes the id globally unique without a hostname.
	msg.SetMessageIDWithValue(hex.EncodeToString(id[:]) + "@" + m.fromDomain)
	msg.SetGenHeader(headerAutoSubmitted, "auto-generated")
	if mm.Unsubscribe != "" {
		if strings.HasPrefix(mm.Unsubscribe, "https://") {
			// Both headers: RFC 8058's one-click POST is for https only,
			// which go-mail checks again.
			if err := msg.SetListUnsubscribeOneClick(mm.Unsubscribe); err != nil {
				return nil, core.Wrap(core.KindInvalid, err, "mail unsubscribe address")
			}
		} else {
			msg.SetListUnsubscribe(mm.Unsubscribe)
		}
	}
	msg.SetBodyString(gomail.TypeTextPlain, mm.Body)
	return msg, nil
}

// headerAutoSubmitted marks a message sent by a program, not a person
// (RFC 3834 section 5), so that vacation responders leave it unanswered.
// go-mail names no constant for it.
const headerAutoSubmitted gomail.Header = "Auto-Submitted"

// maxUnsubscribe bounds Mail.Unsubscribe: go-mail writes the
// List-Unsubscribe header as given, unfolded, and a header line may not
// pass 998 characters (RFC 5322 2.1.1).
const maxUnsubscribe = 900

// foldable returns subject in a form go-mail folds within the line
// limit. go-mail folds a header only at spaces, so a word longer than a
// line (a webhook address up to 2048 bytes) would go out as one line
// past RFC 5322's 998 characters, which servers refuse. Such a subject
// goes as RFC 2047 encoded words short enough for a line each, which
// readers join again without the spaces between them.
//
// A subject holding "=?" goes the same way, so that no part of it is read
// as an encoded word it was not.
func foldable(subject string) string {
	const (
		longestWord = 64 // fits after "Subject: " within go-mail's 76
		chunk       = 39 // bytes: 52 in base64, a 64-character encoded word
	)
	long := false
	for w := range strings.SplitSeq(subject, " ") {
		if len(w) > longestWord {
			long = true
			break
		}
	}
	// Text that looks like an encoded word ("=?charset?b?...?=") would go
	// out as it is and be decoded by the reader into something else: it
	// goes encoded too, so the subject reads as it was given.
	if !long && !strings.Contains(subject, "=?") {
		return subject
	}
	var words []string
	for s := subject; s != ""; {
		n := min(len(s), chunk)
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n-- // whole characters in each word, as RFC 2047 asks
		}
		if n == 0 {
			n = min(len(s), chunk) // not UTF-8: any cut will do
		}
		words = append(words, "=?UTF-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// redact returns err's message without the password, which no error may
// carry into a log: go-mail's errors quote server replies, and a server
// may echo what it was sent.
func (m *Mailer) redact(err error) error {
	s := err.Error()
	if m.pass != "" {
		// A server that quotes the line it refused sends the password
		// back as AUTH sent it: in base64, alone (LOGIN) or after the
		// user name (PLAIN). go-mail quotes a reply in Go syntax, which
		// escapes a quote or a backslash in it. The longest form goes
		// first.
		quoted := strconv.Quote(m.pass)
		for _, secret := range []string{
			base64.StdEncoding.EncodeToString([]byte("\x00" + m.user + "\x00" + m.pass)),
			base64.StdEncoding.EncodeToString([]byte(m.pass)),
			quoted[1 : len(quoted)-1],
			m.pass,
		} {
			s = strings.ReplaceAll(s, secret, "xxxxx")
		}
	}
	// go-mail joins errors with line breaks; logs want one line.
	return errors.New(strings.ReplaceAll(s, "\n", "; "))
}

// ctxError reports the end of ctx as the cause of a failed send, so that
// errors.Is(err, context.DeadlineExceeded) holds, with what go-mail saw.
type ctxError struct {
	ctx    error
	detail error
}

func (e *ctxError) Error() string { return e.ctx.Error() + " (" + e.detail.Error() + ")" }
func (e *ctxError) Unwrap() error { return e.ctx }

// validate checks what the port promises to reject: a recipient that is
// not one address, and line breaks in the subject, which would let text
// pass for further headers.
func validate(mm ports.Mail) (*mail.Address, error) {
	to, err := mail.ParseAddress(mm.To)
	if err != nil {
		return nil, core.Errorf(core.KindInvalid, "mail recipient %q: %v", mm.To, err)
	}
	if strings.ContainsAny(mm.Subject, "\r\n") {
		return nil, core.Errorf(core.KindInvalid, "mail subject contains a line break")
	}
	if mm.Unsubscribe != "" && !headerURL(mm.Unsubscribe) {
		return nil, core.Errorf(core.KindInvalid, "mail unsubscribe address must be an absolute http or https URL of at most %d characters, "+
			"without spaces, commas or angle brackets", maxUnsubscribe)
	}
	return to, nil
}

// headerURL reports whether u can go between the angle brackets of
// List-Unsubscribe as it is: an absolute http or https URL of visible
// ASCII, with no comma (which separates the header's URLs) or angle
// bracket (which would end this one), short enough for one header line.
func headerURL(u string) bool {
	if len(u) > maxUnsubscribe {
		return false
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f || c == ',' || c == '<' || c == '>' {
			return false
		}
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" && p.User == nil
}

// LogMailer writes each mail to the log instead of sending it, for
// deployments without EARSHOT_SMTP_URL. Send accepts every valid mail, so
// the sweeps mark it done rather than retry it; Delivers tells them to
// say it was not sent.
type LogMailer struct {
	log *slog.Logger
}

// NewLogMailer returns a LogMailer writing to logger (slog.Default() if nil).
func NewLogMailer(logger *slog.Logger) *LogMailer {
	if logger == nil {
		logger = slog.Default()
	}
	return &LogMailer{log: logger.With("component", "smtpmail")}
}

// Delivers is false: a LogMailer sends nothing (see ports.Delivers).
func (l *LogMailer) Delivers() bool { return false }

// Send logs mm at Info level, with the headers Mailer would add, and
// without its body when mm.Secret: whoever reads the log must not get a
// credential such as a sign-in link. KindInvalid for what Mailer would
// refuse.
func (l *LogMailer) Send(ctx context.Context, mm ports.Mail) error {
	if _, err := validate(mm); err != nil {
		return err
	}
	if mm.Secret {
		l.log.InfoContext(ctx, "mail not sent, no SMTP server configured (EARSHOT_SMTP_URL); it holds a credential, so it is not shown "+
			"(an operator prints a sign-in link with earshot admin owner login-link)", "to", mm.To, "subject", mm.Subject)
		return nil
	}
	// The headers Mailer would add are written too, so the log shows the
	// mail as a mailbox would get it. The unsubscribe link is written as
	// the body (which holds it too) is: it can only stop alert emails,
	// and stopping them is what the owner's mailbox offers anyone who
	// reads it; it cannot sign in or change anything else.
	attrs := []any{"to", mm.To, "subject", mm.Subject, "auto_submitted", "auto-generated"}
	if mm.Unsubscribe != "" {
		attrs = append(attrs, "list_unsubscribe", "<"+mm.Unsubscribe+">")
		if strings.HasPrefix(mm.Unsubscribe, "https://") {
			attrs = append(attrs, "list_unsubscribe_post", "List-Unsubscribe=One-Click")
		}
	}
	l.log.InfoContext(ctx, "mail not sent, no SMTP server configured (EARSHOT_SMTP_URL); here it is", append(attrs, "body", mm.Body)...)
	return nil
}
