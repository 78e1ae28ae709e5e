package core

import (
	"errors"
	"fmt"
)

// Kind classifies an error. Each kind maps to one code of the public API,
// so transports map errors through a table, never by reading messages.
// New kinds are only ever appended.
type Kind int

const (
	KindInternal        Kind = iota // server_error
	KindInvalid                     // invalid_parameter
	KindInvalidRequest              // invalid_request
	KindInvalidJSON                 // invalid_json
	KindUnauthorized                // unauthorized
	KindForbidden                   // forbidden
	KindPlanLimit                   // plan_limit
	KindNotFound                    // not_found
	KindConflict                    // conflict
	KindPayloadTooLarge             // payload_too_large
	KindRateLimited                 // rate_limited
	KindUnavailable                 // service_unavailable
)

var kindCodes = [...]string{
	KindInternal:        "server_error",
	KindInvalid:         "invalid_parameter",
	KindInvalidRequest:  "invalid_request",
	KindInvalidJSON:     "invalid_json",
	KindUnauthorized:    "unauthorized",
	KindForbidden:       "forbidden",
	KindPlanLimit:       "plan_limit",
	KindNotFound:        "not_found",
	KindConflict:        "conflict",
	KindPayloadTooLarge: "payload_too_large",
	KindRateLimited:     "rate_limited",
	KindUnavailable:     "service_unavailable",
}

// Code is the wire code of the kind, as the spec names it.
func (k Kind) Code() string {
	if k < 0 || int(k) >= len(kindCodes) {
		return kindCodes[KindInternal]
	}
	return kindCodes[k]
}

func (k Kind) String() string { return k.Code() }

// Error is the one error type of the domain. Message is safe to show to
// the caller; Err, when set, is the cause and is never shown.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Err == nil:
		return e.Message
	case e.Message == "":
		return e.Err.Error()
	default:
		return e.Message + ": " + e.Err.Error()
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &Error{Kind: k}) match any error of kind k.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Kind == e.Kind
}

// Errorf returns an *Error of kind k with a formatted, caller-safe message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error of kind k around cause. The message is what the
// caller sees; the cause stays for logs.
func Wrap(k Kind, cause error, message string) *Error {
	return &Error{Kind: k, Message: message, Err: cause}
}

// KindOf returns the kind of the first *Error in err's chain, KindInternal
// for any other non-nil error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// IsKind reports whether err carries kind k.
func IsKind(err error, k Kind) bool {
	return err != nil && KindOf(err) == k
}

// Message returns the caller-safe message of err. Errors that are not an
// *Error are internal and their text is never shown.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != KindInternal && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
