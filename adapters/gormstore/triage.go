package gormstore

import (
	"context"
	"slices"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// TriageStore keeps owners' read, starred and archived flags on matches
// in a table of their own: an untouched match has no row, so ingest
// writes nothing more.
type TriageStore struct{ db *DB }

var _ ports.TriageStore = (*TriageStore)(nil)

// NewTriageStore returns the triage store of db.
func NewTriageStore(db *DB) *TriageStore { return &TriageStore{db: db} }

// triageRow is a match and its flags, 0 where match_triage has no row.
type triageRow struct {
	Match                     matchRow
	IsRead, Starred, Archived int
}

func (r *triageRow) fields() []any {
	return append(r.Match.fields(), &r.IsRead, &r.Starred, &r.Archived)
}

func (r triageRow) triage() core.Triage {
	return core.Triage{Read: r.IsRead != 0, Starred: r.Starred != 0, Archived: r.Archived != 0}
}

// flag turns a change of one flag into a bound value: NULL leaves it.
func flag(b *bool) any {
	switch {
	case b == nil:
		return nil
	case *b:
		return 1
	default:
		return 0
	}
}

// SetTriage implements ports.TriageStore: one upsert over the owner's
// own matches among ids, so another owner's id is neither changed nor
// counted.
func (s *TriageStore) SetTriage(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return 0, nil
	}
	if c.Empty() {
		var n int64
		err := s.db.with(ctx).Model(&matchRow{}).Where("owner_id = ? AND id IN ?", ownerID, ids).Count(&n).Error
		return int(n), translate(err, "match")
	}
	r, st, ar := flag(c.Read), flag(c.Starred), flag(c.Archived)
	now := s.db.gorm.NowFunc().UnixMicro()
	res := s.db.with(ctx).Exec(`INSERT INTO match_triage (owner_id, match_id, created_us, is_read, starred, archived, updated_at)
		SELECT owner_id, id, created_us, COALESCE(CAST(? AS INTEGER), 0), COALESCE(CAST(? AS INTEGER), 0), COALESCE(CAST(? AS INTEGER), 0), ?
		FROM matches WHERE owner_id = ? AND id IN ?
		ON CONFLICT (owner_id, match_id) DO UPDATE SET
			is_read = COALESCE(CAST(? AS INTEGER), match_triage.is_read),
			starred = COALESCE(CAST(? AS INTEGER), match_triage.starred),
			archived = COALESCE(CAST(? AS INTEGER), match_triage.archived),
			updated_at = excluded.updated_at`,
		r, st, ar, now, ownerID, ids, r, st, ar)
	if res.Error != nil {
		return 0, translate(res.Error, "match")
	}
	return int(res.RowsAffected), nil
}

// inboxColumns are the match's columns (alias m), then its flags.
var inboxColumns = "m." + strings.ReplaceAll(matchColumns, ", ", ", m.") +
	", COALESCE(t.is_read, 0) AS is_read, COALESCE(t.starred, 0) AS starred, COALESCE(t.archived, 0) AS archived"

// Triage implements ports.TriageStore.
func (s *TriageStore) Triage(ctx context.Context, ownerID, matchID string) (core.Triage, error) {
	rows, err := scanAll(s.db.with(ctx).Raw(`SELECT `+inboxColumns+` FROM matches m
		LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id
		WHERE m.owner_id = ? AND m.id = ?`, ownerID, matchID), (*triageRow).fields)
	if err != nil {
		return core.Triage{}, translate(err, "match")
	}
	if len(rows) == 0 {
		return core.Triage{}, core.Errorf(core.KindNotFound, "match not found")
	}
	return rows[0].triage(), nil
}

// Inbox implements ports.TriageStore: matches joined with their triage,
// an index walk on (owner_id, created_us); a filter asking for a flag
// set walks the owner's few triaged rows instead (match_triage_starred,
// _archived). A search walks as search.go says.
func (s *TriageStore) Inbox(ctx context.Context, ownerID string, f ports.InboxFilter) ([]ports.InboxItem, bool, error) {
	flagged := (f.Read != nil && *f.Read) || (f.Starred != nil && *f.Starred) || (f.Archived != nil && *f.Archived)
	from, created := "matches m LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id", "m.created_us"
	where := []string{"m.owner_id = ?"}
	if flagged {
		from, created = "match_triage t JOIN matches m ON m.id = t.match_id", "t.created_us"
		where = []string{"t.owner_id = ?"}
	}
	args := []any{ownerID}
	for _, fl := range []struct {
		col string
		v   *bool
	}{{"is_read", f.Read}, {"starred", f.Starred}, {"archived", f.Archived}} {
		switch {
		case fl.v == nil:
		case *fl.v:
			where = append(where, "t."+fl.col+" = 1")
		default:
			where = append(where, "COALESCE(t."+fl.col+", 0) = 0")
		}
	}
	cond := func(use bool, c string, v any) {
		if use {
			where, args = append(where, c), append(args, v)
		}
	}
	cond(f.Platform != "", "m.platform = ?", string(f.Platform))
	cond(f.MinScore >= 0, "m.score >= ?", f.MinScore)
	cond(f.Intent != "", "m.intent = ?", string(f.Intent))
	cond(f.PhraseID != "", "m.phrase_id = ?", f.PhraseID)
	cond(!f.Before.IsZero(), created+" < ?", micros(f.Before))
	cond(!f.After.IsZero(), created+" > ?", micros(f.After))
	order := created
	if !f.ScoredAfter.IsZero() {
		// What was scored lately, through (owner_id, scored_at); matches
		// scored in one batch share a time, and come newest first.
		cond(true, "m.scored_at > ?", micros(f.ScoredAfter))
		order = "m.scored_at DESC, " + created
	}
	if !f.Search.IsZero() {
		w := s.db.searchWalk("m", ownerID, f.Search, f.Before, f.After, !flagged && f.ScoredAfter.IsZero())
		from, where, args = w.from+from, append(where, w.where...), append(args, w.args...)
		if w.order != "" {
			order = w.order
		}
	}
	rows, err := scanAll(s.db.with(ctx).Raw("SELECT "+inboxColumns+" FROM "+from+" WHERE "+strings.Join(where, " AND ")+
		" ORDER BY "+order+" DESC LIMIT ?", append(args, f.Limit+1)...), (*triageRow).fields)
	if err != nil {
		return nil, false, translate(err, "match")
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	out := make([]ports.InboxItem, len(rows))
	for i, r := range rows {
		out[i] = ports.InboxItem{Match: r.Match.match(), Triage: r.triage(), ScoredAt: fromMicros(r.Match.ScoredAt)}
	}
	return out, more, nil
}
