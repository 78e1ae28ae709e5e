// Package legacymock serves the earlier mock management API (spec
// legacy-mock.md): api-keys, communities, brand, listings, accounts,
// keywords and feed, for dashboard development and QA.
//
// It is a single-workspace mock with its own store: one mutex around one
// in-memory state, seeded on first start, optionally persisted to a JSON
// file that is rewritten atomically after every mutation. Account health
// (issue normalisation and the resolve rule) comes from core/health so the
// mock and the live service agree. The transport is go-kit: one endpoint
// and one decode function per route, one response encoder and one error
// encoder.
package legacymock
