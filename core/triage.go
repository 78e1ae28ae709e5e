package core

// Triage is an owner's own bookkeeping on one match: whether they read
// it, starred it or archived it. A match nobody touched has the zero
// value.
type Triage struct {
	Read     bool
	Starred  bool
	Archived bool
}

// TriageChange sets some of a match's triage flags; nil leaves a flag as
// it is.
type TriageChange struct {
	Read     *bool
	Starred  *bool
	Archived *bool
}

// Empty reports whether the change sets nothing.
func (c TriageChange) Empty() bool {
	return c.Read == nil && c.Starred == nil && c.Archived == nil
}

// Apply returns t with the change made.
func (c TriageChange) Apply(t Triage) Triage {
	if c.Read != nil {
		t.Read = *c.Read
	}
	if c.Starred != nil {
		t.Starred = *c.Starred
	}
	if c.Archived != nil {
		t.Archived = *c.Archived
	}
	return t
}

// MaxTriageBatch is the most matches one bulk triage request may name.
const MaxTriageBatch = 100
