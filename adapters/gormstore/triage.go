package gormstore

import (
	"context"
	"slices"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// TriageStore keeps the owners' flags on matches in a table of their
// own: an untouched match has no row, so ingest writes nothing more.
type TriageStore struct{ db *DB }

func NewTriageStore(db *DB) *TriageStore { return &TriageStore{db: db} }

// inboxRow is a match (alias m) and its flags, 0 where match_triage (t)
// has no row.
type inboxRow struct {
	Match                     matchRow `gorm:"embedded"`
	IsRead, Starred, Archived int
}

const (
	inboxColumns = "m.*, COALESCE(t.is_read, 0) AS is_read, COALESCE(t.starred, 0) AS starred, COALESCE(t.archived, 0) AS archived"
	inboxJoin    = "matches m LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id"
)

func (r inboxRow) triage() core.Triage {
	return core.Triage{Read: r.IsRead != 0, Starred: r.Starred != 0, Archived: r.Archived != 0}
}

// flag turns a change of one flag into a bound value: NULL leaves it.
func flag(b *bool) any {
	if b == nil {
		return nil
	}
	if *b {
		return 1
	}
	return 0
}

// SetTriage implements ports.TriageStore: one upsert over the owner's
// matches among ids. An id no row can hold is left out, as setScores
// leaves it: Postgres would refuse the whole statement for it.
func (s *TriageStore) SetTriage(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error) {
	ids = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(ids))), func(id string) bool { return !storable(id) })
	if len(ids) == 0 {
		return 0, nil
	}
	if c.Empty() {
		var n int64
		err := s.db.with(ctx).Model(&matchRow{}).Where("owner_id = ? AND id IN ?", ownerID, ids).Count(&n).Error
		return int(n), translate(err, "match")
	}
	res := s.db.write(ctx).Exec(`INSERT INTO match_triage (owner_id, match_id, created_us, is_read, starred, archived, updated_at)
		SELECT owner_id, id, created_us, COALESCE(CAST(@r AS INTEGER), 0), COALESCE(CAST(@s AS INTEGER), 0), COALESCE(CAST(@a AS INTEGER), 0), @now
		FROM matches WHERE owner_id = @owner AND id IN @ids
		ON CONFLICT (owner_id, match_id) DO UPDATE SET
			is_read = COALESCE(CAST(@r AS INTEGER), match_triage.is_read),
			starred = COALESCE(CAST(@s AS INTEGER), match_triage.starred),
			archived = COALESCE(CAST(@a AS INTEGER), match_triage.archived),
			updated_at = excluded.updated_at`,
		map[string]any{"r": flag(c.Read), "s": flag(c.Starred), "a": flag(c.Archived), "now": s.db.gorm.NowFunc().UnixMicro(), "owner": ownerID, "ids": ids})
	return int(res.RowsAffected), translate(res.Error, "match")
}

func (s *TriageStore) Triage(ctx context.Context, ownerID, matchID string) (core.Triage, error) {
	return one(s.db.with(ctx).Table(inboxJoin).Select(inboxColumns), "match", inboxRow.triage, "m.owner_id = ? AND m.id = ?", ownerID, matchID)
}

// Inbox implements ports.TriageStore: an index walk on (owner_id,
// created_us), or, for a flag asked set, on the owner's few triaged rows;
// a search's is in search.go.
func (s *TriageStore) Inbox(ctx context.Context, ownerID string, f ports.InboxFilter) ([]ports.InboxItem, bool, error) {
	if !storable(f.PhraseID) {
		return nil, false, nil // no phrase has it; Postgres would refuse the statement
	}
	flagged := (f.Read != nil && *f.Read) || (f.Starred != nil && *f.Starred) || (f.Archived != nil && *f.Archived)
	from, owner, created := inboxJoin, "m.owner_id = ?", "m.created_us"
	if flagged {
		from, owner, created = "match_triage t JOIN matches m ON m.id = t.match_id", "t.owner_id = ?", "t.created_us"
	}
	order := created
	var walk searchWalk
	if !f.Search.IsZero() {
		walk = s.db.searchWalk("m", ownerID, f.Search, f.Before, f.After, !flagged && f.ScoredAfter.IsZero())
		from = walk.from + from
	}
	q := s.db.with(ctx).Table(from).Where(owner, ownerID)
	for i, v := range []*bool{f.Read, f.Starred, f.Archived} {
		if col := []string{"is_read", "starred", "archived"}[i]; v != nil && *v {
			q = q.Where("t." + col + " = 1")
		} else if v != nil {
			q = q.Where("COALESCE(t." + col + ", 0) = 0")
		}
	}
	cond := func(use bool, c string, v any) {
		if use {
			q = q.Where(c, v)
		}
	}
	cond(f.Platform != "", "m.platform = ?", string(f.Platform))
	cond(f.MinScore >= 0, "m.score >= ?", f.MinScore)
	cond(f.Intent != "", "m.intent = ?", string(f.Intent))
	cond(f.PhraseID != "", "m.phrase_id = ?", f.PhraseID)
	cond(!f.Before.IsZero(), created+" < ?", micros(f.Before))
	cond(!f.After.IsZero(), created+" > ?", micros(f.After))
	if !f.ScoredAfter.IsZero() { // through (owner_id, scored_at); a batch's matches share a time
		q = q.Where("m.scored_at > ?", micros(f.ScoredAfter))
		order = "m.scored_at DESC, " + created
	}
	args := walk.args
	for _, c := range walk.where {
		n := strings.Count(c, "?")
		q, args = q.Where(c, args[:n]...), args[n:]
	}
	if walk.order != "" {
		order = walk.order
	}
	var rows []inboxRow
	if err := q.Select(inboxColumns).Order(order + " DESC").Limit(f.Limit + 1).Find(&rows).Error; err != nil {
		return nil, false, translate(err, "match")
	}
	rows, more := page(rows, f.Limit)
	return convert(rows, func(r inboxRow) ports.InboxItem {
		return ports.InboxItem{Match: r.Match.match(), Triage: r.triage(), ScoredAt: fromMicros(r.Match.ScoredAt)}
	}), more, nil
}
