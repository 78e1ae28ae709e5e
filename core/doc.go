// Package core holds earshot's domain: platforms, phrases, matches, keys,
// plan limits, ingest validation, webhook signing, address and retry
// rules, sealing of secrets at rest, and the errors the rest of the
// program speaks in. Its subpackages hold the larger pieces: score (the
// rule-based scorer) and health (the account-health model). The
// multi-phrase matcher is package match beside core
// (github.com/earshothq/earshot/match), which reaches nothing but core
// and the standard library.
//
// It is plain Go on purpose: standard library only, no I/O, no goroutines,
// so teams can embed the rules in their own services and every adapter
// meets the same checks.
package core
