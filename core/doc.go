// Package core holds earshot's domain: platforms, phrases, matches, keys,
// plan limits and the errors the rest of the program speaks in.
//
// It is plain Go on purpose: standard library only, no I/O, no goroutines,
// so teams can embed the rules in their own services and every adapter
// meets the same checks.
package core
