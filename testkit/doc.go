// Package testkit holds what proves an adapter: contract suites that run
// every implementation of a port through the same cases, and helpers for
// tests. Its subpackages are importable by anyone who writes an adapter.
package testkit
