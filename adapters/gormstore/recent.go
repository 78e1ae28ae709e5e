package gormstore

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// RecentStore keeps the window of recent posts (recent_posts, migration
// 26) and the phrases waiting to be filled from it (recent_backfills).
// Ingest writes a post's row alone. Its words join the text index a
// batch at a time (Unindexed, IndexRecent): on SQLite recent_words, an
// FTS4 table with one partition per owner (lid), the posts up to
// recent_index.last_id in it; on Postgres the row's words document, NULL
// until then. A search reads the posts not indexed yet directly.
type RecentStore struct{ db *DB }

var _ ports.RecentStore = (*RecentStore)(nil)

func NewRecentStore(db *DB) *RecentStore { return &RecentStore{db: db} }

// recentColumns are the columns a search reads, of the row r, in the
// order of recentRow.fields.
const recentColumns = "r.id, r.owner_id, r.platform, r.community, r.seen_at, r.post"

type recentRow struct {
	ID                           int64
	OwnerID, Platform, Community string
	SeenAt                       int64
	Post                         []byte
}

func (r *recentRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.Platform, &r.Community, &r.SeenAt, &r.Post}
}

// recentPostJSON is a kept post's own fields as the post column holds them.
type recentPostJSON struct {
	ID       string `json:"id"`
	Author   string `json:"author"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	URL      string `json:"url"`
	Likes    int    `json:"likes"`
	Comments int    `json:"comments"`
	Posted   int64  `json:"posted"`
	// Bounds is core.RecentPost.Bounds, left out for a post of one part:
	// a post kept before it was is read as one part, as it was kept.
	Bounds string `json:"bounds,omitempty"`
}

func (r *recentRow) post() (core.RecentPost, error) {
	var p recentPostJSON
	if err := json.Unmarshal(r.Post, &p); err != nil {
		return core.RecentPost{}, err
	}
	return core.RecentPost{Seq: r.ID, OwnerID: r.OwnerID, Platform: core.Platform(r.Platform), Community: r.Community,
		SeenAt: fromMicros(r.SeenAt), Post: core.Post{ExternalID: p.ID, Author: p.Author, Title: p.Title, Text: p.Text, URL: p.URL,
			Likes: p.Likes, Comments: p.Comments, PostedAt: fromMicros(p.Posted)}, Bounds: p.Bounds}, nil
}

// lid is the owner's number on SQLite: the key of the owner's index and
// partition of the text index, a hash of the id, which the index wants
// as a number and finds faster than the id. Two owners that share one
// still see only their own posts: every read selects the owner too.
func lid(ownerID string) int64 {
	h := fnv.New32a()
	h.Write([]byte(ownerID))
	return int64(h.Sum32() & 0x7fffffff)
}

// ownerIs is the condition on the row alias that selects the owner's
// posts through the owner's index, and its arguments.
func (db *DB) ownerIs(alias, ownerID string) (string, []any) {
	if db.postgres {
		return alias + ".owner_id = ?", []any{ownerID}
	}
	return alias + ".lid = ? AND " + alias + ".owner_id = ?", []any{lid(ownerID), ownerID}
}

// keepRecent adds the posts of batch that fresh names (by index), and
// that ask to be kept, to the owner's window, within SaveMatches's
// transaction: one statement for each community and time seen (a batch
// has one of each, mostly), taking the posts as one JSON array stored
// element by element. A statement is prepared anew in each transaction,
// so a short one costs little whatever the batch; one that took each
// value apart would cost the database as much again as the row.
func (db *DB) keepRecent(tx *gorm.DB, ownerID string, platform core.Platform, batch []ports.PostMatches, fresh func(i int) bool) error {
	type group struct {
		community string
		seenAt    int64
		posts     []recentPostJSON
	}
	var groups []group
	for i, pm := range batch {
		if pm.Keep == nil || !fresh(i) {
			continue
		}
		seenAt := micros(pm.Keep.SeenAt)
		k := slices.IndexFunc(groups, func(g group) bool { return g.community == pm.Keep.Community && g.seenAt == seenAt })
		if k < 0 {
			k, groups = len(groups), append(groups, group{community: pm.Keep.Community, seenAt: seenAt})
		}
		p := pm.Post
		groups[k].posts = append(groups[k].posts, recentPostJSON{ID: p.ExternalID, Author: p.Author, Title: p.Title,
			Text: core.Cut(p.Text, core.MaxPostText), URL: p.URL, Likes: p.Likes, Comments: p.Comments, Posted: micros(p.PostedAt), Bounds: pm.Keep.Bounds})
	}
	for _, g := range groups {
		list, err := json.Marshal(g.posts)
		if err != nil {
			return err
		}
		if db.postgres {
			err = tx.Exec(`INSERT INTO recent_posts (owner_id, platform, community, seen_at, post)
				SELECT ?, ?, ?, ?, CAST(j AS text) FROM json_array_elements(CAST(? AS json)) AS j`,
				ownerID, string(platform), g.community, g.seenAt, string(list)).Error
		} else {
			err = tx.Exec(`INSERT INTO recent_posts (owner_id, lid, platform, community, seen_at, post)
				SELECT ?, ?, ?, ?, ?, value FROM json_each(?)`, ownerID, lid(ownerID), string(platform), g.community, g.seenAt, string(list)).Error
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pgHolds is the condition on Postgres that an indexed post r may hold
// the phrase (the argument, three times). A text search document keeps
// at most 255 places of one word (PostgreSQL's "Limitations" of text
// search), so a phrase met after a word of it came 255 times is not
// where the document places its words: a post of a script written
// without spaces, every character a word, or one repeating a common
// word. Such a post is passed when it holds the phrase's words at all,
// and the matcher decides; the GIN index finds the posts holding them.
// Looking through a document's words costs, so only a post long enough
// is looked through: 255 times one word take at least 508 bytes of
// title and text (a byte each, and a byte between two of one part),
// and the post's JSON adds its field names.
const pgHolds = `r.words @@ plainto_tsquery('simple', ?) AND (r.words @@ phraseto_tsquery('simple', ?)
	OR octet_length(r.post) > 500 AND EXISTS (SELECT 1 FROM unnest(r.words) AS u WHERE cardinality(u.positions) >= 255
		AND u.lexeme = ANY (tsvector_to_array(to_tsvector('simple', ?)))))`

// RecentPosts implements ports.RecentStore.
func (s *RecentStore) RecentPosts(ctx context.Context, q ports.RecentQuery, each func(core.RecentPost) bool) (bool, error) {
	db := s.db.with(ctx)
	where, args := s.db.ownerIs("r", q.OwnerID)
	where += " AND r.platform = ? AND r.community = ?"
	args = append(args, string(q.Platform), q.Community)
	left := q.Limit
	// passed are the posts the first walk passed, when a second walk may
	// meet them again: on Postgres a post indexed between the two walks.
	var passed map[int64]bool
	// walk passes the rows of the query to each, counting them against
	// the limit; it reports whether the walk should stop, and more. The
	// posts passed already may come again and are read past, so they
	// take no room of the limit.
	walk := func(query string, args ...any) (stop, more bool, err error) {
		rows, err := db.Raw(query+" LIMIT ?", append(args, left+1+len(passed))...).Rows()
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
			if passed != nil {
				if passed[r.ID] {
					continue
				}
				passed[r.ID] = true
			}
			p, err := r.post()
			if err != nil {
				return true, false, err
			}
			left--
			if !each(p) {
				return true, false, nil
			}
		}
		return false, false, rows.Err()
	}
	all := "SELECT " + recentColumns + " FROM recent_posts r WHERE " + where
	phrase := strings.Join(q.Words, " ")
	if s.db.postgres && len(q.Words) > 0 {
		// Words that make no lexeme would find nothing: read every post.
		var lexemes int
		if err := db.Raw("SELECT numnode(phraseto_tsquery('simple', ?))", phrase).Scan(&lexemes).Error; err != nil {
			return false, translate(err, "recent post")
		}
		if lexemes == 0 {
			q.Words = nil
		}
	}
	var stop, more bool
	var err error
	switch {
	case len(q.Words) == 0:
		_, more, err = walk(all+" ORDER BY r.id DESC", args...)
	case s.db.postgres:
		passed = map[int64]bool{}
		if stop, more, err = walk(all+" AND r.words IS NULL ORDER BY r.id DESC", args...); !stop && err == nil {
			_, more, err = walk(all+" AND "+pgHolds+" ORDER BY r.id DESC", append(args, phrase, phrase, phrase)...)
		}
	default:
		// One mark bounds both walks, so no post is passed twice or left
		// out while the index grows.
		var mark int64
		if err := db.Raw("SELECT last_id FROM recent_index").Scan(&mark).Error; err != nil {
			return false, translate(err, "recent post")
		}
		// The words quoted make a phrase in which none is an operator:
		// they hold letters, digits and marks only. CROSS JOIN keeps the
		// index the outer loop: its hits come newest first (order=DESC)
		// and the walk stops at the limit.
		if stop, more, err = walk(all+" AND r.id > ? ORDER BY r.id DESC", append(args, mark)...); !stop && err == nil {
			_, more, err = walk("SELECT "+recentColumns+` FROM recent_words w CROSS JOIN recent_posts r ON r.id = w.docid
				WHERE recent_words MATCH ? AND w.lid = ? AND w.docid <= ? AND `+where+" ORDER BY w.docid DESC",
				append([]any{`"` + phrase + `"`, lid(q.OwnerID), mark}, args...)...)
		}
	}
	return more, translate(err, "recent post")
}

// Unindexed implements ports.RecentStore.
func (s *RecentStore) Unindexed(ctx context.Context, limit int) ([]core.RecentPost, error) {
	q := "SELECT " + recentColumns + " FROM recent_posts r WHERE " +
		s.db.pick("r.words IS NULL", "r.id > (SELECT last_id FROM recent_index)") + " ORDER BY r.id LIMIT ?"
	rows, err := scanAll(s.db.with(ctx).Raw(q, limit), (*recentRow).fields)
	if err != nil {
		return nil, translate(err, "recent post")
	}
	out := make([]core.RecentPost, len(rows))
	for i := range rows {
		if out[i], err = rows[i].post(); err != nil {
			return nil, translate(err, "recent post")
		}
	}
	return out, nil
}

// IndexRecent implements ports.RecentStore. On SQLite the mark moves
// over the posts indexed up to the first post past it that was not
// given: a post is in recent_words exactly when it is at or below the
// mark.
func (s *RecentStore) IndexRecent(ctx context.Context, words []ports.RecentWords) error {
	if len(words) == 0 {
		return nil
	}
	given := make(map[int64]string, len(words))
	var top int64
	for _, w := range words {
		given[w.Seq] = w.Words
		top = max(top, w.Seq)
	}
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if s.db.postgres {
			list, _ := json.Marshal(words)
			return tx.Exec(`UPDATE recent_posts r SET words = to_tsvector('simple', j->>'Words')
				FROM json_array_elements(CAST(? AS json)) AS j WHERE r.id = CAST(j->>'Seq' AS BIGINT) AND r.words IS NULL`,
				string(list)).Error
		}
		var mark int64
		if err := tx.Raw("SELECT last_id FROM recent_index").Scan(&mark).Error; err != nil {
			return err
		}
		ids, err := column[int64](tx.Raw("SELECT id FROM recent_posts WHERE id > ? AND id <= ? ORDER BY id", mark, top))
		if err != nil {
			return err
		}
		var in []ports.RecentWords
		next := mark
		for _, id := range ids {
			w, ok := given[id]
			if !ok {
				break
			}
			in, next = append(in, ports.RecentWords{Seq: id, Words: w}), id
		}
		if len(in) == 0 {
			return nil
		}
		list, _ := json.Marshal(in)
		if err := tx.Exec(`INSERT INTO recent_words (docid, words, lid)
			SELECT r.id, j.value->>'$.Words', r.lid FROM json_each(?) AS j JOIN recent_posts r ON r.id = j.value->>'$.Seq'`,
			string(list)).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE recent_index SET last_id = ?", next).Error
	})
	return translate(err, "recent post")
}

// TrimRecent implements ports.RecentStore. Posts are kept in id order,
// so the oldest are the lowest ids: those seen before before are read
// from the start of the table up to the first that is not, and an
// owner's oldest beyond perOwner lie at or below the id perOwner places
// from their newest. Each delete is one statement of at most limit rows,
// so a trim holds SQLite's write lock briefly.
func (s *RecentStore) TrimRecent(ctx context.Context, before time.Time, perOwner, limit int) (int, error) {
	db, n := s.db.with(ctx), 0
	del := func(query string, args ...any) error {
		res := s.db.write(ctx).Exec(query, args...)
		n += int(res.RowsAffected)
		return translate(res.Error, "recent post")
	}
	type head struct{ ID, SeenAt int64 }
	oldest, err := scanAll(db.Raw("SELECT id, seen_at FROM recent_posts ORDER BY id LIMIT ?", limit),
		func(h *head) []any { return []any{&h.ID, &h.SeenAt} })
	if err != nil {
		return 0, translate(err, "recent post")
	}
	var last int64
	for _, h := range oldest {
		if h.SeenAt >= micros(before) {
			break
		}
		last = h.ID
	}
	if last > 0 {
		if err := del("DELETE FROM recent_posts WHERE id <= ?", last); err != nil {
			return 0, err
		}
	}
	if perOwner <= 0 || n >= limit {
		return n, nil
	}
	owners, err := column[string](db.Raw("SELECT id FROM owners ORDER BY id"))
	if err != nil {
		return n, translate(err, "recent post")
	}
	for _, o := range owners {
		where, args := s.db.ownerIs("r", o)
		bound, err := column[int64](db.Raw("SELECT r.id FROM recent_posts r WHERE "+where+" ORDER BY r.id DESC LIMIT 1 OFFSET ?",
			append(args, perOwner)...))
		if err != nil {
			return n, translate(err, "recent post")
		}
		if len(bound) == 0 {
			continue
		}
		if err := del("DELETE FROM recent_posts WHERE id IN (SELECT r.id FROM recent_posts r WHERE "+where+
			" AND r.id <= ? ORDER BY r.id LIMIT ?)", append(args, bound[0], limit-n)...); err != nil || n >= limit {
			return n, err
		}
	}
	return n, nil
}

// RequestBackfill implements ports.RecentStore.
func (s *RecentStore) RequestBackfill(ctx context.Context, phraseID string, at time.Time) error {
	err := s.db.write(ctx).Exec("INSERT INTO recent_backfills (phrase_id, requested_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
		phraseID, micros(at)).Error
	if foreignKey(err) {
		return core.Errorf(core.KindNotFound, "phrase not found")
	}
	return translate(err, "phrase")
}

// Backfills implements ports.RecentStore.
func (s *RecentStore) Backfills(ctx context.Context, perOwner, limit int) ([]core.Phrase, error) {
	db := s.db.with(ctx)
	// Each request numbered within its owner's, oldest first, so one
	// statement keeps each owner's oldest perOwner and reads past the rest.
	ranked := db.Table("recent_backfills r").Select("r.phrase_id, r.requested_at, " +
		"ROW_NUMBER() OVER (PARTITION BY p.owner_id ORDER BY r.requested_at, r.phrase_id) AS n").
		Joins("JOIN phrases p ON p.id = r.phrase_id")
	return list(db.Table("phrases").Select("phrases.*").
		Joins("JOIN (?) b ON b.phrase_id = phrases.id", ranked).Where("b.n <= ?", perOwner).
		Order("b.requested_at, phrases.id").Limit(limit),
		"phrase", phraseRow.phrase)
}

// SaveBackfill implements ports.RecentStore, as SaveMatches stores a
// batch: the owner's stamp orders the new matches after every other.
func (s *RecentStore) SaveBackfill(ctx context.Context, p core.Phrase, posts []core.RecentPost) ([]core.Match, error) {
	var out []core.Match
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		// The owner's row first, as every change of a phrase takes it
		// (lockPhrases): the phrase cannot change or go until the fill
		// commits, and one gone before is not found.
		if err := lockPhrases(tx, p.OwnerID); err != nil {
			return err
		}
		// Ending the request claims it: a fill listed before another
		// replica's served it stores nothing, or the phrase holds two.
		res := tx.Exec("DELETE FROM recent_backfills WHERE phrase_id = ?", p.ID)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		var found []phraseRow
		if err := tx.Select("id").Where("id = ? AND owner_id = ?", p.ID, p.OwnerID).Find(&found).Error; err != nil || len(found) == 0 {
			return err
		}
		ids := convert(posts, func(rp core.RecentPost) string { return rp.Post.ExternalID })
		had := map[string]bool{}
		for chunk := range slices.Chunk(ids, 500) {
			known, err := column[string](tx.Raw("SELECT external_id FROM matches WHERE owner_id = ? AND phrase_id = ? AND platform = ? AND external_id IN ?",
				p.OwnerID, p.ID, string(p.Platform), chunk))
			if err != nil {
				return err
			}
			for _, id := range known {
				had[id] = true
			}
		}
		ph := phraseRow{ID: p.ID, Phrase: p.Phrase, Platform: string(p.Platform)}
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
		return nil
	})
	if err != nil {
		return nil, translate(err, "match")
	}
	return out, nil
}

// EndBackfill implements ports.RecentStore.
func (s *RecentStore) EndBackfill(ctx context.Context, phraseID string) error {
	return translate(s.db.write(ctx).Exec("DELETE FROM recent_backfills WHERE phrase_id = ?", phraseID).Error, "phrase")
}
