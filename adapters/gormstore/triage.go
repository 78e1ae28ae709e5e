package gormstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// TriageStore keeps owners' read, starred and archived flags on matches,
// in a table of their own beside matches: a match nobody triaged has no
// row, so ingest writes nothing more.
type TriageStore struct{ db *DB }

var _ ports.TriageStore = (*TriageStore)(nil)

// NewTriageStore returns the triage store of db.
func NewTriageStore(db *DB) *TriageStore { return &TriageStore{db: db} }

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

// SetTriage implements ports.TriageStore. One upsert over the owner's own
// matches among ids: an id of another owner's match selects no row, so
// it is neither changed nor counted.
func (s *TriageStore) SetTriage(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return 0, nil
	}
	if c.Empty() {
		var n int64
		err := s.db.with(ctx).Raw("SELECT COUNT(*) FROM matches WHERE owner_id = ? AND id IN ?", ownerID, ids).Scan(&n).Error
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

// Triage implements ports.TriageStore.
func (s *TriageStore) Triage(ctx context.Context, ownerID, matchID string) (core.Triage, error) {
	rows, err := s.db.query(ctx, `SELECT `+triageFlags+` FROM matches m
		LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id
		WHERE m.owner_id = ? AND m.id = ?`, ownerID, matchID)
	if err != nil {
		return core.Triage{}, translate(err, "match")
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return core.Triage{}, translate(err, "match")
		}
		return core.Triage{}, core.Errorf(core.KindNotFound, "match not found")
	}
	var f int64
	if err := rows.Scan(&f); err != nil {
		return core.Triage{}, translate(err, "match")
	}
	return unpackTriage(f), nil
}

// triageFlags reads the three flags as one number (bit 0 read, bit 1
// starred, bit 2 archived): one column costs the SQLite driver one call.
const triageFlags = "COALESCE(t.is_read, 0) + 2 * COALESCE(t.starred, 0) + 4 * COALESCE(t.archived, 0)"

func unpackTriage(f int64) core.Triage {
	return core.Triage{Read: f&1 != 0, Starred: f&2 != 0, Archived: f&4 != 0}
}

// inboxColumns and inboxPacked are matchColumns of the matches table
// under the alias m, as read on Postgres and packed on SQLite (see
// packedColumns).
var inboxColumns, inboxPacked = func() (string, string) {
	cols := strings.Split(strings.NewReplacer("\n", "", "\t", "").Replace(matchColumns), ",")
	plain := make([]string, len(cols))
	packed := make([]string, len(cols))
	for i, c := range cols {
		c = "m." + strings.TrimSpace(c)
		plain[i] = c
		packed[i] = "COALESCE(length(CAST(" + c + " AS BLOB)) || ':' || " + c + ", '-')"
	}
	return strings.Join(plain, ", "), strings.Join(packed, " || ")
}()

// Inbox implements ports.TriageStore. The page is an index walk on
// (owner_id, created_us) with one primary-key probe of match_triage per
// row, as cheap as the API's page.
func (s *TriageStore) Inbox(ctx context.Context, ownerID string, f ports.InboxFilter) ([]ports.InboxItem, bool, error) {
	cols := inboxColumns + ", " + triageFlags + ", m.scored_at"
	if !s.db.postgres {
		// One text column a row: the packed match, then the flags and
		// scored_at after the last two '|' (numbers hold none).
		cols = inboxPacked + " || '|' || (" + triageFlags + ") || '|' || m.scored_at"
	}
	// A filter that asks for a flag set walks the owner's few triaged
	// rows in created order (match_triage_starred, _archived) instead of
	// every match.
	flagged := (f.Read != nil && *f.Read) || (f.Starred != nil && *f.Starred) || (f.Archived != nil && *f.Archived)
	from := "matches m LEFT JOIN match_triage t ON t.owner_id = m.owner_id AND t.match_id = m.id"
	created := "m.created_us"
	var where strings.Builder
	args := []any{ownerID}
	where.WriteString(" WHERE m.owner_id = ?")
	if flagged {
		from = "match_triage t JOIN matches m ON m.id = t.match_id"
		created = "t.created_us"
		where.Reset()
		where.WriteString(" WHERE t.owner_id = ?")
	}
	for _, fl := range []struct {
		col string
		v   *bool
	}{{"is_read", f.Read}, {"starred", f.Starred}, {"archived", f.Archived}} {
		switch {
		case fl.v == nil:
		case *fl.v:
			where.WriteString(" AND t." + fl.col + " = 1")
		default:
			where.WriteString(" AND COALESCE(t." + fl.col + ", 0) = 0")
		}
	}
	if f.Platform != "" {
		where.WriteString(" AND m.platform = ?")
		args = append(args, string(f.Platform))
	}
	if f.MinScore >= 0 {
		where.WriteString(" AND m.score >= ?")
		args = append(args, f.MinScore)
	}
	if f.Intent != "" {
		where.WriteString(" AND m.intent = ?")
		args = append(args, string(f.Intent))
	}
	if f.PhraseID != "" {
		where.WriteString(" AND m.phrase_id = ?")
		args = append(args, f.PhraseID)
	}
	if !f.Before.IsZero() {
		where.WriteString(" AND " + created + " < ?")
		args = append(args, micros(f.Before))
	}
	if !f.After.IsZero() {
		where.WriteString(" AND " + created + " > ?")
		args = append(args, micros(f.After))
	}
	order := " ORDER BY " + created + " DESC LIMIT ?"
	if !f.ScoredAfter.IsZero() {
		// What was scored lately, through (owner_id, scored_at).
		where.WriteString(" AND m.scored_at > ?")
		args = append(args, micros(f.ScoredAfter))
		order = " ORDER BY m.scored_at DESC LIMIT ?"
	}
	args = append(args, f.Limit+1)
	q := "SELECT " + cols + " FROM " + from + where.String() + order
	rows, err := s.db.query(ctx, q, args...)
	if err != nil {
		return nil, false, translate(err, "match")
	}
	defer rows.Close()
	out := make([]ports.InboxItem, 0, f.Limit+1)
	for rows.Next() {
		r, flags, scoredAt, err := s.scanInbox(rows)
		if err != nil {
			return nil, false, translate(err, "match")
		}
		out = append(out, ports.InboxItem{Match: r.match(), Triage: unpackTriage(flags), ScoredAt: fromMicros(scoredAt)})
	}
	if err := rows.Err(); err != nil {
		return nil, false, translate(err, "match")
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	return out, more, nil
}

func (s *TriageStore) scanInbox(rows *sql.Rows) (r matchRow, flags, scoredAt int64, err error) {
	if !s.db.postgres {
		var packed string
		if err = rows.Scan(&packed); err != nil {
			return
		}
		last := strings.LastIndexByte(packed, '|')
		mid := strings.LastIndexByte(packed[:max(last, 0)], '|')
		if mid < 0 {
			return r, 0, 0, fmt.Errorf("inbox row is malformed")
		}
		if flags, err = strconv.ParseInt(packed[mid+1:last], 10, 64); err != nil {
			return
		}
		if scoredAt, err = strconv.ParseInt(packed[last+1:], 10, 64); err != nil {
			return
		}
		r, err = unpack(packed[:mid])
		return
	}
	err = rows.Scan(&r.ID, &r.OwnerID, &r.PhraseID, &r.Phrase, &r.Platform, &r.CreatedUs, &r.Score, &r.Intent, &r.Reason,
		&r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL, &r.Likes, &r.Comments, &r.PostedAt, &flags, &scoredAt)
	return
}
