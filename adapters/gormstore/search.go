package gormstore

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// The search of matches: each dialect's index of a match's title, text
// and author (migration 23), asked by the listings (Matches,
// TriageStore.Inbox) and paged and filtered as they are. A term's words
// hold only letters, numbers and marks (core.Search) and reach the
// database as bound values: no text of the client's is read as syntax.
//
// On Postgres a search is one more condition, on the stored search_doc.
// On SQLite the index drives the walk: the listing walks the owner's
// hits (the owner's partition of the index) newest first by docid (the match's rowid; match_search keeps its lists in
// descending docid order) and stops at the page's end. Asking the index
// of each row of the owner's instead would cost a common word's every
// hit, or the owner's every match for a rare word, whatever the page.
// Docids run newest first because an owner's matches get rowids in
// created_us order: SaveMatches inserts them so, one writer at a time,
// and a new rowid is past every other (TestRowidsFollowCreated).

// searchWalk is how a listing of the matches row named alias finds a
// search's matches: tables to read before the listing's own, conditions
// and their arguments, and the column that lists newest first when it is
// not the listing's own ("" to keep it).
type searchWalk struct {
	from  string
	where []string
	args  []any
	order string
}

// searchWalk returns the walk of s for a listing of ownerID's matches
// made before before and after after (zero: no bound). byDoc lets SQLite
// walk the index's hits; a listing ordered otherwise (by triage or score
// time) asks it of each row.
func (db *DB) searchWalk(alias, ownerID string, s core.Search, before, after time.Time, byDoc bool) searchWalk {
	var w searchWalk
	switch {
	case db.postgres:
		// Every term is a phrase query (one word is a phrase of one);
		// && and !! combine them.
		parts := make([]string, len(s.Terms))
		for i, t := range s.Terms {
			parts[i] = "phraseto_tsquery('simple', ?)"
			if t.Exclude {
				parts[i] = "(!!" + parts[i] + ")"
			}
			w.args = append(w.args, strings.Join(t.Words, " "))
		}
		w.where = []string{alias + ".search_doc @@ (" + strings.Join(parts, " && ") + ")"}
	case !byDoc:
		w.where = []string{alias + ".rowid IN (SELECT docid FROM match_search WHERE match_search MATCH ? AND lid = " + searchLid + ")"}
		w.args = []any{ftsQuery(s), ownerID}
	default:
		// CROSS JOIN keeps match_search the outer loop.
		w.from = "match_search CROSS JOIN "
		w.where = []string{"match_search MATCH ?", "match_search.lid = " + searchLid, alias + ".rowid = match_search.docid"}
		w.args = []any{ftsQuery(s), ownerID}
		w.order = "match_search.docid"
		// The owner's first match at or past before, and last at or
		// before after, bound the docids (a bound the index uses);
		// the listing's own created_us conditions still decide.
		if !before.IsZero() {
			w.where = append(w.where, `match_search.docid < COALESCE((SELECT rowid FROM matches
				WHERE owner_id = ? AND created_us >= ? ORDER BY created_us LIMIT 1), 9223372036854775807)`)
			w.args = append(w.args, ownerID, micros(before))
		}
		if !after.IsZero() {
			w.where = append(w.where, `match_search.docid > COALESCE((SELECT rowid FROM matches
				WHERE owner_id = ? AND created_us <= ? ORDER BY created_us DESC LIMIT 1), 0)`)
			w.args = append(w.args, ownerID, micros(after))
		}
	}
	return w
}

// searchLid is the owner's partition of match_search (migration 30),
// the owner's id its argument: the index reads that owner's lists only,
// so a search costs what the owner's matches hold, whatever other
// owners' hold.
const searchLid = "(SELECT lid FROM match_search_owners WHERE owner_id = ?)"

// ftsQuery writes s in FTS4's enhanced query syntax: each term a quoted
// phrase, the terms to find joined by AND, each excluded one after NOT,
// which binds tighter than AND (so "a" AND "b" NOT "c" is a, and b
// without c). Quoted, a word such as OR, NEAR or title is a word, not an
// operator or a column.
func ftsQuery(s core.Search) string {
	var find, leave []string
	for _, t := range s.Terms {
		q := `"` + strings.Join(t.Words, " ") + `"`
		if t.Exclude {
			leave = append(leave, " NOT "+q)
		} else {
			find = append(find, q)
		}
	}
	return strings.Join(find, " AND ") + strings.Join(leave, "")
}

// searchPageColumns are pageColumns of the matches row m: match_search
// has columns of the same names.
var searchPageColumns = "m." + strings.ReplaceAll(pageColumns, ", ", ", m.")

// searchMatches is Matches for a search.
func (s *MatchStore) searchMatches(ctx context.Context, ownerID string, f ports.MatchFilter) ([]core.Match, bool, error) {
	w := s.db.searchWalk("m", ownerID, f.Search, f.Before, time.Time{}, true)
	where, args := append([]string{"m.owner_id = ?"}, w.where...), append([]any{ownerID}, w.args...)
	cond := func(use bool, c string, v any) {
		if use {
			where, args = append(where, c), append(args, v)
		}
	}
	cond(f.Platform != "", "m.platform = ?", string(f.Platform))
	cond(f.MinScore >= 0, "m.score >= ?", f.MinScore)
	cond(!f.Before.IsZero(), "m.created_us < ?", micros(f.Before))
	rows, err := scanAll(s.db.with(ctx).Raw("SELECT "+searchPageColumns+" FROM "+w.from+"matches m WHERE "+strings.Join(where, " AND ")+
		" ORDER BY "+cmp.Or(w.order, "m.created_us")+" DESC LIMIT ?", append(args, f.Limit+1)...), (*matchRow).pageFields)
	if err != nil {
		return nil, false, translate(err, "match")
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	return convert(rows, func(r matchRow) core.Match {
		r.OwnerID = ownerID
		return r.match()
	}), more, nil
}
