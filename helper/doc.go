// Package helper is the client side of earshot's helper protocol, for a
// program that reads platforms on an owner's behalf, with the owner's
// session and the operator's proxy, and sends what it finds to an earshot
// deployment: GET /phrases, GET /session, GET /proxy, POST /ingest and
// POST /account-status (docs/helpers.md).
//
// A Client speaks the protocol; a Reader reads one platform; a Runner
// makes passes: it asks for the proxy (GET /proxy answering 503 stops
// it), builds the one transport every platform request goes through,
// hands each platform's reader its phrases and checkpoints, sends what
// the reader finds in batches of at most 100, and moves a checkpoint
// only after the batch holding its posts was accepted.
//
// The package imports nothing of earshot but what any program may, so a
// helper of one's own can embed it. `earshot helper` is one such program.
package helper
