package ports

import "context"

// Mail is one plain-text email to one recipient. Every mail the service
// sends is automatic, so a mailer marks each one Auto-Submitted:
// auto-generated (RFC 3834): vacation responders and other robots then
// do not answer it.
type Mail struct {
	To      string // one address, e.g. "ana@example.com" or "Ana <ana@example.com>"
	Subject string
	Body    string // plain text, UTF-8
	// Secret marks a body that carries a credential, such as a sign-in
	// link: a mailer that does not deliver must not write it anywhere.
	Secret bool
	// Unsubscribe is the absolute http or https address that stops mail
	// of this kind (the alert emails' link), empty for a mail one cannot
	// stop (a sign-in link, an address confirmation: transactional
	// mail). A mailer sends it as List-Unsubscribe (RFC 2369) and, when
	// it is https, with List-Unsubscribe-Post: List-Unsubscribe=One-Click
	// (RFC 8058, which allows one-click only over https), so a mailbox
	// provider can offer its own button that POSTs to it. Holding it
	// does no more than stop that mail: it is no credential.
	Unsubscribe string
}

// Mailer sends email.
type Mailer interface {
	// Send hands m to the mail server. nil means the server accepted the
	// message (delivery to the mailbox is the server's job from there).
	// KindInvalid when m cannot be sent as given (bad address, a line break
	// in the subject, an Unsubscribe that is not an absolute http or
	// https address fit for a header); KindUnavailable when the server refused it or could
	// not be reached in time, or ctx ended first.
	Send(ctx context.Context, m Mail) error
}

// Delivers reports whether m hands mail to a mail server, so that what
// the service says of its mail ("sent") is true. A mailer that only
// writes mail to the log, for a deployment with no mail server, says so
// with a method Delivers() returning false; a Mailer without the method
// delivers.
func Delivers(m Mailer) bool {
	d, ok := m.(interface{ Delivers() bool })
	return !ok || d.Delivers()
}
