// Package ports holds the interfaces the application needs from the
// outside world: stores by role, the event bus, the scorer, the clock.
// (Elsewhere "ports" sometimes means HTTP handlers; here they are what app
// asks of adapters.) Each method's comment says what it does and which
// core error kinds it returns; an adapter proves itself with the contract
// suites in testkit.
package ports
