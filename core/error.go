package core

import (
	"errors"
	"fmt"
)

// Kind classifies an error. Each kind maps to one code of the public API,
// so transports map errors through a table, never by reading messages.
// New kinds are only ever appended. Test for a kind with IsKind or
// errors.Is(err, &Error{Kind: k}), which see through wrapping.
type Kind int

// The kinds, each with the code it is sent as (Code) and what it means
// to the caller.
const (
	KindInternal        Kind = iota // server_error: not the caller's doing; its text is never shown to them
	KindInvalid                     // invalid_parameter: a value the caller sent breaks a rule; the message names it
	KindInvalidRequest              // invalid_request: the request as a whole cannot be done as asked
	KindInvalidJSON                 // invalid_json: the body is not the JSON expected
	KindUnauthorized                // unauthorized: no credentials, or ones that do not check out (a key, a session, a webhook signature)
	KindForbidden                   // forbidden: valid credentials that do not allow this (a key without the scope)
	KindPlanLimit                   // plan_limit: the plan's limit would be passed
	KindNotFound                    // not_found: no such thing, or not the caller's
	KindConflict                    // conflict: it clashes with what exists (a duplicate) or with its state
	KindPayloadTooLarge             // payload_too_large: more than the bound allows in one request
	KindRateLimited                 // rate_limited: too many requests; try again later
	KindUnavailable                 // service_unavailable: this deployment cannot do it now or at all (no email set up)
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

// String is Code, so a kind prints as its wire code.
func (k Kind) String() string { return k.Code() }

// Error is the one error type of the domain. Message is safe to show to
// the caller; Err, when set, is the cause and is never shown.
type Error struct {
	Kind    Kind
	Message string // caller-safe: what Message(err) returns for a kind other than KindInternal
	Err     error  // the cause, for logs; nil when there is none
}

// Error returns the message, then ": " and the cause's text when there is
// a cause: the text for logs. Show a caller Message(err) instead, which
// never holds the cause.
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

// Unwrap returns the cause, so errors.Is and errors.As reach it.
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
// for any other error, nil included: test err != nil first, or use
// IsKind.
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
