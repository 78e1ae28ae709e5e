// Package app holds earshot's use cases: one service per capability
// (phrases, keys and owners, ...) orchestrating core rules and ports, the
// settings of the operator contract, and the fx modules that pick adapters
// from those settings (wire.go, the composition root).
package app
