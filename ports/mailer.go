package ports

import "context"

// Mail is one plain-text email to one recipient.
type Mail struct {
	To      string // one address, e.g. "ana@example.com" or "Ana <ana@example.com>"
	Subject string
	Body    string // plain text, UTF-8
	// Secret marks a body that carries a credential, such as a sign-in
	// link: a mailer that does not deliver must not write it anywhere.
	Secret bool
}

// Mailer sends email.
type Mailer interface {
	// Send hands m to the mail server. nil means the server accepted the
	// message (delivery to the mailbox is the server's job from there).
	// KindInvalid when m cannot be sent as given (bad address, a line break
	// in the subject); KindUnavailable when the server refused it or could
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
