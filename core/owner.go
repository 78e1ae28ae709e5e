package core

import (
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Owner is a person or team whose phrases, matches and keys are theirs
// alone.
type Owner struct {
	ID        string
	Email     string
	Name      string
	CreatedAt time.Time
}

// MaxEmailLen is the longest address an owner may have: RFC 5321's
// bound on a mail path (256, with its angle brackets). Longer ones no
// mail server takes, and Postgres refuses them from the unique index on
// owners' addresses as an internal error.
const MaxEmailLen = 254

// NewOwner validates an owner's email address and name; the name is
// held to a key name's rule (plainName).
func NewOwner(email, name string) (Owner, error) {
	email = strings.TrimSpace(email)
	// The bound is the kept address's: in lower case, which some letters
	// make longer (Ⱥ is two bytes, ⱥ three).
	if len(email) > MaxEmailLen || len(strings.ToLower(email)) > MaxEmailLen {
		return Owner{}, Errorf(KindInvalid, "email must be at most %d characters", MaxEmailLen)
	}
	addr, err := mail.ParseAddress(email)
	// A domain literal (ada@[10.0.0.5]) would send the owner's mail to
	// whichever host the owner names, an internal one included.
	if err != nil || addr.Address != email || strings.Contains(email, "@[") {
		return Owner{}, Errorf(KindInvalid, "email must be a plain address such as ada@example.com")
	}
	if name, err = plainName("name", name); err != nil {
		return Owner{}, err
	}
	if utf8.RuneCountInString(name) > 200 {
		return Owner{}, Errorf(KindInvalid, "name must be at most 200 characters")
	}
	return Owner{Email: strings.ToLower(email), Name: name}, nil
}

// Update returns o with a new address and name, each validated as
// NewOwner does; nil keeps the one o has. A name kept is not checked
// again: one stored before a rule existed does not stop its owner from
// changing the address.
func (o Owner) Update(email, name *string) (Owner, error) {
	e, n := o.Email, ""
	if email != nil {
		e = *email
	}
	if name != nil {
		n = *name
	}
	v, err := NewOwner(e, n)
	if err != nil {
		return Owner{}, err
	}
	o.Email = v.Email
	if name != nil {
		o.Name = v.Name
	}
	return o, nil
}

// EmailChangeTTL is how long a link confirming a new address works.
const EmailChangeTTL = time.Hour

// EmailChange is an owner's pending change of address. It applies once,
// through a link sent to the new address, and is known to the store only
// by the hash of the link's token.
type EmailChange struct {
	Hash      string
	OwnerID   string
	Email     string // the new address
	CreatedAt time.Time
	ExpiresAt time.Time
}
