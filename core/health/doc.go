// Package health is the account-health model: the vocabulary of issues a
// platform reports about a connected account, how raw signals (error codes,
// HTTP statuses, page markers, loose strings) normalise to one issue, how an
// account's stored record maps to what a dashboard shows (a view state and
// one concrete action), which issues a human can clear by solving a
// challenge, and when a change is worth a notification.
//
// Everything here is a pure function or a value type, so the legacy mock,
// the live service and a client embedding the rules all reach the same
// verdict for the same record.
package health
