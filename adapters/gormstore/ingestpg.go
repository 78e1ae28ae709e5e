package gormstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// maxRoundPosts bounds the posts of the batches stored in one statement.
const maxRoundPosts = 1000

// saveRounds lines up the batches of each owner and platform on
// Postgres. Batches of one owner take their created_us in turn (see
// SaveMatches), each holding the owner's row from its stamp to its
// commit, and the commit waits for the WAL to reach the disk: one batch
// at a time, that flush would cap each owner's batches a second
// (docs/adr/0008-ingest-batches.md). So a batch that finds another of
// its owner under way waits for it, and the batches that waited go in
// together, one statement and one commit, led by the first of them.
type saveRounds struct {
	mu      sync.Mutex
	waiting map[string]*saveLine
}

// saveLine is one owner and platform's line: busy while a round is
// being stored, with the batches that came meanwhile.
type saveLine struct {
	busy    bool
	pending []*pendingSave
}

type pendingSave struct {
	batch []ports.PostMatches
	res   ports.SaveResult
	err   error
	done  chan struct{} // closed once res and err are set
	lead  chan struct{} // closed when this batch is to store the next round
}

// saveTogether stores batch, alone or with the owner's batches that
// waited with it. A caller whose context ends while its batch waits
// still gets the outcome: its batch may be in a round already.
func (s *MatchStore) saveTogether(ctx context.Context, ownerID string, platform core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	key := ownerID + "\x00" + string(platform)
	p := &pendingSave{batch: batch, done: make(chan struct{}), lead: make(chan struct{})}
	r := &s.saves
	r.mu.Lock()
	line := r.waiting[key]
	if line == nil {
		line = &saveLine{}
		r.waiting[key] = line
	}
	line.pending = append(line.pending, p)
	if line.busy {
		r.mu.Unlock()
		select {
		case <-p.done:
			return p.res, p.err
		case <-p.lead:
		}
		r.mu.Lock()
	}
	line.busy = true
	// This batch is first in line: take it and those behind it, up to
	// maxRoundPosts.
	n, posts := 0, 0
	for n < len(line.pending) && (n == 0 || posts+len(line.pending[n].batch) <= maxRoundPosts) {
		posts += len(line.pending[n].batch)
		n++
	}
	round := line.pending[:n:n]
	line.pending = line.pending[n:]
	r.mu.Unlock()

	s.saveMatchesPostgres(context.WithoutCancel(ctx), ownerID, platform, round)

	r.mu.Lock()
	if len(line.pending) > 0 {
		close(line.pending[0].lead)
	} else {
		line.busy = false
		delete(r.waiting, key)
	}
	r.mu.Unlock()
	for _, q := range round[1:] {
		close(q.done)
	}
	return p.res, p.err
}

// saveMatchesPostgres stores a round of batches with one statement run
// on its own, its own transaction: the posts' insert, the stamp (as
// stampMatches), the matches' insert (packed as packRow does, see
// packedColumnsPostgres) and the phrase counters. The
// owner's row is then locked from the stamp to the commit within the
// server, with no round trip to this process in between: stamped in a
// transaction of five statements, a batch held the lock across round
// trips and, when the machine was busy, the owner's next batches queued
// behind it for seconds. The owner's row is locked before any phrase's,
// as everywhere else, since the phrases' UPDATE reads the stamp. The
// phrases are read first, outside the statement. Each batch of the
// round gets its own counts and matches, as if stored one after the
// other: a post in two batches is the earlier's.
func (s *MatchStore) saveMatchesPostgres(ctx context.Context, ownerID string, platform core.Platform, round []*pendingSave) {
	fail := func(err error) {
		if err = s.db.driverErr(err); errors.Is(err, gorm.ErrForeignKeyViolated) {
			err = sql.ErrNoRows // the owner is missing (or a phrase went meanwhile)
		}
		for _, p := range round {
			p.res, p.err = ports.SaveResult{}, err
		}
	}
	now := s.db.gorm.NowFunc().UnixMicro()
	first := map[string]int{} // external id: the batch whose post it is
	var posts, ids, phraseIDs, phraseTexts, externalIDs, authors, bodies, urls []string
	var titles []*string
	var likes, comments, posted []int64
	var of []int // the batch of each match
	var phrases map[string]phraseRow
	for b, p := range round {
		for _, pm := range p.batch {
			if _, dup := first[pm.Post.ExternalID]; dup {
				continue // a later copy is known already
			}
			first[pm.Post.ExternalID] = b
			posts = append(posts, pm.Post.ExternalID)
			if len(pm.PhraseIDs) > 0 && phrases == nil {
				var err error
				if phrases, err = ownerPhrases(ctx, s.db, ownerID); err != nil {
					fail(err)
					return
				}
			}
			for _, pid := range pm.PhraseIDs {
				ph, ok := phrases[pid]
				if !ok || ph.Platform != string(platform) {
					continue // deleted meanwhile, another owner's or another platform's
				}
				m := newMatchRow(ownerID, ph, pm.Post, 0)
				ids, phraseIDs, phraseTexts, externalIDs = append(ids, m.ID), append(phraseIDs, m.PhraseID), append(phraseTexts, m.Phrase), append(externalIDs, m.ExternalID)
				authors, titles, bodies, urls = append(authors, m.Author), append(titles, m.Title), append(bodies, m.Body), append(urls, m.URL)
				likes, comments, posted = append(likes, m.Likes), append(comments, m.Comments), append(posted, m.PostedAt)
				of = append(of, b)
			}
		}
	}
	// m: the matches of posts that were new; k numbers them from 1.
	rows, err := s.db.query(ctx, `WITH np AS (
			INSERT INTO posts (owner_id, platform, external_id, created_at)
			SELECT $1, $2, e, $3 FROM unnest($4::text[]) AS e
			ON CONFLICT DO NOTHING RETURNING external_id
		), m AS (
			SELECT v.*, row_number() OVER (ORDER BY v.ord) AS k
			FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
				$13::bigint[], $14::bigint[], $15::bigint[])
				WITH ORDINALITY AS v(id, phrase_id, phrase, external_id, author, title, body, url, likes, comments, posted_at, ord)
			WHERE v.external_id IN (SELECT external_id FROM np)
		), s AS (
			UPDATE owners SET last_match_us = GREATEST(last_match_us + (SELECT count(*) FROM m), $3 + (SELECT count(*) FROM m) - 1)
			WHERE id = $1 AND EXISTS (SELECT 1 FROM m)
			RETURNING last_match_us - (SELECT count(*) FROM m) AS base
		), p AS (
			UPDATE phrases SET matches = phrases.matches + c.n
			FROM s, (SELECT phrase_id, count(*) AS n FROM m GROUP BY phrase_id) AS c WHERE phrases.id = c.phrase_id
		), ins AS (
			INSERT INTO matches (`+strings.Join(fixedColumns, ", ")+`, packed)
			SELECT r.*, `+packedExprOf(true, "r.", fixedColumns)+` FROM (
				SELECT m.id, $1::text AS owner_id, m.phrase_id, m.phrase, $2::text AS platform, s.base + m.k AS created_us,
					m.external_id, m.author, m.title, m.body, m.url, m.likes, m.comments, m.posted_at
				FROM s, m) AS r
			RETURNING id, created_us
		)
		SELECT external_id, 0::bigint, false FROM np UNION ALL SELECT id, created_us, true FROM ins`,
		ownerID, string(platform), now, posts,
		ids, phraseIDs, phraseTexts, externalIDs, authors, titles, bodies, urls, likes, comments, posted)
	if err != nil {
		fail(err)
		return
	}
	defer rows.Close()
	created := map[string]int64{}
	saved := make([]int, len(round))
	for rows.Next() {
		var id string
		var us int64
		var match bool
		if err := rows.Scan(&id, &us, &match); err != nil {
			fail(err)
			return
		}
		if match {
			created[id] = us
		} else {
			saved[first[id]]++
		}
	}
	if err := rows.Err(); err != nil {
		fail(err)
		return
	}
	for b, p := range round {
		p.res = ports.SaveResult{Saved: saved[b], Known: len(p.batch) - saved[b]}
	}
	for i, id := range ids {
		us, ok := created[id]
		if !ok {
			continue // its post was known
		}
		ph := phrases[phraseIDs[i]]
		r := matchRow{ID: id, OwnerID: ownerID, PhraseID: ph.ID, Phrase: ph.Phrase, Platform: ph.Platform, CreatedUs: us,
			ExternalID: externalIDs[i], Author: authors[i], Title: titles[i], Body: bodies[i], URL: urls[i],
			Likes: likes[i], Comments: comments[i], PostedAt: posted[i]}
		res := &round[of[i]].res
		res.Matches = append(res.Matches, r.match())
	}
}
