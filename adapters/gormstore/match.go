package gormstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

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
}

func (matchRow) TableName() string { return "matches" }

func (r matchRow) match() core.Match {
	m := core.Match{
		ID: r.ID, OwnerID: r.OwnerID, PhraseID: r.PhraseID, Phrase: r.Phrase,
		Platform: core.Platform(r.Platform), CreatedAt: fromMicros(r.CreatedUs),
		Post: core.Post{
			ExternalID: r.ExternalID, Author: r.Author, Text: r.Body, URL: r.URL,
			Likes: int(r.Likes), Comments: int(r.Comments), PostedAt: fromMicros(r.PostedAt),
		},
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

// MatchStore keeps posts and matches.
type MatchStore struct {
	db    *DB
	saves saveRounds // Postgres: batches of one owner stored together
}

var _ ports.MatchStore = (*MatchStore)(nil)

// NewMatchStore returns the match store of db.
func NewMatchStore(db *DB) *MatchStore {
	return &MatchStore{db: db, saves: saveRounds{waiting: map[string]*saveLine{}}}
}

// SaveMatches implements ports.MatchStore. A batch is a handful of
// statements however many posts it holds: posts go in with one
// multi-row insert that skips known ones and returns the new, and the
// matches with another. It is the hottest write, so it runs on
// database/sql with prepared statements rather than through gorm.
//
// Matches of one owner get strictly increasing created_us, in the order
// their transactions commit, which the API's cursors depend on (a reader
// paging by created_us never meets a match committed after its read
// with a created_us below one it has seen). stampMatches hands them out
// with one UPDATE of the owner's row, whose lock the transaction keeps
// until it commits, so the next batch of the owner stamps after this
// one is visible. That UPDATE comes last but for the matches' own
// insert and the phrase counters: the posts' insert and the reads run
// before it, outside the lock, and a batch with no new match takes no
// lock at all. On Postgres the batch is one statement, shared with the
// owner's other batches waiting meanwhile (saveMatchesPostgres).
func (s *MatchStore) SaveMatches(ctx context.Context, ownerID string, platform core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	if s.db.postgres && len(batch) > 0 {
		res, err := s.saveTogether(ctx, ownerID, platform, batch)
		if err != nil {
			return ports.SaveResult{}, translate(err, "match")
		}
		return res, nil
	}
	var res ports.SaveResult
	err := s.db.inTx(ctx, func(tx *tx) error {
		now := s.db.gorm.NowFunc().UnixMicro()
		// Later copies of a post within the batch are known already.
		first := make(map[string]int, len(batch))
		postRows := make([][]any, 0, len(batch))
		for i, pm := range batch {
			if _, dup := first[pm.Post.ExternalID]; dup {
				continue
			}
			first[pm.Post.ExternalID] = i
			postRows = append(postRows, []any{ownerID, string(platform), pm.Post.ExternalID, now})
		}
		if len(postRows) == 0 {
			return ownerExists(tx, ownerID)
		}
		fresh, err := insertReturning(tx, "posts", []string{"owner_id", "platform", "external_id", "created_at"}, postRows,
			"ON CONFLICT DO NOTHING RETURNING external_id")
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return sql.ErrNoRows // the owner is missing
		}
		if err != nil {
			return err
		}
		res.Saved = len(fresh)
		res.Known = len(batch) - res.Saved
		var matches []matchRow
		counts := map[string]int64{}
		var phrases map[string]phraseRow
		for i, pm := range batch {
			if !fresh[pm.Post.ExternalID] || first[pm.Post.ExternalID] != i || len(pm.PhraseIDs) == 0 {
				continue
			}
			if phrases == nil {
				if phrases, err = ownerPhrases(ctx, txQuerier{tx}, ownerID); err != nil {
					return err
				}
			}
			for _, pid := range pm.PhraseIDs {
				ph, ok := phrases[pid]
				if !ok || ph.Platform != string(platform) {
					continue // deleted meanwhile, another owner's or another platform's
				}
				matches = append(matches, newMatchRow(ownerID, ph, pm.Post, 0))
				counts[pid]++
			}
		}
		if len(matches) == 0 {
			return nil
		}
		if err := storeMatches(tx, ownerID, matches, counts, now); err != nil {
			return err
		}
		res.Matches = make([]core.Match, len(matches))
		for i, r := range matches {
			res.Matches[i] = r.match()
		}
		return nil
	})
	if err != nil {
		return ports.SaveResult{}, translate(err, "match")
	}
	return res, nil
}

// storeMatches stamps matches (see stampMatches), inserts them and adds
// them to their phrases' counts, statement by statement: SQLite's
// transaction holds the one write lock from its start anyway.
func storeMatches(tx *tx, ownerID string, matches []matchRow, counts map[string]int64, now int64) error {
	next, err := stampMatches(tx, ownerID, int64(len(matches)), now)
	if err != nil {
		return err
	}
	cols := append(slices.Clip(fixedColumns), "packed")
	rows := make([][]any, len(matches))
	for i := range matches {
		m := &matches[i]
		m.CreatedUs = next + int64(i)
		rows[i] = []any{m.ID, m.OwnerID, m.PhraseID, m.Phrase, m.Platform, m.CreatedUs, m.ExternalID, m.Author,
			m.Title, m.Body, m.URL, m.Likes, m.Comments, m.PostedAt, packRow(*m)}
	}
	if _, err := insertReturning(tx, "matches", cols, rows, ""); err != nil {
		return err
	}
	for pid, n := range counts {
		if _, err := tx.exec("UPDATE phrases SET matches = matches + ? WHERE id = ?", n, pid); err != nil {
			return err
		}
	}
	return nil
}

// stampMatches takes n created_us values for the owner's new matches and
// returns the first: past the owner's last one and no earlier than now.
// The UPDATE locks the owner's row until the transaction ends (SQLite's
// transaction is exclusive already), so batches of one owner stamp in
// the order they commit. A missing owner is sql.ErrNoRows.
func stampMatches(tx *tx, ownerID string, n, now int64) (int64, error) {
	greatest := "MAX"
	if tx.db.postgres {
		greatest = "GREATEST"
	}
	rows, err := tx.query("UPDATE owners SET last_match_us = "+greatest+"(last_match_us + ?, ?) WHERE id = ? RETURNING last_match_us",
		n, now+n-1, ownerID)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, tx.db.driverErr(err)
		}
		return 0, sql.ErrNoRows
	}
	var last int64
	if err := rows.Scan(&last); err != nil {
		return 0, err
	}
	return last - n + 1, tx.db.driverErr(rows.Close())
}

// ownerExists returns sql.ErrNoRows when the owner is missing: an empty
// batch writes nothing that would find out.
func ownerExists(tx *tx, ownerID string) error {
	var one int
	return tx.sql.QueryRowContext(tx.ctx, tx.db.dialect("SELECT 1 FROM owners WHERE id = ?"), ownerID).Scan(&one)
}

// insertReturning inserts rows with multi-row INSERTs (in chunks that stay
// under both databases' limits on bound values) and, when suffix holds a
// RETURNING clause of one column, returns the set of values it returned.
func insertReturning(tx *tx, table string, cols []string, rows [][]any, suffix string) (map[string]bool, error) {
	out := make(map[string]bool, len(rows))
	per := max(1, 30000/len(cols))
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		var q strings.Builder
		q.Grow(len(table) + 40 + len(cols)*12 + len(chunk)*(len(one)+1) + len(suffix))
		q.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
		args := make([]any, 0, len(chunk)*len(cols))
		for i, r := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString(one)
			args = append(args, r...)
		}
		q.WriteString(" " + suffix)
		if !strings.Contains(suffix, "RETURNING") {
			if _, err := tx.exec(q.String(), args...); err != nil {
				return nil, err
			}
			continue
		}
		rs, err := tx.query(q.String(), args...)
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var v string
			if err := rs.Scan(&v); err != nil {
				rs.Close()
				return nil, err
			}
			out[v] = true
		}
		if err := rs.Close(); err != nil {
			return nil, tx.db.driverErr(err)
		}
		if err := rs.Err(); err != nil {
			return nil, tx.db.driverErr(err)
		}
	}
	return out, nil
}

// querier runs a query on the pool (*DB) or in a transaction (txQuerier).
type querier interface {
	query(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

type txQuerier struct{ tx *tx }

func (t txQuerier) query(_ context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.query(q, args...)
}

// ownerPhrases returns the owner's phrases by id, with the fields a match
// copies.
func ownerPhrases(ctx context.Context, q querier, ownerID string) (map[string]phraseRow, error) {
	rows, err := q.query(ctx, "SELECT id, phrase, platform FROM phrases WHERE owner_id = ?", ownerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]phraseRow{}
	for rows.Next() {
		var r phraseRow
		if err := rows.Scan(&r.ID, &r.Phrase, &r.Platform); err != nil {
			return nil, err
		}
		out[r.ID] = r
	}
	return out, rows.Err() // a read: nothing for driverErr to translate
}

func newMatchRow(ownerID string, ph phraseRow, p core.Post, createdUs int64) matchRow {
	r := matchRow{
		ID: newID(), OwnerID: ownerID, PhraseID: ph.ID, Phrase: ph.Phrase, Platform: ph.Platform,
		CreatedUs: createdUs, ExternalID: p.ExternalID, Author: p.Author,
		Body: core.Cut(p.Text, core.MaxPostText), URL: p.URL, Likes: int64(p.Likes), Comments: int64(p.Comments),
		PostedAt: micros(p.PostedAt),
	}
	if p.Title != "" {
		t := p.Title
		r.Title = &t
	}
	return r
}

// Match implements ports.MatchStore.
func (s *MatchStore) Match(ctx context.Context, ownerID, id string) (core.Match, error) {
	var row matchRow
	if err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
		return core.Match{}, translate(err, "match")
	}
	return row.match(), nil
}

// matchColumns lists the columns scanRow reads, in its order.
const matchColumns = `id, owner_id, phrase_id, phrase, platform, created_us, score, intent, reason,
	external_id, author, title, body, url, likes, comments, posted_at`

// scanRow reads one row of matchColumns, then the columns of extra.
// Listing is the hottest read of the API, so it scans by hand rather
// than through gorm's reflection.
func scanRow(rows *sql.Rows, extra ...any) (matchRow, error) {
	var r matchRow
	dest := append([]any{&r.ID, &r.OwnerID, &r.PhraseID, &r.Phrase, &r.Platform, &r.CreatedUs, &r.Score, &r.Intent, &r.Reason,
		&r.ExternalID, &r.Author, &r.Title, &r.Body, &r.URL, &r.Likes, &r.Comments, &r.PostedAt}, extra...)
	err := rows.Scan(dest...)
	return r, err
}

// On SQLite a match is read as one text column, each value written as
// `<byte length>:<value>`, or `-` for NULL: the driver pays a cgo call
// or more per column read, and a page of 26 rows of 17 columns spent
// most of its time there. The columns a match never changes after it is
// stored are packed once, when it is stored, into the column packed,
// and the three the score sets once, when it is stored, into
// packed_score ('---' until then). Building all 17 with octet_length on
// every read cost SQLite about half of a page's time, and packing the
// score's three on every read still half of what was left.
//
// Postgres reads a page's matches the same way: each column of each row
// costs Postgres an output call and the protocol, and this process a
// conversion through database/sql.
var (
	fixedColumns  = []string{"id", "owner_id", "phrase_id", "phrase", "platform", "created_us", "external_id", "author", "title", "body", "url", "likes", "comments", "posted_at"}
	scoredColumns = []string{"score", "intent", "reason"}
	nullable      = map[string]bool{"score": true, "intent": true, "reason": true, "title": true}
	// numeric columns need a cast to text for Postgres's octet_length.
	numeric = map[string]bool{"created_us": true, "likes": true, "comments": true, "posted_at": true, "score": true}
)

// packedExpr is the SQLite expression that packs cols of the table under
// alias (empty for none) as packRow does.
func packedExpr(alias string, cols []string) string { return packedExprOf(false, alias, cols) }

// packedExprOf is packedExpr for SQLite or, with pg, for Postgres.
func packedExprOf(pg bool, alias string, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		length := "octet_length(" + alias + c + ")"
		if pg && numeric[c] {
			length = "octet_length(" + alias + c + "::text)"
		}
		if nullable[c] {
			parts[i] = "COALESCE(" + length + " || ':' || " + alias + c + ", '-')"
		} else {
			parts[i] = length + ", ':', " + alias + c
		}
	}
	// concat builds the value in one allocation; a chain of || copied it
	// once per column.
	return "concat(" + strings.Join(parts, ", ") + ")"
}

// packedRead is what a read of one match selects on SQLite, for the table
// under alias ("m." or ""): the packed fixed columns, packed afresh for
// a row stored without them, then the packed score, then the values of
// extra as they are (in the same concat: appending with || would copy
// the row again).
func packedRead(alias string, extra ...string) string {
	return "concat(" + strings.Join(append([]string{"COALESCE(" + alias + "packed, " + packedExpr(alias, fixedColumns) + ")", alias + "packed_score"}, extra...), ", ") + ")"
}

// packedColumns is packedRead of the matches table without an alias;
// packedColumnsPostgres the same for Postgres, where every row holds its
// packed column (migration 15) and a read does without the fallback:
// Postgres builds the executor's state of the whole expression on every
// run of a cached plan, evaluated or not, and the 14 columns' packing
// cost a page about a tenth of its time there. SQLite compiles a
// prepared statement once.
var (
	packedColumns         = packedRead("")
	packedColumnsPostgres = "concat(packed, packed_score)"
)

// packRow packs r's fixed columns as packedExpr(fixedColumns) does in SQL.
func packRow(r matchRow) string {
	var b strings.Builder
	b.Grow(64 + len(r.ID) + len(r.OwnerID) + len(r.PhraseID) + len(r.Phrase) + len(r.ExternalID) + len(r.Author) + len(r.Body) + len(r.URL))
	str := func(v string) {
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	num := func(n int64) { str(strconv.FormatInt(n, 10)) }
	str(r.ID)
	str(r.OwnerID)
	str(r.PhraseID)
	str(r.Phrase)
	str(r.Platform)
	num(r.CreatedUs)
	str(r.ExternalID)
	str(r.Author)
	if r.Title == nil {
		b.WriteByte('-')
	} else {
		str(*r.Title)
	}
	str(r.Body)
	str(r.URL)
	num(r.Likes)
	num(r.Comments)
	num(r.PostedAt)
	return b.String()
}

// packScore packs a score as packedExpr(scoredColumns) does in SQL.
func packScore(sc core.Score) string {
	v := strconv.Itoa(sc.Value)
	return strconv.Itoa(len(v)) + ":" + v + strconv.Itoa(len(sc.Intent)) + ":" + string(sc.Intent) + strconv.Itoa(len(sc.Reason)) + ":" + sc.Reason
}

// scanMatch reads a row of a match as this database selects it
// (matchColumns on Postgres, packedRead on SQLite), followed by the
// whole numbers extra points to: columns of their own on Postgres,
// values after a '|' each at the end of the packed row on SQLite.
func (db *DB) scanMatch(rows *sql.Rows, extra ...*int64) (core.Match, error) {
	if db.postgres {
		dest := make([]any, len(extra))
		for i, e := range extra {
			dest[i] = e
		}
		r, err := scanRow(rows, dest...)
		return r.match(), err
	}
	var packed string
	if err := rows.Scan(&packed); err != nil {
		return core.Match{}, err
	}
	for i := len(extra) - 1; i >= 0; i-- {
		bar := strings.LastIndexByte(packed, '|')
		if bar < 0 {
			return core.Match{}, fmt.Errorf("packed row lacks value %d of %d after it", i+1, len(extra))
		}
		n, err := strconv.ParseInt(packed[bar+1:], 10, 64)
		if err != nil {
			return core.Match{}, fmt.Errorf("packed row: value %d after it: %w", i+1, err)
		}
		*extra[i], packed = n, packed[:bar]
	}
	return unpack(packed)
}

// packedFields is how many values a row of packedColumns holds.
const packedFields = 17

// unpack reads a row of packedColumns: the fixed columns, then the
// score's.
func unpack(s string) (core.Match, error) {
	var vals [packedFields]string
	var nulls [packedFields]bool
	_, err := splitPacked(s, vals[:], nulls[:])
	return packedMatch(&vals, &nulls), err
}

// splitPacked splits len(vals) values packed as packedExpr packs them
// off the start of s into vals, setting nulls[i] where value i is NULL,
// and returns what follows them in s.
func splitPacked(s string, vals []string, nulls []bool) (string, error) {
	for i := range vals {
		if s == "" {
			return s, fmt.Errorf("packed row ends after %d fields", i)
		}
		if s[0] == '-' {
			vals[i], nulls[i], s = "", true, s[1:]
			continue
		}
		colon := strings.IndexByte(s, ':')
		l, err := strconv.Atoi(s[:max(colon, 0)])
		if colon < 0 || err != nil || l < 0 || colon+1+l > len(s) {
			return s, fmt.Errorf("packed row is malformed at field %d", i)
		}
		vals[i], nulls[i], s = s[colon+1:colon+1+l], false, s[colon+1+l:]
	}
	return s, nil
}

// matchConds is the SQL, each condition led by " AND ", and the values
// of a page's filters on the matches table under alias: platform when
// set, minScore when not negative, intent and phraseID when set.
func matchConds(alias string, platform core.Platform, minScore int, intent core.Intent, phraseID string) (string, []any) {
	var q strings.Builder
	var args []any
	add := func(use bool, cond string, v any) {
		if use {
			q.WriteString(" AND " + alias + cond + " ?")
			args = append(args, v)
		}
	}
	add(platform != "", "platform =", string(platform))
	add(minScore >= 0, "score >=", minScore)
	add(intent != "", "intent =", string(intent))
	add(phraseID != "", "phrase_id =", phraseID)
	return q.String(), args
}

// Matches implements ports.MatchStore.
func (s *MatchStore) Matches(ctx context.Context, ownerID string, f ports.MatchFilter) ([]core.Match, bool, error) {
	conds, args := matchConds("", f.Platform, f.MinScore, "", "")
	from := " FROM matches WHERE owner_id = ?" + conds
	args = append([]any{ownerID}, args...)
	if !f.Before.IsZero() {
		from += " AND created_us < ?"
		args = append(args, micros(f.Before))
	}
	from += " ORDER BY created_us DESC LIMIT ?"
	args = append(args, f.Limit+1)
	out, err := s.page(ctx, from, args, f.Limit+1)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	return out, more, nil
}

// page reads the page of at most n matches that from (the query after
// its columns) selects as one value: the rows of packedColumns joined
// by group_concat (packedColumnsPostgres and string_agg on Postgres).
// The SQLite driver makes several cgo calls for each row it steps, pgx
// decodes a message for each, and database/sql converts every column of
// every row, which cost a page of 26 rows more than the database's own
// work; one row of one column pays them once. A packed row holds a
// fixed number of length-prefixed values, so the rows need nothing
// between them.
func (s *MatchStore) page(ctx context.Context, from string, args []any, n int) ([]core.Match, error) {
	join, cols := "group_concat(p, '')", packedColumns
	if s.db.postgres {
		join, cols = "string_agg(p, '')", packedColumnsPostgres
	}
	rows, err := s.db.queryPage(ctx, "SELECT "+join+" FROM (SELECT "+cols+" AS p"+from+") AS page", args...)
	if err != nil {
		return nil, translate(err, "match")
	}
	defer rows.Close()
	var page sql.NullString
	if rows.Next() {
		if err := rows.Scan(&page); err != nil {
			return nil, translate(err, "match")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err, "match")
	}
	var vals [packedFields]string
	var nulls [packedFields]bool
	out := make([]core.Match, 0, n)
	for rest := page.String; rest != ""; {
		if len(out) == n {
			return nil, fmt.Errorf("a page of at most %d matches held more", n)
		}
		if rest, err = splitPacked(rest, vals[:], nulls[:]); err != nil {
			return nil, err
		}
		out = append(out, packedMatch(&vals, &nulls))
	}
	// The rows are joined in the order the subquery yields them, which
	// neither database promises: sort them when it ever differs.
	newestFirst := func(a, b core.Match) int { return b.CreatedAt.Compare(a.CreatedAt) }
	if !slices.IsSortedFunc(out, newestFirst) {
		slices.SortStableFunc(out, newestFirst)
	}
	return out, nil
}

// packedMatch is the match of a row of packedColumns split into vals
// and nulls.
func packedMatch(vals *[packedFields]string, nulls *[packedFields]bool) core.Match {
	num := func(i int) int64 { n, _ := strconv.ParseInt(vals[i], 10, 64); return n }
	m := core.Match{
		ID: vals[0], OwnerID: vals[1], PhraseID: vals[2], Phrase: vals[3],
		Platform: core.Platform(vals[4]), CreatedAt: fromMicros(num(5)),
		Post: core.Post{
			ExternalID: vals[6], Author: vals[7], Title: vals[8], Text: vals[9], URL: vals[10],
			Likes: int(num(11)), Comments: int(num(12)), PostedAt: fromMicros(num(13)),
		},
	}
	if !nulls[14] {
		m.Score = &core.Score{Value: int(num(14)), Intent: core.Intent(vals[15]), Reason: vals[16]}
	}
	return m
}

// ClaimMatch implements ports.MatchStore.
func (s *MatchStore) ClaimMatch(ctx context.Context, ownerID, id string, lease time.Duration) (core.Match, bool, error) {
	now := s.db.gorm.NowFunc()
	ms, err := s.claim(ctx, "UPDATE matches SET lease_until = ? WHERE id = ? AND owner_id = ? AND score IS NULL AND lease_until < ? RETURNING "+s.db.returned(),
		micros(now.Add(lease)), id, ownerID, micros(now))
	if err != nil {
		return core.Match{}, false, err
	}
	if len(ms) == 1 {
		return ms[0], true, nil
	}
	m, err := s.Match(ctx, ownerID, id)
	return m, false, err
}

// ClaimUnscored implements ports.MatchStore.
func (s *MatchStore) ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error) {
	now := s.db.gorm.NowFunc()
	// SKIP LOCKED lets replicas on Postgres claim disjoint rows at once;
	// SQLite has one writer, so the plain form is already exclusive.
	lock := ""
	if s.db.postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// On Postgres the claim runs on the pool of index walks (see Open):
	// each score leaves an entry for a dead row in matches_unscored
	// until a vacuum, which on a table this size comes a minute or more
	// apart. An index scan marks the entries it finds dead and passes
	// over them the next time; the bitmap scan the planner prefers
	// visits their rows again on every claim, so the claim would slow
	// down as scoring goes on (docs/adr/0006-delivery-queue-on-postgres.md).
	rows, err := s.db.queryPage(ctx, `UPDATE matches SET lease_until = ? WHERE id IN (
		SELECT id FROM matches WHERE score IS NULL AND lease_until < ? ORDER BY created_us LIMIT ?`+lock+`)
		RETURNING `+s.db.returned(), micros(now.Add(lease)), micros(now), limit)
	return s.db.collectReturned(rows, err)
}

func (s *MatchStore) claim(ctx context.Context, q string, args ...any) ([]core.Match, error) {
	rows, err := s.db.with(ctx).Raw(q, args...).Rows()
	return s.db.collectReturned(rows, err)
}

// returned is what a RETURNING clause reads of a match: packedColumns on
// SQLite, where each column read is a cgo call and the scoring path
// reads a few hundred rows per statement, matchColumns on Postgres.
func (db *DB) returned() string {
	if db.postgres {
		return matchColumns
	}
	return packedColumns
}

// collectReturned reads every row of db.returned() and closes rows.
func (db *DB) collectReturned(rows *sql.Rows, err error) ([]core.Match, error) {
	return collect(rows, err, func(rows *sql.Rows) (core.Match, error) { return db.scanMatch(rows) })
}

// collectMatches reads every row of matchColumns and closes rows.
func collectMatches(rows *sql.Rows, err error) ([]core.Match, error) {
	return collect(rows, err, func(rows *sql.Rows) (core.Match, error) {
		r, err := scanRow(rows)
		return r.match(), err
	})
}

// collect reads every row of rows with scan and closes rows.
func collect(rows *sql.Rows, err error, scan func(*sql.Rows) (core.Match, error)) ([]core.Match, error) {
	if err != nil {
		return nil, translate(err, "match")
	}
	defer rows.Close()
	var out []core.Match
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, translate(err, "match")
		}
		out = append(out, m)
	}
	return out, translate(rows.Err(), "match")
}
