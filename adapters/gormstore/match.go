package gormstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// matchRow is a row of matches. lease_until and emailed_at are the
// scorer's and the alerts' (ClaimUnscored, alert.go).
type matchRow struct {
	ID         string `gorm:"primaryKey"`
	OwnerID    string
	PhraseID   string
	Phrase     string
	Platform   string
	CreatedUs  int64
	Score      *int
	Intent     *string
	Reason     *string
	ScoredAt   int64
	ExternalID string
	Author     string
	Title      *string
	Body       string
	URL        string `gorm:"column:url"`
	Likes      int64
	Comments   int64
	PostedAt   int64
	Backfilled int
}

func (matchRow) TableName() string { return "matches" }

// matchColumns are the columns of matchRow in the order of fields.
const matchColumns = "id, owner_id, phrase_id, phrase, platform, created_us, score, intent, reason, scored_at, " +
	"external_id, author, title, body, url, likes, comments, posted_at, backfilled"

func (r *matchRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.PhraseID, &r.Phrase, &r.Platform, &r.CreatedUs, &r.Score, &r.Intent, &r.Reason, &r.ScoredAt,
		&r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL, &r.Likes, &r.Comments, &r.PostedAt, &r.Backfilled}
}

// scanAll runs q and reads every row into a T through fields. Matches
// are read this way rather than by gorm's scan, whose reflection cost a
// page of the API, its hottest read, nearly as much again as the
// statement itself.
func scanAll[T any](q *gorm.DB, fields func(*T) []any) ([]T, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	// One row and its field list serve all rows (Scan sets every field, NULL to nil): no two allocations per row.
	var v T
	dest := fields(&v)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (r matchRow) match() core.Match {
	m := core.Match{
		ID: r.ID, OwnerID: r.OwnerID, PhraseID: r.PhraseID, Phrase: r.Phrase,
		Platform: core.Platform(r.Platform), CreatedAt: fromMicros(r.CreatedUs),
		Post: core.Post{
			ExternalID: r.ExternalID, Author: r.Author, Text: r.Body, URL: r.URL,
			Likes: int(r.Likes), Comments: int(r.Comments), PostedAt: fromMicros(r.PostedAt),
		},
		Backfilled: r.Backfilled != 0,
	}
	if r.Title != nil {
		m.Post.Title = *r.Title
	}
	if r.Score != nil {
		m.Score = &core.Score{Value: *r.Score}
		if r.Intent != nil {
			m.Score.Intent = core.Intent(*r.Intent)
		}
		if r.Reason != nil {
			m.Score.Reason = *r.Reason
		}
	}
	return m
}

func newMatchRow(ownerID string, ph phraseOfMatch, p core.Post) matchRow {
	r := matchRow{
		ID: newID(), OwnerID: ownerID, PhraseID: ph.ID, Phrase: ph.Phrase, Platform: ph.Platform,
		ExternalID: p.ExternalID, Author: p.Author, Body: core.Cut(p.Text, core.MaxPostText), URL: p.URL,
		Likes: int64(p.Likes), Comments: int64(p.Comments), PostedAt: micros(p.PostedAt),
	}
	if p.Title != "" {
		t := p.Title
		r.Title = &t
	}
	return r
}

// MatchStore keeps posts and matches.
type MatchStore struct{ db *DB }

var _ ports.MatchStore = (*MatchStore)(nil)

// NewMatchStore returns the match store of db.
func NewMatchStore(db *DB) *MatchStore {
	return &MatchStore{db: db}
}

// SaveMatches implements ports.MatchStore. A batch is a handful of
// statements however many posts it holds: posts go in with one
// multi-row insert that skips known ones and returns the new, and the
// matches with another.
//
// Matches of one owner get strictly increasing created_us, in the order
// their transactions commit, which the API's cursors depend on (a reader
// paging by created_us never meets a match committed after its read
// with a created_us below one it has seen). stamp hands them out with
// one UPDATE of the owner's row, whose lock the transaction keeps until
// it commits, so the next batch of the owner stamps after this one is
// visible.
func (s *MatchStore) SaveMatches(ctx context.Context, ownerID string, platform core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	var res ports.SaveResult
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		now := tx.NowFunc().UnixMicro()
		// Later copies of a post within the batch are known already.
		first := make(map[string]int, len(batch))
		var ids []string
		for i, pm := range batch {
			if _, dup := first[pm.Post.ExternalID]; !dup {
				first[pm.Post.ExternalID] = i
				ids = append(ids, pm.Post.ExternalID)
			}
		}
		if len(ids) == 0 {
			var n int64
			if err := tx.Table("owners").Where("id = ?", ownerID).Count(&n).Error; err != nil || n == 1 {
				return err
			}
			return gorm.ErrRecordNotFound
		}
		// The ids go in as one JSON array: one short statement for any batch.
		list, _ := json.Marshal(ids)
		fresh, err := scanAll(tx.Raw(`INSERT INTO posts (owner_id, platform, external_id, created_at)
			SELECT ?, ?, value, ? FROM `+s.db.pick("json_array_elements_text(CAST(? AS json))", "json_each(?)")+` WHERE true ON CONFLICT DO NOTHING RETURNING external_id`,
			ownerID, string(platform), now, string(list)), func(s *string) []any { return []any{s} })
		if errors.Is(constraint(err), gorm.ErrForeignKeyViolated) {
			return gorm.ErrRecordNotFound // the owner is missing
		}
		if err != nil {
			return err
		}
		res.Saved, res.Known = len(fresh), len(batch)-len(fresh)
		isFresh := make(map[string]bool, len(fresh))
		for _, id := range fresh {
			isFresh[id] = true
		}
		if err := s.db.keepRecent(tx, ownerID, platform, batch, func(i int) bool {
			id := batch[i].Post.ExternalID
			return isFresh[id] && first[id] == i
		}); err != nil {
			return err
		}
		var rows []matchRow
		counts := map[string]int64{}
		var phrases map[string]phraseOfMatch
		for i, pm := range batch {
			if !isFresh[pm.Post.ExternalID] || first[pm.Post.ExternalID] != i || len(pm.PhraseIDs) == 0 {
				continue
			}
			if phrases == nil {
				if phrases, err = phrasesOfOwner(tx, ownerID); err != nil {
					return err
				}
			}
			for _, pid := range pm.PhraseIDs {
				ph, ok := phrases[pid]
				if !ok || ph.Platform != string(platform) {
					continue // deleted meanwhile, another owner's or another platform's
				}
				rows = append(rows, newMatchRow(ownerID, ph, pm.Post))
				counts[pid]++
			}
		}
		if len(rows) == 0 {
			return nil
		}
		next, err := stamp(tx, ownerID, int64(len(rows)), now)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].CreatedUs = next + int64(i)
		}
		if err := insertMatches(tx, rows); err != nil {
			return err
		}
		for pid, n := range counts {
			if err := tx.Exec("UPDATE phrases SET matches = matches + ? WHERE id = ?", n, pid).Error; err != nil {
				return err
			}
		}
		res.Matches = convert(rows, matchRow.match)
		return nil
	})
	if err != nil {
		return ports.SaveResult{}, translate(err, "match")
	}
	return res, nil
}

// insertMatches stores rows with multi-row INSERTs of up to 1,000 rows,
// well under SQLite's limit on bound values.
func insertMatches(tx *gorm.DB, rows []matchRow) error {
	for len(rows) > 0 {
		n := min(len(rows), 1000)
		args := make([]any, 0, 19*n)
		for i := range rows[:n] {
			args = append(args, rows[i].fields()...)
		}
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", 19), ", ") + ")"
		if err := tx.Exec("INSERT INTO matches ("+matchColumns+") VALUES "+strings.TrimSuffix(strings.Repeat(one+", ", n), ", "), args...).Error; err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// stamp takes n created_us values for the owner's new matches and
// returns the first: past the owner's last one and no earlier than now.
func stamp(tx *gorm.DB, ownerID string, n, now int64) (int64, error) {
	last, err := scanAll(tx.Raw("UPDATE owners SET last_match_us = CASE WHEN last_match_us + ? > ? THEN last_match_us + ? ELSE ? END WHERE id = ? RETURNING last_match_us",
		n, now+n-1, n, now+n-1, ownerID), func(v *int64) []any { return []any{v} })
	if err == nil && len(last) == 0 {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return 0, err
	}
	return last[0] - n + 1, nil
}

// phraseOfMatch is what a match copies of its phrase.
type phraseOfMatch struct{ ID, Phrase, Platform string }

// phrasesOfOwner returns the owner's phrases by id.
func phrasesOfOwner(tx *gorm.DB, ownerID string) (map[string]phraseOfMatch, error) {
	var rows []phraseOfMatch
	if err := tx.Table("phrases").Select("id, phrase, platform").Where("owner_id = ?", ownerID).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]phraseOfMatch, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// Match implements ports.MatchStore.
func (s *MatchStore) Match(ctx context.Context, ownerID, id string) (core.Match, error) {
	var row matchRow
	if err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
		return core.Match{}, translate(err, "match")
	}
	return row.match(), nil
}

// pageColumns are matchColumns less owner_id (given) and scored_at (unused).
// The SQLite driver pays two or three cgo calls per column per row, more than the step, so a page reads no spare column.
const pageColumns = "id, phrase_id, phrase, platform, created_us, score, intent, reason, " +
	"external_id, author, title, body, url, likes, comments, posted_at, backfilled"

// pageFields are the fields of r that pageColumns fill, in their order.
func (r *matchRow) pageFields() []any {
	return []any{&r.ID, &r.PhraseID, &r.Phrase, &r.Platform, &r.CreatedUs, &r.Score, &r.Intent, &r.Reason,
		&r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL, &r.Likes, &r.Comments, &r.PostedAt, &r.Backfilled}
}

// Matches implements ports.MatchStore: a walk of the owner's index in
// created_us order.
func (s *MatchStore) Matches(ctx context.Context, ownerID string, f ports.MatchFilter) ([]core.Match, bool, error) {
	q, args := "SELECT "+pageColumns+" FROM matches WHERE owner_id = ?", []any{ownerID}
	cond := func(use bool, c string, v any) {
		if use {
			q, args = q+" AND "+c, append(args, v)
		}
	}
	cond(f.Platform != "", "platform = ?", string(f.Platform))
	cond(f.MinScore >= 0, "score >= ?", f.MinScore)
	cond(!f.Before.IsZero(), "created_us < ?", micros(f.Before))
	rows, err := scanAll(s.db.with(ctx).Raw(q+" ORDER BY created_us DESC LIMIT ?", append(args, f.Limit+1)...), (*matchRow).pageFields)
	if err != nil {
		return nil, false, translate(err, "match")
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	return convert(rows, func(r matchRow) core.Match {
		r.OwnerID = ownerID // not read: the query selects on it
		return r.match()
	}), more, nil
}

// ClaimUnscored implements ports.MatchStore. SKIP LOCKED lets replicas
// on Postgres claim disjoint rows at once; SQLite has one writer, so the
// plain form is exclusive already.
//
// On Postgres the claim must walk matches_unscored with an index scan:
// each score leaves an entry for a dead row there until a vacuum, which
// on a table this size comes a minute or more apart. An index scan marks
// the entries it finds dead and passes over them the next time; the
// bitmap scan the planner prefers visits their rows again on every
// claim, so claims would slow down as scoring goes on
// (docs/adr/0006-delivery-queue-on-postgres.md).
func (s *MatchStore) ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error) {
	now := s.db.gorm.NowFunc()
	claim := `UPDATE matches SET lease_until = ? WHERE id IN (
		SELECT id FROM matches WHERE score IS NULL AND lease_until < ? ORDER BY created_us LIMIT ?` +
		s.db.pick(" FOR UPDATE SKIP LOCKED", "") + ") RETURNING " + matchColumns
	var rows []matchRow
	run := func(tx *gorm.DB) (err error) {
		rows, err = scanAll(tx.Raw(claim, micros(now.Add(lease)), micros(now), limit), (*matchRow).fields)
		return err
	}
	var err error
	if s.db.postgres {
		err = s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL enable_bitmapscan = off").Error; err != nil {
				return err
			}
			return run(tx)
		})
	} else {
		err = run(s.db.with(ctx))
	}
	if err != nil {
		return nil, translate(err, "match")
	}
	return convert(rows, matchRow.match), nil
}
