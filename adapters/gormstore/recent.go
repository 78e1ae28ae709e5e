package gormstore

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// The window of recent posts (recent_posts, migration 26), the phrases
// waiting to be filled from it (recent_backfills), and the sets of
// matches archived by applying a phrase's filters (filter_archives).
//
// On SQLite the text index is recent_words, an FTS4 table over the
// posts' words, one partition per owner (lid); posts join it a batch at
// a time after they are kept (IndexRecent), and a search reads the few
// posts not indexed yet directly. On Postgres each post's search
// document is made as it is kept, in the same INSERT.

// RecentStore keeps the window of recent posts and the phrases waiting
// to be filled from it.
type RecentStore struct{ db *DB }

var _ ports.RecentStore = (*RecentStore)(nil)

// NewRecentStore returns the recent-post store of db.
func NewRecentStore(db *DB) *RecentStore { return &RecentStore{db: db} }

// recentColumns are the columns a search reads, of the row r, in the
// order of recentRow.fields.
const recentColumns = "r.id, r.owner_id, r.platform, r.community, r.external_id, r.author, r.title, r.body, r.url, " +
	"r.likes, r.comments, r.posted_at, r.seen_at"

type recentRow struct {
	ID                                               int64
	OwnerID, Platform, Community, ExternalID, Author string
	Title                                            *string
	Body, URL                                        string
	Likes, Comments, PostedAt, SeenAt                int64
}

func (r *recentRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.Platform, &r.Community, &r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL,
		&r.Likes, &r.Comments, &r.PostedAt, &r.SeenAt}
}

func (r *recentRow) post() core.RecentPost {
	p := core.RecentPost{Seq: r.ID, OwnerID: r.OwnerID, Platform: core.Platform(r.Platform), Community: r.Community,
		SeenAt: fromMicros(r.SeenAt), Post: core.Post{ExternalID: r.ExternalID, Author: r.Author, Text: r.Body, URL: r.URL,
			Likes: int(r.Likes), Comments: int(r.Comments), PostedAt: fromMicros(r.PostedAt)}}
	if r.Title != nil {
		p.Post.Title = *r.Title
	}
	return p
}

// lid is the owner's partition of the SQLite text index: a hash, since
// the index wants a number. Two owners that share one still find only
// their own posts, which the search selects by owner too.
func lid(ownerID string) int64 {
	h := fnv.New32a()
	h.Write([]byte(ownerID))
	return int64(h.Sum32() & 0x7fffffff)
}

// keepRecent adds the posts of batch that fresh names (by index), and
// that ask to be kept, to the owner's window, within SaveMatches's
// transaction.
func (db *DB) keepRecent(tx *gorm.DB, ownerID string, platform core.Platform, batch []ports.PostMatches, fresh func(i int) bool) error {
	n := 12 // owner_id to seen_at
	if !db.postgres {
		n++ // lid
	}
	one := "(" + strings.Repeat("?, ", n) + db.pick("to_tsvector('simple', ?)", "?") + ")"
	var rows []string
	var args []any
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := tx.Exec(`INSERT INTO recent_posts (owner_id, platform, external_id, community, author, title, body, url,
			likes, comments, posted_at, seen_at, `+db.pick("", "lid, ")+`words) VALUES `+strings.Join(rows, ", "), args...).Error
		rows, args = rows[:0], args[:0]
		return err
	}
	for i, pm := range batch {
		if pm.Keep == nil || !fresh(i) {
			continue
		}
		p := pm.Post
		var title *string
		if p.Title != "" {
			title = &p.Title
		}
		args = append(args, ownerID, string(platform), p.ExternalID, pm.Keep.Community, p.Author, title, core.Cut(p.Text, core.MaxPostText),
			p.URL, p.Likes, p.Comments, micros(p.PostedAt), micros(pm.Keep.SeenAt))
		if !db.postgres {
			args = append(args, lid(ownerID))
		}
		args = append(args, pm.Keep.Words)
		rows = append(rows, one)
		if len(rows) == 500 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// RecentPosts implements ports.RecentStore. On SQLite the posts past the
// last one indexed are read first, as they are the newest, then the
// index's hits in the owner's partition at or before it; the same
// watermark bounds both, so no post is passed twice or left out while
// the index grows.
func (s *RecentStore) RecentPosts(ctx context.Context, q ports.RecentQuery, each func(core.RecentPost) bool) (bool, error) {
	db := s.db.with(ctx)
	where := "r.owner_id = ? AND r.platform = ? AND r.community = ?"
	args := []any{q.OwnerID, string(q.Platform), q.Community}
	left := q.Limit
	// walk passes the rows of the query to each, counting them against
	// the limit; it reports whether the walk should stop, and more.
	walk := func(query string, args ...any) (stop, more bool, err error) {
		rows, err := db.Raw(query+" LIMIT ?", append(args, left+1)...).Rows()
		if err != nil {
			return true, false, err
		}
		defer rows.Close()
		var r recentRow
		dest := r.fields()
		for rows.Next() {
			if left == 0 {
				return true, true, nil
			}
			if err := rows.Scan(dest...); err != nil {
				return true, false, err
			}
			left--
			if !each(r.post()) {
				return true, false, nil
			}
		}
		return false, false, rows.Err()
	}
	var stop, more bool
	var err error
	switch {
	case len(q.Words) == 0:
		_, more, err = walk("SELECT "+recentColumns+" FROM recent_posts r WHERE "+where+" ORDER BY r.id DESC", args...)
	case s.db.postgres:
		// A phrase whose words make no lexeme would find nothing: read
		// every post instead.
		var lexemes int
		if err := db.Raw("SELECT numnode(phraseto_tsquery('simple', ?))", strings.Join(q.Words, " ")).Scan(&lexemes).Error; err != nil {
			return false, translate(err, "recent post")
		}
		if lexemes > 0 {
			where += " AND r.words @@ phraseto_tsquery('simple', ?)"
			args = append(args, strings.Join(q.Words, " "))
		}
		_, more, err = walk("SELECT "+recentColumns+" FROM recent_posts r WHERE "+where+" ORDER BY r.id DESC", args...)
	default:
		var mark int64
		if err := db.Raw("SELECT last_id FROM recent_index").Scan(&mark).Error; err != nil {
			return false, translate(err, "recent post")
		}
		stop, more, err = walk("SELECT "+recentColumns+" FROM recent_posts r WHERE "+where+" AND r.id > ? ORDER BY r.id DESC",
			append(args, mark)...)
		if stop || err != nil {
			break
		}
		// Each word quoted: a phrase of them, in which no word is an
		// operator. They hold letters, digits and marks only.
		match := `"` + strings.Join(q.Words, " ") + `"`
		// CROSS JOIN keeps the index the outer loop: its hits come
		// newest first (order=DESC) and the walk stops at the limit.
		_, more, err = walk("SELECT "+recentColumns+` FROM recent_words w CROSS JOIN recent_posts r ON r.id = w.docid
			WHERE recent_words MATCH ? AND w.lid = ? AND w.docid <= ? AND `+where+" ORDER BY w.docid DESC",
			append([]any{match, lid(q.OwnerID), mark}, args...)...)
	}
	return more, translate(err, "recent post")
}

// IndexRecent implements ports.RecentStore: on SQLite, the next posts
// past the last one indexed join the index in one transaction, which
// moves the mark; Postgres indexes a post as it is kept.
func (s *RecentStore) IndexRecent(ctx context.Context, limit int) (int, error) {
	if s.db.postgres {
		return 0, nil
	}
	n := 0
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var mark int64
		if err := tx.Raw("SELECT last_id FROM recent_index").Scan(&mark).Error; err != nil {
			return err
		}
		ids, err := scanAll(tx.Raw("SELECT id FROM recent_posts WHERE id > ? ORDER BY id LIMIT ?", mark, limit),
			func(v *int64) []any { return []any{v} })
		if err != nil || len(ids) == 0 {
			return err
		}
		last := ids[len(ids)-1]
		if err := tx.Exec(`INSERT INTO recent_words (docid, words, lid)
			SELECT id, words, lid FROM recent_posts WHERE id > ? AND id <= ?`, mark, last).Error; err != nil {
			return err
		}
		n = len(ids)
		return tx.Exec("UPDATE recent_index SET last_id = ?", last).Error
	})
	return n, translate(err, "recent post")
}

// TrimRecent implements ports.RecentStore. An owner's posts are kept
// in id order, so their oldest beyond perOwner lie at or below the id
// perOwner places from their newest. Each delete is one statement of at
// most limit rows, so a trim holds SQLite's write lock briefly.
func (s *RecentStore) TrimRecent(ctx context.Context, before time.Time, perOwner, limit int) (int, error) {
	db := s.db.with(ctx)
	res := db.Exec("DELETE FROM recent_posts WHERE id IN (SELECT id FROM recent_posts WHERE seen_at < ? ORDER BY seen_at LIMIT ?)",
		micros(before), limit)
	if res.Error != nil {
		return 0, translate(res.Error, "recent post")
	}
	n := int(res.RowsAffected)
	if perOwner <= 0 || n >= limit {
		return n, nil
	}
	owners, err := scanAll(db.Raw("SELECT id FROM owners ORDER BY id"), func(v *string) []any { return []any{v} })
	if err != nil {
		return n, translate(err, "recent post")
	}
	for _, o := range owners {
		bound, err := scanAll(db.Raw("SELECT id FROM recent_posts WHERE owner_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?", o, perOwner),
			func(v *int64) []any { return []any{v} })
		if err != nil {
			return n, translate(err, "recent post")
		}
		if len(bound) == 0 {
			continue
		}
		res := db.Exec(`DELETE FROM recent_posts WHERE id IN (
			SELECT id FROM recent_posts WHERE owner_id = ? AND id <= ? ORDER BY id LIMIT ?)`, o, bound[0], limit-n)
		if res.Error != nil {
			return n, translate(res.Error, "recent post")
		}
		if n += int(res.RowsAffected); n >= limit {
			break
		}
	}
	return n, nil
}

// RequestBackfill implements ports.RecentStore.
func (s *RecentStore) RequestBackfill(ctx context.Context, phraseID string, at time.Time) error {
	err := s.db.with(ctx).Exec("INSERT INTO recent_backfills (phrase_id, requested_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
		phraseID, micros(at)).Error
	if errors.Is(constraint(err), gorm.ErrForeignKeyViolated) {
		return core.Errorf(core.KindNotFound, "phrase not found")
	}
	return translate(err, "phrase")
}

// Backfills implements ports.RecentStore.
func (s *RecentStore) Backfills(ctx context.Context, limit int) ([]core.Phrase, error) {
	return list(s.db.with(ctx).Table("phrases").Select("phrases.*").
		Joins("JOIN recent_backfills b ON b.phrase_id = phrases.id").Order("b.requested_at, phrases.id").Limit(limit),
		"phrase", phraseRow.phrase)
}

// SaveBackfill implements ports.RecentStore, as SaveMatches stores a
// batch: the owner's stamp orders the new matches after every other.
func (s *RecentStore) SaveBackfill(ctx context.Context, p core.Phrase, posts []core.RecentPost) ([]core.Match, error) {
	var out []core.Match
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&phraseRow{}).Where("id = ? AND owner_id = ?", p.ID, p.OwnerID).Count(&n).Error; err != nil || n == 0 {
			return err
		}
		ids := make([]string, 0, len(posts))
		for _, rp := range posts {
			ids = append(ids, rp.Post.ExternalID)
		}
		had := map[string]bool{}
		for chunk := range chunks(ids, 500) {
			known, err := scanAll(tx.Raw("SELECT external_id FROM matches WHERE owner_id = ? AND phrase_id = ? AND platform = ? AND external_id IN ?",
				p.OwnerID, p.ID, string(p.Platform), chunk), func(v *string) []any { return []any{v} })
			if err != nil {
				return err
			}
			for _, id := range known {
				had[id] = true
			}
		}
		ph := phraseOfMatch{ID: p.ID, Phrase: p.Phrase, Platform: string(p.Platform)}
		var rows []matchRow
		for i := len(posts) - 1; i >= 0; i-- {
			rp := posts[i]
			if had[rp.Post.ExternalID] || rp.OwnerID != p.OwnerID || rp.Platform != p.Platform {
				continue
			}
			had[rp.Post.ExternalID] = true
			r := newMatchRow(p.OwnerID, ph, rp.Post)
			r.Backfilled = 1
			rows = append(rows, r)
		}
		if len(rows) > 0 {
			next, err := stamp(tx, p.OwnerID, int64(len(rows)), tx.NowFunc().UnixMicro())
			if err != nil {
				return err
			}
			for i := range rows {
				rows[i].CreatedUs = next + int64(i)
			}
			if err := insertMatches(tx, rows); err != nil {
				return err
			}
			if err := tx.Exec("UPDATE phrases SET matches = matches + ? WHERE id = ?", len(rows), p.ID).Error; err != nil {
				return err
			}
			out = convert(rows, matchRow.match)
		}
		return tx.Exec("DELETE FROM recent_backfills WHERE phrase_id = ?", p.ID).Error
	})
	if err != nil {
		return nil, translate(err, "match")
	}
	return out, nil
}

// EndBackfill implements ports.RecentStore.
func (s *RecentStore) EndBackfill(ctx context.Context, phraseID string) error {
	return translate(s.db.with(ctx).Exec("DELETE FROM recent_backfills WHERE phrase_id = ?", phraseID).Error, "phrase")
}

// chunks yields xs in runs of at most n.
func chunks[T any](xs []T, n int) func(yield func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(xs) > 0 {
			k := min(n, len(xs))
			if !yield(xs[:k]) {
				return
			}
			xs = xs[k:]
		}
	}
}
