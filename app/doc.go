// Package app holds earshot's use cases: one service per capability
// (phrases, ingest, scoring, webhooks, alerts, reddit polling, keys and
// owners) orchestrating core rules and ports. It imports core, ports,
// the matcher (match) and its own record package (app/record, the public
// record of a match that the HTTP adapter shares) only, so a team can
// embed it with adapters of its own; the binding to earshot's adapters
// lives in package server.
package app
