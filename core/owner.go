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

// NewOwner validates an owner's email address and name.
func NewOwner(email, name string) (Owner, error) {
	email = strings.TrimSpace(email)
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email {
		return Owner{}, Errorf(KindInvalid, "email must be a plain address such as ada@example.com")
	}
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > 200 {
		return Owner{}, Errorf(KindInvalid, "name must be at most 200 characters")
	}
	return Owner{Email: strings.ToLower(email), Name: name}, nil
}
