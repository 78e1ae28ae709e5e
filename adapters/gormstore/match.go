package gormstore

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// matchRow is a row of matches; lease_until and emailed_at are the
// scorer's and the alerts' (score.go, alert.go).
type matchRow struct {
	ID                                  string `gorm:"primaryKey"`
	OwnerID, PhraseID, Phrase, Platform string
	ExternalID, Author, Body, URL       string
	Title, Intent, Reason               *string
	Score                               *int
	Likes, Comments                     int64
	CreatedUs, ScoredAt, PostedAt       int64 // µs
	Backfilled                          int   // 1 when found in the recent posts (recent.go)
}

func (matchRow) TableName() string { return "matches" }

// matchColumns are the columns of matchRow in the order of fields.
const matchColumns = "id, owner_id, phrase_id, phrase, platform, created_us, score, intent, reason, scored_at, " +
	"external_id, author, title, body, url, likes, comments, posted_at, backfilled"

func (r *matchRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.PhraseID, &r.Phrase, &r.Platform, &r.CreatedUs, &r.Score, &r.Intent, &r.Reason, &r.ScoredAt,
		&r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL, &r.Likes, &r.Comments, &r.PostedAt, &r.Backfilled}
}

// pageColumns are matchColumns less owner_id and scored_at: the SQLite
// driver pays cgo calls per column of each row, so a page, the API's
// hottest read, reads no spare column.
var pageColumns = strings.NewReplacer("owner_id, ", "", "scored_at, ", "").Replace(matchColumns)

func (r *matchRow) pageFields() []any {
	f := r.fields()
	return append(append(f[:1], f[2:9]...), f[10:]...)
}

func (r matchRow) match() core.Match {
	m := core.Match{
		ID: r.ID, OwnerID: r.OwnerID, PhraseID: r.PhraseID, Phrase: r.Phrase,
		Platform: core.Platform(r.Platform), CreatedAt: fromMicros(r.CreatedUs),
		Post: core.Post{
			ExternalID: r.ExternalID, Author: r.Author, Title: deref(r.Title), Text: r.Body, URL: r.URL,
			Likes: int(r.Likes), Comments: int(r.Comments), PostedAt: fromMicros(r.PostedAt),
		},
		Backfilled: r.Backfilled != 0,
	}
	if r.Score != nil {
		m.Score = &core.Score{Value: *r.Score, Intent: core.Intent(deref(r.Intent)), Reason: deref(r.Reason)}
	}
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// MatchStore keeps posts and matches; the scorer's side is in score.go.
type MatchStore struct{ db *DB }

func NewMatchStore(db *DB) *MatchStore { return &MatchStore{db: db} }

// SaveMatches implements ports.MatchStore in a handful of statements for
// any batch: an insert of the posts that returns the new ones, one of
// their matches. An owner's matches get created_us increasing in commit
// order, so the API's cursors never skip one (stamp).
func (s *MatchStore) SaveMatches(ctx context.Context, ownerID string, platform core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	var res ports.SaveResult
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		now := tx.NowFunc().UnixMicro()
		if len(batch) == 0 {
			_, err := lockOwner(tx, ownerID)
			return err
		}
		// Posts are inserted in one order, so two batches sharing some
		// never each hold one the other waits for (a deadlock on Postgres).
		list, _ := json.Marshal(slices.Sorted(slices.Values(convert(batch, func(pm ports.PostMatches) string { return pm.Post.ExternalID }))))
		fresh, err := column[string](tx.Raw(`INSERT INTO posts (owner_id, platform, external_id, created_at)
			SELECT ?, ?, value, ? FROM `+s.db.jsonValues()+
			` WHERE true ON CONFLICT DO NOTHING RETURNING external_id`, ownerID, string(platform), now, string(list)))
		if foreignKey(err) {
			return gorm.ErrRecordNotFound // the owner is missing
		} else if err != nil {
			return err
		}
		res.Saved, res.Known = len(fresh), len(batch)-len(fresh)
		isFresh := make(map[string]bool, len(fresh))
		for _, id := range fresh {
			isFresh[id] = true
		}
		// A new post's first copy that asks to be kept is kept (keepRecent
		// asks only of those); its first copy makes its matches.
		unkept := maps.Clone(isFresh)
		if err := s.db.keepRecent(tx, ownerID, platform, batch, func(i int) bool {
			id := batch[i].Post.ExternalID
			ok := unkept[id]
			delete(unkept, id)
			return ok
		}); err != nil {
			return err
		}
		var firsts []ports.PostMatches // each new post's first copy: later ones are known
		var named []string             // the phrases they name
		for _, pm := range batch {
			if isFresh[pm.Post.ExternalID] {
				delete(isFresh, pm.Post.ExternalID)
				firsts, named = append(firsts, pm), append(named, pm.PhraseIDs...)
			}
		}
		if len(named) == 0 {
			return nil
		}
		// Stamped for every phrase named, then the phrases read: a change
		// or a deletion of one takes the owner's row first (lockPhrases),
		// so none changes under the batch, and one gone before is not read
		// (its match's created_us is left unused). Only those named are
		// read: an owner may have thousands.
		first, err := stamp(tx, ownerID, int64(len(named)), now)
		if err != nil {
			return err
		}
		ids, _ := json.Marshal(named)
		var ps []phraseRow
		if err := tx.Select("id, phrase, platform").Where("owner_id = ? AND platform = ? AND id IN (SELECT value FROM "+
			s.db.jsonValues()+")", ownerID, string(platform), string(ids)).Find(&ps).Error; err != nil {
			return err
		}
		phrases := make(map[string]phraseRow, len(ps))
		for _, p := range ps {
			phrases[p.ID] = p
		}
		var rows []matchRow
		counts := map[string]int64{}
		for _, pm := range firsts {
			for _, pid := range pm.PhraseIDs {
				ph, ok := phrases[pid]
				if !ok {
					continue // deleted, another owner's or another platform's
				}
				rows, counts[pid] = append(rows, newMatchRow(ownerID, ph, pm.Post)), counts[pid]+1
			}
		}
		if len(rows) == 0 {
			return nil
		}
		for i := range rows {
			rows[i].CreatedUs = first + int64(i)
		}
		if err := insertMatches(tx, rows); err != nil {
			return err
		}
		for pid, n := range counts {
			if err := tx.Model(&phraseRow{}).Where("id = ?", pid).Update("matches", gorm.Expr("matches + ?", n)).Error; err != nil {
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

// newMatchRow is the match of post p for phrase ph, without its created_us.
func newMatchRow(ownerID string, ph phraseRow, p core.Post) matchRow {
	r := matchRow{ID: newID(), OwnerID: ownerID, PhraseID: ph.ID, Phrase: ph.Phrase, Platform: ph.Platform,
		ExternalID: p.ExternalID, Author: p.Author, Body: core.Cut(p.Text, core.MaxPostText), URL: p.URL,
		Likes: int64(p.Likes), Comments: int64(p.Comments), PostedAt: micros(p.PostedAt)}
	if p.Title != "" {
		r.Title = &p.Title
	}
	return r
}

// stamp hands out n created_us values to the owner's new matches and
// returns the first: past the owner's last one and no earlier than now.
// The UPDATE's lock on the owner's row holds their next batch until this
// one commits, so a reader never meets a match committed after its read
// with a created_us below one it has seen.
func stamp(tx *gorm.DB, ownerID string, n, now int64) (int64, error) {
	last, err := column[int64](tx.Raw(`UPDATE owners SET last_match_us = CASE WHEN last_match_us + ? > ? THEN last_match_us + ? ELSE ? END
		WHERE id = ? RETURNING last_match_us`, n, now+n-1, n, now+n-1, ownerID))
	if err != nil || len(last) == 0 {
		return 0, cmp.Or(err, gorm.ErrRecordNotFound)
	}
	return last[0] - n + 1, nil
}

// insertMatches stores rows up to 1,000 a statement, well under SQLite's
// limit on bound values.
func insertMatches(tx *gorm.DB, rows []matchRow) error {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", strings.Count(matchColumns, ",")+1), ", ") + ")"
	for chunk := range slices.Chunk(rows, 1000) {
		var args []any
		for i := range chunk {
			args = append(args, chunk[i].fields()...)
		}
		values := strings.TrimSuffix(strings.Repeat(one+", ", len(chunk)), ", ")
		if err := tx.Exec("INSERT INTO matches ("+matchColumns+") VALUES "+values, args...).Error; err != nil {
			return err
		}
	}
	return nil
}

func (s *MatchStore) Match(ctx context.Context, ownerID, id string) (core.Match, error) {
	return one(s.db.with(ctx), "match", matchRow.match, "id = ? AND owner_id = ?", id, ownerID)
}

// Matches implements ports.MatchStore: a walk of the owner's index in
// created_us order; a search's is in search.go.
func (s *MatchStore) Matches(ctx context.Context, ownerID string, f ports.MatchFilter) ([]core.Match, bool, error) {
	if !f.Search.IsZero() {
		return s.searchMatches(ctx, ownerID, f)
	}
	q, args := "SELECT "+pageColumns+" FROM matches WHERE owner_id = ?", []any{ownerID}
	cond := func(use bool, c string, v any) {
		if use {
			q, args = q+" AND "+c, append(args, v)
		}
	}
	cond(f.Platform != "", "platform = ?", string(f.Platform))
	cond(f.MinScore >= 0, "score >= ?", f.MinScore)
	cond(!f.Before.IsZero(), "created_us < ?", micros(f.Before))
	rows, err := scanAll(s.db.pageReads(ctx).Raw(q+" ORDER BY created_us DESC LIMIT ?", append(args, f.Limit+1)...), (*matchRow).pageFields)
	if err != nil {
		return nil, false, translate(err, "match")
	}
	rows, more := page(rows, f.Limit)
	return convert(rows, func(r matchRow) core.Match {
		r.OwnerID = ownerID // not read
		return r.match()
	}), more, nil
}

// page cuts rows read with a limit of limit+1 to limit and says whether
// there were more.
func page[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}
