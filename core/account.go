package core

import "time"

// Account is an owner's connected account on a platform: the identity
// helper programs read with, and the cookie jar they use.
type Account struct {
	ID         string
	OwnerID    string
	Platform   Platform
	Label      string
	HasSession bool
	CreatedAt  time.Time
}
