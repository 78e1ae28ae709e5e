package gormstore

import (
	"strings"

	"github.com/earshothq/earshot/core"
)

// The search of matches: each dialect's index of a match's title, text
// and author (migration 24) and the condition that asks it. A search
// adds one condition to a listing, so it is paged, filtered and ordered
// as the listing is (Matches, TriageStore.Inbox).
//
// A term's words reach the database only as bound values, in a query
// written here from core.Search, whose words hold nothing but letters,
// numbers and marks: no text of the client's is read as syntax.

// searchCond returns the condition on the matches row named alias that
// keeps the matches s finds, with its arguments. s must not be zero.
func (db *DB) searchCond(alias string, s core.Search) (string, []any) {
	if db.postgres {
		// Every term is a phrase query (one word is a phrase of one);
		// && and !! combine them. The document is the stored search_doc.
		parts, args := make([]string, len(s.Terms)), make([]any, len(s.Terms))
		for i, t := range s.Terms {
			parts[i] = "phraseto_tsquery('simple', ?)"
			if t.Exclude {
				parts[i] = "(!!" + parts[i] + ")"
			}
			args[i] = strings.Join(t.Words, " ")
		}
		return alias + ".search_doc @@ (" + strings.Join(parts, " && ") + ")", args
	}
	return alias + ".rowid IN (SELECT docid FROM match_search WHERE match_search MATCH ?)", []any{ftsQuery(s)}
}

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
			leave = append(leave, q)
		} else {
			find = append(find, q)
		}
	}
	out := strings.Join(find, " AND ")
	for _, q := range leave {
		out += " NOT " + q
	}
	return out
}
