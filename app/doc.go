// Package app holds earshot's use cases: one service per capability
// (phrases, ingest, scoring, webhooks, alerts, reddit polling, keys and
// owners) orchestrating core rules and ports. It imports core and ports
// only, so a team can embed it with adapters of its own; the binding to
// earshot's adapters lives in package server.
package app
