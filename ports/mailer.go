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
