package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// InboxFilter narrows an owner's matches for the inbox. Zero fields match
// everything; the triage flags match when nil.
type InboxFilter struct {
	Platform core.Platform
	MinScore int         // -1: no minimum, unscored included; else scored at or above
	Intent   core.Intent // "": every intent, unscored included
	PhraseID string
	Read     *bool
	Starred  *bool
	Archived *bool
	Before   time.Time // zero: from the newest; else created strictly before
	After    time.Time // zero: no bound; else created strictly after
	// ScoredAfter, when set, keeps only matches scored strictly after it:
	// what a live view polls for.
	ScoredAfter time.Time
	Search      core.Search // zero: every match
	Limit       int
}

// InboxItem is a match with the owner's triage of it.
type InboxItem struct {
	Match    core.Match
	Triage   core.Triage
	ScoredAt time.Time // zero until scored
}

// TriageStore keeps each owner's read, starred and archived flags on
// their matches and lists matches with them. Every method is scoped to
// one owner: another owner's match is never seen nor changed.
type TriageStore interface {
	// SetTriage applies c to the owner's matches among ids and returns
	// how many of the ids were the owner's matches. Ids that are not are
	// skipped. An empty change changes nothing.
	SetTriage(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error)
	// Triage returns the owner's triage of one match. KindNotFound when
	// the match is not the owner's.
	Triage(ctx context.Context, ownerID, matchID string) (core.Triage, error)
	// Inbox lists matches newest first, at most f.Limit of them, and
	// reports whether more match the filter. A search keeps the matches
	// it finds (core.Search).
	Inbox(ctx context.Context, ownerID string, f InboxFilter) (items []InboxItem, more bool, err error)
}

// InboxQuery is a page request for the inbox, as the dashboard and the
// API take it.
type InboxQuery struct {
	Limit    int           // 1 to 100; 0 means the default 25
	Platform core.Platform // zero: all
	MinScore *int          // nil: no minimum; else 0 to 100, unscored left out
	Intent   core.Intent   // zero: all
	PhraseID string        // zero: all
	Read     *bool
	Starred  *bool
	Archived *bool
	Before   float64 // cursor: createdAt in ms of the last match seen; 0: newest
	Q        string  // a search (core.ParseSearch); empty: none
}

// InboxPage is one page of the inbox, newest first. Next is the cursor of
// the next page, nil when nothing older matches.
type InboxPage struct {
	Items []InboxItem
	Next  *float64
}
